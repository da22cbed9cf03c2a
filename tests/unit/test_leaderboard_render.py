"""Leaderboard Markdown and SVG: golden output, determinism, and hostile names."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from reconciler.render.leaderboard import order_rows, parse_rows, render_markdown, render_svg

GOLDEN = Path(__file__).parent / "golden"

ENTRIES = [
    {
        "rank": 1,
        "tied": True,
        "task_set": "full",
        "resolved_version": "2.1.0",
        "harness": "terminus-2",
        "model": "openai/gpt-5.2",
        "pass_at_1": {"value": 0.625, "ci_low": 0.5156, "ci_high": 0.7225, "n": 80, "method": "wilson"},
        "pass_at_k": [{"k": 1, "value": 0.625}],
        "cost_per_task": 0.4213,
        "mean_duration_seconds": 192.4,
        "tokens_per_task": 1234567,
        "run": {"id": "r1", "name": "bright-otter-1", "platform_url": "http://127.0.0.1:1/benchmarks/runs/r1"},
    },
    {
        "rank": 1,
        "tied": True,
        "task_set": "full",
        "resolved_version": "2.1.0",
        "harness": "terminus-2",
        "model": "anthropic/claude-sonnet-4",
        "pass_at_1": {"value": 0.575, "ci_low": 0.4661, "ci_high": 0.6772, "n": 80, "method": "wilson"},
        "pass_at_k": [{"k": 1, "value": 0.575}],
        "cost_per_task": 0.3,
        "mean_duration_seconds": 75,
        "tokens_per_task": 98000,
        "run": {"id": "r1", "name": "bright-otter-1", "platform_url": "http://127.0.0.1:1/benchmarks/runs/r1"},
    },
    {
        "rank": 3,
        "tied": False,
        "task_set": "full",
        "resolved_version": "2.1.0",
        "harness": None,
        "model": "evil|model`<!-- /reconciler:leaderboard tb -->\nname",
        "pass_at_1": {"value": 0.2, "ci_low": 0.1, "ci_high": 0.3, "n": 80, "method": "wilson"},
        "pass_at_k": [],
        "cost_per_task": None,
        "mean_duration_seconds": None,
        "tokens_per_task": None,
        "run": {"id": "r2", "name": "calm-heron-2", "platform_url": "javascript:alert(1)"},
    },
    "not an object",
]


def markdown(rank_by: str = "pass_at_1") -> str:
    rows = order_rows(parse_rows(ENTRIES), rank_by)  # type: ignore[arg-type]
    return render_markdown(
        title="Terminal-Bench 2.1 leaderboard",
        benchmark_key="terminal-bench-2-1",
        spec_path="specs/benchmarks/terminal-bench-2-1.toml",
        rows=rows,
        rank_by=rank_by,  # type: ignore[arg-type]
        scope="workspace",
    )


def test_the_markdown_matches_the_golden_file() -> None:
    assert markdown() == (GOLDEN / "leaderboard.md").read_text(encoding="utf-8")


def test_rendering_twice_gives_identical_bytes() -> None:
    assert markdown() == markdown()
    rows = parse_rows(ENTRIES)
    assert render_svg(title="TB", rows=rows) == render_svg(title="TB", rows=rows)


def test_a_hostile_model_name_cannot_break_the_table_or_forge_a_marker() -> None:
    text = markdown()
    table_lines = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table_lines) == 4  # header + 3 rows: the newline in the name did not start a row
    # every row has exactly the header's 10 unescaped pipes: nothing in a name adds a column
    assert {len(re.findall(r"(?<!\\)\|", line)) for line in table_lines} == {10}
    assert "<!-- /reconciler" not in text
    assert "javascript:" not in text  # only http(s) run links become links


def test_ties_are_marked_and_explained_in_a_footnote() -> None:
    text = markdown()
    assert "| 1\\* | openai/gpt-5.2 (terminus-2)" in text
    assert "cannot separate it from the best" in text


def test_ranking_by_cost_reranks_cheapest_first_with_unknowns_last() -> None:
    rows = order_rows(parse_rows(ENTRIES), "cost_per_task")
    assert [(r.model.split("/")[0], r.rank) for r in rows] == [("anthropic", 1), ("openai", 2), ("evil|model`<!-- ", 3)]


def test_the_svg_is_well_formed_and_self_contained() -> None:
    svg = render_svg(title="TB <&>", rows=parse_rows(ENTRIES))
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", "")
    assert "<script" not in svg and "@import" not in svg


def test_an_empty_leaderboard_says_how_to_get_on_it() -> None:
    text = render_markdown(title="T", benchmark_key="k", spec_path="s", rows=[], rank_by="pass_at_1", scope="workspace")
    assert "No eligible runs yet" in text
