"""The comment cutter: fits GitHub's limit, never cuts inside a fence, <details> or HTML comment, and a
cut plan still lists every run it submits or stops."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.core.cost import Cost
from reconciler.core.plan import Action, ActionKind, Plan
from reconciler.github.comments import (
    COMMENT_LIMIT,
    PLAN_MARKER,
    cut_to_fit,
    paid_actions,
    safe_points,
    validation_failed_body,
    with_marker,
)
from reconciler.render.plan_markdown import render_markdown
from reconciler.specs.diagnostics import Diagnostic

RUN_URL = "https://github.com/acme/evals/actions/runs/42"


def lines(prefix: str, n: int, width: int = 60) -> str:
    return "".join(f"{prefix} {i:05d} ".ljust(width, "x") + "\n" for i in range(n))


def kept(result: str) -> str:
    """The part of a cut result that came from the input (everything before the notice)."""
    return result.split("\n\n> [!NOTE]", 1)[0]


def fence_balance(text: str) -> int:
    return len(re.findall(r"^ {0,3}```", text, re.MULTILINE)) % 2


# (name, text, limit, what the kept part must end with)
CASES = [
    ("plain lines are cut at a line end", lines("row", 100), 2000, "x"),
    ("a code fence is kept whole or not at all", lines("a", 10) + "```\n" + lines("code", 60) + "```\n", 2000, "x"),
    ("a tilde fence is kept whole or not at all", lines("a", 10) + "~~~\n" + lines("code", 60) + "~~~\n", 2000, "x"),
    (
        "``` inside a ~~~ fence does not close it",
        lines("a", 10) + "~~~\n```\n" + lines("code", 60) + "~~~\n",
        2000,
        "x",
    ),
    (
        "a longer opening fence needs a long closing fence",
        lines("a", 10) + "````\n```\n" + lines("code", 60) + "````\n",
        2000,
        "x",
    ),
    (
        "a details block is kept whole or not at all",
        lines("a", 10) + "<details><summary>more</summary>\n\n" + lines("row", 60) + "\n</details>\n",
        2000,
        "x",
    ),
    (
        "nested details blocks count depth",
        lines("a", 10) + "<details>\n<details>\n" + lines("r", 20) + "</details>\n" + lines("s", 40) + "</details>\n",
        2000,
        "x",
    ),
    (
        "an HTML comment is kept whole or not at all",
        lines("a", 10) + "<!--\n" + lines("hidden", 60) + "-->\n",
        2000,
        "x",
    ),
]


@pytest.mark.parametrize(("name", "text", "limit", "end"), CASES, ids=[c[0] for c in CASES])
def test_cut_to_fit_never_leaves_a_block_open(name: str, text: str, limit: int, end: str) -> None:
    result = cut_to_fit(text, limit, run_url=RUN_URL)
    assert len(result) <= limit
    head = kept(result)
    assert text.startswith(head)
    assert len(head) in safe_points(text) or len(head) + 1 in safe_points(text)
    assert head.endswith(end)


def test_text_that_fits_is_returned_unchanged() -> None:
    text = lines("row", 10)
    assert cut_to_fit(text, 10_000) == text


def test_cut_text_points_at_the_job_summary_of_the_run() -> None:
    result = cut_to_fit(lines("row", 100), 2000, run_url=RUN_URL)
    assert f"the full plan is in the [job summary]({RUN_URL})" in result


def test_cut_results_say_they_are_results_not_a_plan() -> None:
    result = cut_to_fit(lines("row", 100), 2000, what="results")
    assert "These results are too long for one comment" in result and "the full results are in" in result
    assert "plan" not in result


def test_cut_text_without_a_run_url_still_names_the_job_summary() -> None:
    assert "this workflow run's job summary" in cut_to_fit(lines("row", 100), 2000)


def test_cut_text_says_how_much_it_shows() -> None:
    text = lines("row", 100)
    result = cut_to_fit(text, 2000)
    assert f"of {len(text):,} characters" in result


def test_a_block_larger_than_the_limit_is_dropped_whole() -> None:
    text = "intro\n```\n" + lines("code", 500) + "```\n"
    result = cut_to_fit(text, 2000)
    assert kept(result) == "intro"
    assert fence_balance(result) == 0


def test_a_70000_character_plan_fits_one_comment() -> None:
    table = "| + | submit | `spec` | | 1 | $0.10 | no run |\n"
    details = (
        "<details><summary>spec diff</summary>\n\n```\n" + lines("agents[0].model.model", 30) + "```\n\n</details>\n\n"
    )
    text = "### reconciler plan\n\n" + (table * 40 + details) * 19
    assert len(text) > 70_000
    result = with_marker(text, run_url=RUN_URL)
    assert len(result) <= COMMENT_LIMIT
    assert result.startswith(PLAN_MARKER + "\n### reconciler plan")
    assert fence_balance(result) == 0
    assert result.count("<details>") == result.count("</details>")
    assert "job summary" in result


def test_with_marker_puts_the_marker_first_and_the_commit_in_the_footer() -> None:
    body = with_marker("### reconciler plan\n", head_sha="0123456789abcdef", run_url=RUN_URL)
    assert body.startswith(PLAN_MARKER + "\n")
    assert "for commit 0123456789ab" in body


def test_validation_failure_lists_every_error_with_its_place() -> None:
    diags = [
        Diagnostic(file="specs/runs/a.toml", line=3, col=1, key="agents[0].model", message="is missing", code="X"),
        Diagnostic(file="specs/runs/b.toml", line=9, col=5, key="tasks", message="bad <b>|x</b>", code="Y"),
    ]
    body = validation_failed_body(diags)
    assert "**2 error(s)**" in body
    assert "`specs/runs/a.toml:3:1`: agents\\[0\\].model: is missing" in body
    assert "<b>" not in body


blocks = st.one_of(
    st.integers(1, 40).map(lambda n: lines("p", n)),
    st.integers(1, 40).map(lambda n: "```\n" + lines("c", n) + "```\n"),
    st.integers(1, 40).map(lambda n: "<details>\n" + lines("d", n) + "</details>\n"),
    st.integers(1, 10).map(lambda n: "<details>\n```\n" + lines("e", n) + "```\n</details>\n"),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(blocks, min_size=1, max_size=30), st.integers(600, 20_000))
def test_any_cut_is_a_safe_prefix_within_the_limit(parts: list[str], limit: int) -> None:
    text = "".join(parts)
    result = cut_to_fit(text, limit)
    assert len(result) <= limit
    head = kept(result)
    assert text.startswith(head)
    assert any(p in (len(head), len(head) + 1) for p in safe_points(text))


def _plan(actions: list[Action]) -> Plan:
    return Plan(owner="acme/evals", actions=tuple(actions), desired_digest="d", observed_digest="o")


def _submit(spec: str, usd: float = 1.5) -> Action:
    cost = Cost(tasks=1, agents=1, attempts_per_task=1, attempts=1, estimated_usd=usd)
    return Action(kind=ActionKind.SUBMIT, spec_id=spec, reason="new spec", cost=cost)


def _blocked(spec: str) -> Action:
    return Action(kind=ActionKind.BLOCKED, spec_id=spec, reason="secret OPENAI_API_KEY is not set")


def test_a_cut_plan_still_lists_its_submit_when_blocked_specs_fill_the_comment() -> None:
    # the review's case: one paid submit and 150 free blocked specs with long ids
    plan = _plan([*(_blocked("runs/" + f"{i:03d}-" + "b" * 480) for i in range(150)), _submit("tb-smoke")])
    body = render_markdown(plan)
    assert len(body) > COMMENT_LIMIT
    comment = with_marker(body, keep=paid_actions(plan))
    assert len(comment) <= COMMENT_LIMIT
    assert "- submit `tb-smoke`: 1 attempts, est. $1.50" in comment


def test_the_list_of_paid_actions_is_added_only_when_the_plan_is_cut() -> None:
    plan = _plan([_submit("tb-smoke")])
    comment = with_marker(render_markdown(plan), keep=paid_actions(plan))
    assert "listed first because the plan is cut" not in comment


def test_thousands_of_submits_are_listed_within_a_third_of_a_comment_and_counted() -> None:
    plan = _plan([_submit(f"runs/spec-{i:05d}") for i in range(5000)])
    listed = paid_actions(plan)
    assert len(listed) <= COMMENT_LIMIT // 3
    shown = listed.count("\n- submit ")
    assert f"- and {5000 - shown} more: every one is in the job summary" in listed
