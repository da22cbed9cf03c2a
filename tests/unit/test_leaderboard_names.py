"""`[leaderboard] name`: validate accepts exactly the names a marker block can hold."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.render.markers import begin_marker, end_marker, replace_block
from reconciler.specs.loader import LoadResult, discover, load_specs
from reconciler.specs.marker_names import marker_name_problem


def load_board(root: Path, name: str) -> LoadResult:
    path = root / "specs" / "benchmarks" / "tb.toml"
    path.parent.mkdir(parents=True)
    # a JSON string is a TOML basic string: `\t` and `\u202e` arrive as the characters themselves
    path.write_text(f'[benchmark]\nref = "tb"\n\n[leaderboard]\noutput = "README.md"\nname = {json.dumps(name)}\n')
    return load_specs(discover([root / "specs"]), root, "specs")


@pytest.mark.parametrize(
    "name",
    ["tb board", "tb\tboard", "tb>board", "tb--board", "--", "tb\u202eboard", ""],
    ids=["space", "tab", "gt", "double-dash", "only-dashes", "rlo", "empty"],
)
def test_validate_refuses_a_name_no_marker_can_hold_at_its_line_saying_what_is_allowed(
    tmp_path: Path, name: str
) -> None:
    result = load_board(tmp_path, name)
    (error,) = result.errors
    assert result.benchmark_specs == []
    assert (error.file, error.line, error.key) == ("specs/benchmarks/tb.toml", 6, "leaderboard.name")
    assert "printable characters other than whitespace and >, with no --" in error.message


@pytest.mark.parametrize("name", ["tb", "tb-main", "hle@v2", "boards/tb.1", "tb-", "-tb", "тест", "a<b"])
def test_validate_accepts_a_name_without_whitespace_gt_or_double_dash(tmp_path: Path, name: str) -> None:
    result = load_board(tmp_path, name)
    assert not result.errors
    (spec,) = result.benchmark_specs
    assert spec.leaderboard is not None and spec.leaderboard.name == name


@given(st.text(min_size=1, max_size=30))
def test_every_name_validate_accepts_is_found_between_its_markers(name: str) -> None:
    if marker_name_problem(name) is None:
        text = f"intro\n{begin_marker(name)}\nold\n{end_marker(name)}\n"
        assert (
            replace_block(text, name, "new", path="README.md")
            == f"intro\n{begin_marker(name)}\nnew\n{end_marker(name)}\n"
        )
