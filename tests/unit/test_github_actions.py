"""Step outputs, the job summary and annotations, as GitHub Actions reads them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconciler.errors import ConfigError
from reconciler.github.actions import (
    SUMMARY_LIMIT,
    append_summary,
    fit_summary,
    output_block,
    set_outputs,
)
from reconciler.workflow_commands import annotation


def parse_outputs(text: str) -> dict[str, str]:
    """GitHub's reading of GITHUB_OUTPUT: `name<<DELIM` ... `DELIM` blocks."""
    out: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        name, delim = lines[i].split("<<", 1)
        j = lines.index(delim, i + 1)
        out[name] = "\n".join(lines[i + 1 : j])
        i = j + 1
    return out


def test_outputs_use_the_multiline_delimiter_form(tmp_path: Path) -> None:
    path = tmp_path / "output"
    env = {"GITHUB_OUTPUT": str(path)}
    assert set_outputs({"has_changes": "true", "estimated_cost": "12.50"}, env)
    text = path.read_text()
    assert re.match(r"^has_changes<<ghadelimiter_[0-9a-f]{32}\ntrue\nghadelimiter_[0-9a-f]{32}\n", text)
    assert parse_outputs(text) == {"has_changes": "true", "estimated_cost": "12.50"}


def test_a_multiline_value_cannot_inject_another_output(tmp_path: Path) -> None:
    path = tmp_path / "output"
    evil = "x\nexitcode<<EOF\n0\nEOF"
    set_outputs({"note": evil, "exitcode": "1"}, {"GITHUB_OUTPUT": str(path)})
    assert parse_outputs(path.read_text()) == {"note": evil, "exitcode": "1"}


def test_a_delimiter_found_in_the_value_is_replaced() -> None:
    block = output_block("x", "a\nD\nb", delimiter="D")
    assert not block.startswith("x<<D\n")
    assert parse_outputs(block) == {"x": "a\nD\nb"}


def test_outputs_append_to_what_earlier_steps_wrote(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier=1\n")
    set_outputs({"exitcode": "0"}, {"GITHUB_OUTPUT": str(path)})
    assert path.read_text().startswith("earlier=1\nexitcode<<")


def test_outputs_are_skipped_without_github_output() -> None:
    assert set_outputs({"exitcode": "0"}, {}) is False


def test_summary_is_appended_with_a_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("# before\n")
    assert append_summary("### plan", {"GITHUB_STEP_SUMMARY": str(path)})
    assert path.read_text() == "# before\n### plan\n"


def test_summary_over_one_mebibyte_is_cut_with_a_note() -> None:
    text = ("row ü\n" * 300_000)[: SUMMARY_LIMIT * 2]
    fitted = fit_summary(text)
    assert len(fitted.encode()) <= SUMMARY_LIMIT
    assert fitted.endswith("has all of it._\n")


def test_annotation_escapes_properties_and_message() -> None:
    line = annotation("error", "bad\nvalue 100%", file="specs/a,b.toml", line=3, col=2, title="X:Y")
    assert line == "::error file=specs/a%2Cb.toml,line=3,col=2,title=X%3AY::bad%0Avalue 100%25"


def test_annotation_without_a_place_is_a_plain_command() -> None:
    assert annotation("warning", "no review") == "::warning::no review"


@pytest.mark.parametrize("variable", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_a_step_file_that_cannot_be_written_is_named(tmp_path: Path, variable: str) -> None:
    env = {variable: str(tmp_path)}  # a folder where the runner's file should be
    with pytest.raises(ConfigError, match=f"{variable} names {tmp_path}, which cannot be written"):
        if variable == "GITHUB_OUTPUT":
            set_outputs({"exitcode": "0"}, env)
        else:
            append_summary("# plan\n", env)
