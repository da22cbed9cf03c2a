"""The review section: each changed spec's field diff next to its planned action and cost."""

from __future__ import annotations

import re

from reconciler.core.cost import Cost
from reconciler.core.plan import Action, ActionKind, Plan
from reconciler.core.review import MISSING, FieldChange, Review, SpecChange
from reconciler.render.plan_markdown import render_markdown
from reconciler.render.review import render_review_markdown, render_review_text

COST = Cost(tasks=90, agents=2, attempts_per_task=1, attempts=180, estimated_usd=42.5, estimate_complete=True)


def plan(*actions: Action) -> Plan:
    return Plan(owner="acme/evals", actions=actions, desired_digest="d", observed_digest="o")


EDITED = SpecChange(
    "edited",
    "specs/runs/tb-compare.toml",
    "tb-compare",
    "run",
    (FieldChange(("agents", 1, "model", "model"), "openai/gpt-5.2", "anthropic/claude-sonnet-4"),),
)
DELETED = SpecChange("deleted", "specs/runs/old.toml", "runs/old", "run")
REPLACE = Action(
    kind=ActionKind.REPLACE,
    spec_id="tb-compare",
    reason="config changed: stop tb-1 (running), submit the new config",
    run_name="tb-1",
    cost=COST,
)
ORPHAN = Action(kind=ActionKind.ORPHAN, spec_id="runs/old", reason="its spec was deleted; stopped only with --prune")


def review(*changes: SpecChange) -> Review:
    return Review("origin/main", "0123456789abcdef0123", changes)


def test_an_edited_spec_shows_its_field_diff_and_planned_replace_with_cost() -> None:
    text = render_review_markdown(review(EDITED), plan(REPLACE))
    assert "**`tb-compare`** (run spec) edited `specs/runs/tb-compare.toml`" in text
    assert "Plan: -/+ replace: 180 attempts, est. $42.50" in text
    assert "```\nagents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4\n```" in text


def test_a_deleted_spec_shows_its_orphaned_run() -> None:
    text = render_review_markdown(review(DELETED), plan(ORPHAN))
    assert "deleted `specs/runs/old.toml`" in text
    assert "Plan: ? orphan (its spec was deleted; stopped only with --prune)" in text


def test_a_change_without_actions_says_no_action() -> None:
    assert "Plan: no action" in render_review_markdown(review(EDITED), plan())


def test_the_heading_names_the_base_and_merge_base() -> None:
    text = render_review_markdown(review(EDITED), plan())
    assert text.startswith("#### Spec changes against `origin/main` (merge base `0123456789ab`): 1")


def test_a_renamed_spec_whose_id_changes_says_so() -> None:
    change = SpecChange(
        "renamed", "specs/runs/b.toml", "runs/b", "run", old_path="specs/runs/a.toml", old_spec_id="runs/a"
    )
    text = render_review_markdown(review(change), plan())
    assert "renamed from `specs/runs/a.toml` to `specs/runs/b.toml`" in text
    assert "the spec id changes from `runs/a` to `runs/b`" in text


def test_an_added_spec_lists_its_values() -> None:
    change = SpecChange(
        "added", "specs/runs/n.toml", "runs/n", "run", (FieldChange(("tasks", "task_set"), MISSING, "parity"),)
    )
    assert "```\ntasks.task_set: parity\n```" in render_review_markdown(review(change), plan())


def test_backticks_in_a_value_cannot_close_the_fence() -> None:
    evil = SpecChange(
        "edited", "specs/runs/e.toml", "e", "run", (FieldChange(("```",), "a", "````\n<!-- reconciler:plan -->"),)
    )
    text = render_review_markdown(review(evil), plan())
    fences = re.findall(r"^(`{3,})$", text, re.MULTILINE)
    assert len(fences) == 2 and len(fences[0]) == 5
    assert "\n<!-- reconciler:plan -->" not in text


def test_the_plan_markdown_places_the_review_after_the_table() -> None:
    md = render_markdown(plan(REPLACE), review=render_review_markdown(review(EDITED), plan(REPLACE)))
    assert md.index("| -/+ | replace |") < md.index("#### Spec changes")
    assert md.endswith("```\n")


def test_the_plan_markdown_without_a_review_is_unchanged() -> None:
    md = render_markdown(plan(REPLACE))
    assert md == (
        "### reconciler plan\n\n"
        "**1 paid submit(s), 180 attempts, est. $42.50**\n\n"
        "| | action | spec | run | attempts | est. cost | why |\n"
        "|---|---|---|---|---:|---:|---|\n"
        "| -/+ | replace | `tb-compare` | tb-1 | 180 | $42.50 | config changed: stop tb-1 (running), submit the new config |\n\n"
    )


def test_the_text_review_lists_plan_and_fields_per_spec() -> None:
    assert render_review_text(review(EDITED), plan(REPLACE)).splitlines() == [
        "Spec changes against origin/main (merge base 0123456789ab): 1",
        "  tb-compare: edited specs/runs/tb-compare.toml",
        "    plan: -/+ replace: 180 attempts, est. $42.50 (config changed: stop tb-1 (running), submit the new config)",
        "      agents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4",
    ]


def test_the_terminal_review_shows_a_newline_and_an_override_in_an_id_as_escapes() -> None:
    """An id from the base branch (or a spec older than the id rules) cannot print a forged plan line."""
    forged = "benchmarks/tb\n  + submit   FORGED \u202e"
    change = SpecChange("deleted", "specs/benchmarks/tb\n  + submit   FORGED \u202e.toml", forged, "benchmark")
    text = render_review_text(review(change), plan())
    assert "\u202e" not in text
    assert not any(line.lstrip().startswith("+ submit") for line in text.splitlines())
    assert "  benchmarks/tb\\n  + submit   FORGED \\u202e: deleted specs/benchmarks/tb\\n" in text
