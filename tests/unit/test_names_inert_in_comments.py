"""Spec ids and paths in the bot's comments are code spans: no name renders as live Markdown.

A spec id is a file name, so it may read `![No changes](fake.png)`, `[Approved](..)`, `**b**`
or `runs/@octo-org/reviewers` (a team mention posted by the bot). Each comment is rendered from
such names and from plain ones; outside code spans the two must read alike (markdown_spans).
"""

from __future__ import annotations

import pytest

from reconciler.core.cells import code_cell
from reconciler.core.cost import Cost
from reconciler.core.plan import Action, ActionKind, Plan
from reconciler.core.review import Review, SpecChange
from reconciler.core.run_results import AgentReport, AgentResults, Comparison, RunReport
from reconciler.github.comments import validation_failed_body
from reconciler.github.results_comment import results_body, run_section
from reconciler.render.leaderboard import render_markdown as render_leaderboard
from reconciler.render.plan_markdown import render_markdown
from reconciler.render.review import render_review_markdown
from reconciler.specs.diagnostics import Diagnostic
from tests.markdown_spans import assert_inert, outside_code_spans

PLAIN = "runs/plain"
HOSTILE = [
    "runs/[Approved](https://evil.example/ok)",
    "runs/![No changes](https://evil.example/fake.png)",
    "runs/@octo-org/reviewers",
    "runs/~~gone~~ **bold**",
    "runs/a`b``c",
    "runs/a|b|c",
    "runs/x --> <!-- y <b>",
]
IDS = ["link", "image", "mention", "emphasis", "backtick", "pipe", "comment-end"]
LINKS = {"server_url": "https://github.com", "repository": "acme/evals", "ref": "main"}
COST = Cost(tasks=90, agents=1, attempts_per_task=1, attempts=90, estimated_usd=9.0, estimate_complete=True)


def test_code_cell_is_a_code_span() -> None:
    assert code_cell("runs/tb smoke@1") == "`runs/tb smoke@1`"


def test_code_cell_of_no_text_is_empty() -> None:
    assert (code_cell(""), code_cell(" \n ")) == ("", "")


def test_code_cell_turns_a_backtick_into_a_quote_so_it_cannot_close_the_span() -> None:
    assert code_cell("a`b``c") == "`a'b''c`"


def test_code_cell_escapes_a_pipe_for_the_table_row_it_sits_in() -> None:
    assert code_cell("a|b") == "`a\\|b`"


def test_code_cell_keeps_angle_brackets_as_entities_so_it_cannot_end_an_html_comment() -> None:
    assert code_cell("x --> <!-- y") == "`x --&gt; &lt;!-- y`"


def test_code_cell_shows_control_and_bidi_characters_as_escapes() -> None:
    assert code_cell("a\u202eb\x1bc") == "`a\\u202eb\\x1bc`"


def plan_comment(spec_id: str) -> str:
    actions = (
        Action(kind=ActionKind.SUBMIT, spec_id=spec_id, reason="new spec", run_name="tb-1", cost=COST),
        Action(kind=ActionKind.BLOCKED, spec_id=f"{spec_id}-2", reason="over the attempt limit"),
    )
    return render_markdown(Plan(owner="acme/evals", actions=actions, desired_digest="d", observed_digest="o"))


@pytest.mark.parametrize("spec_id", HOSTILE, ids=IDS)
def test_a_spec_id_in_the_plan_table_and_blocked_list_is_only_inside_code_spans(spec_id: str) -> None:
    assert_inert(plan_comment(spec_id), plan_comment(PLAIN))


def review_section(spec_id: str) -> str:
    changes = (
        SpecChange("renamed", f"specs/{spec_id}.toml", spec_id, "run", old_path=f"specs/{spec_id}-old.toml"),
        SpecChange("added", f"specs/{spec_id}-2.toml", f"{spec_id}-2", "run", old_spec_id=f"{spec_id}-old"),
    )
    return render_review_markdown(Review(f"origin/{spec_id}", "0123456789abcdef", changes), None)


@pytest.mark.parametrize("spec_id", HOSTILE, ids=IDS)
def test_spec_ids_and_paths_in_the_review_section_are_only_inside_code_spans(spec_id: str) -> None:
    assert_inert(review_section(spec_id), review_section(PLAIN))


def results_comment(name: str) -> str:
    agent = AgentResults(
        agent_index=0,
        harness="terminus-2",
        model="openai/gpt-5.2",
        outcomes={"t1": (True,), "t2": (False,)},
        cost_per_task=0.5,
        mean_duration_seconds=10.0,
        tokens_per_task=100.0,
    )
    comparison = Comparison(previous_run=f"{name}-before", delta=0.1, paired=2, b=1, c=0, p_value=1.0)
    common = {"spec_path": "specs/x.toml", "run_id": "r1", "status": "finished", "terminal": True}
    finished = RunReport.model_validate(
        common
        | {
            "spec_id": name,
            "run_name": f"{name}-run",
            "platform_url": "https://platform.example/runs/r1",
            "agents": (AgentReport(results=agent, rank=1, comparison=comparison),),
            "leaderboard": f"leaderboards/{name}.md",
        }
    )
    superseded = RunReport.model_validate(
        common | {"spec_id": f"{name}-2", "run_name": f"{name}-old", "superseded_by": f"{name}-new"}
    )
    return results_body([finished, superseded], commit="c" * 40, **LINKS)


@pytest.mark.parametrize("name", HOSTILE, ids=IDS)
def test_names_and_leaderboard_paths_in_the_results_comment_are_only_inside_code_spans(name: str) -> None:
    assert_inert(results_comment(name), results_comment(PLAIN))


def test_a_leaderboard_path_cannot_end_its_link_or_mention_a_team() -> None:
    """The path passes validate; as link text and URL it would add a link and an @mention."""
    path = "leaderboards/tb](https://evil.example/x) @octo-org/team [.md"
    common = {"spec_id": "runs/tb", "spec_path": "specs/runs/tb.toml", "run_id": "r1", "run_name": "tb-1"}
    run = RunReport.model_validate(common | {"status": "finished", "terminal": True, "leaderboard": path})
    assert run_section(run, **LINKS).endswith(
        "Leaderboard: [`leaderboards/tb](https://evil.example/x) @octo-org/team [.md`]"
        "(https://github.com/acme/evals/blob/main/leaderboards/tb%5D%28https%3A//evil.example/x%29%20%40octo-org/team%20%5B.md)\n"
    )


def validation_comment(file: str) -> str:
    diagnostic = Diagnostic(file=file, line=1, col=1, key="", message="bad spec", code="BAD_SPEC_ID")
    return validation_failed_body([diagnostic])


@pytest.mark.parametrize("name", HOSTILE, ids=IDS)
def test_a_file_name_in_the_validation_comment_is_only_inside_a_code_span(name: str) -> None:
    assert_inert(validation_comment(f"specs/{name}.toml"), validation_comment(f"specs/{PLAIN}.toml"))


def test_a_spec_path_in_the_leaderboard_header_cannot_end_its_html_comment() -> None:
    text = render_leaderboard(
        title="TB",
        benchmark_key="tb --> <b>",
        spec_path="specs/benchmarks/x --> <!-- y.toml",
        rows=[],
        rank_by="pass_at_1",
        scope="workspace",
    )
    header = text.split("\n", 1)[0]
    assert header.startswith("<!-- generated by reconciler") and header.count("-->") == 1 and header.endswith("-->")


def test_the_helper_sees_a_name_outside_code_spans() -> None:
    """The check above is only as good as its span reader: a bare name must show through it."""
    assert "@octo-org" in outside_code_spans("`a` runs/@octo-org/x `b`")
    assert outside_code_spans("`a` x ``b`c`` \\`d` e") == "CODE x CODE \\`d` e"
