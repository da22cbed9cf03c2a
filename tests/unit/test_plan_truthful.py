"""A plan never claims "no changes" while a spec is blocked, and `Next:` names the apply that does what it shows."""

from __future__ import annotations

import pytest

from reconciler.commands.plan import apply_command
from reconciler.core.plan import Action, ActionKind, Plan
from reconciler.render.plan_markdown import render_markdown
from reconciler.render.plan_text import render_text

BLOCKED = Action(
    kind=ActionKind.BLOCKED,
    spec_id="tb-full",
    reason="secret records missing: NO_SUCH_KEY",
    blocked_by="secrets_missing",
)
SMOKE_BLOCKED = Action(kind=ActionKind.BLOCKED, spec_id="tb-smoke", reason="require_smoke", blocked_by="smoke_required")
SUBMIT = Action(kind=ActionKind.SUBMIT, spec_id="tb-new", reason="no run of this config yet")
NOOP = Action(kind=ActionKind.NOOP, spec_id="tb-done", reason="in sync")


def make(*actions: Action) -> Plan:
    return Plan(owner="acme/evals", actions=actions, desired_digest="d", observed_digest="o")


ONLY_BLOCKED = [(BLOCKED,), (BLOCKED, NOOP), (BLOCKED, SMOKE_BLOCKED)]


@pytest.mark.parametrize("actions", ONLY_BLOCKED)
def test_a_plan_whose_only_actions_are_blocked_never_says_no_changes_in_text(actions: tuple[Action, ...]) -> None:
    text = render_text(make(*actions))
    assert "No changes" not in text
    assert f"Blocked ({len({a.spec_id for a in actions if a.kind is ActionKind.BLOCKED})}): tb-full" in text


@pytest.mark.parametrize("actions", ONLY_BLOCKED)
def test_a_plan_whose_only_actions_are_blocked_never_says_no_changes_in_markdown(actions: tuple[Action, ...]) -> None:
    markdown = render_markdown(make(*actions))
    assert "No changes" not in markdown
    assert "**Blocked (" in markdown and "tb-full" in markdown.split("|", 1)[0]


def test_the_summary_lists_every_blocked_spec_next_to_pending_changes() -> None:
    text = render_text(make(SUBMIT, BLOCKED, SMOKE_BLOCKED))
    assert "Blocked (2): tb-full, tb-smoke" in text
    assert "Next: `reconciler apply`" in text


def test_a_plan_in_sync_still_says_no_changes() -> None:
    assert "No changes: the platform matches the specs." in render_text(make(NOOP))
    assert "**No changes.**" in render_markdown(make(NOOP))


@pytest.mark.parametrize(
    ("targets", "prune", "allow_protected", "expected"),
    [
        ((), False, False, "reconciler apply"),
        ((), True, False, "reconciler apply --prune"),
        ((), False, True, "reconciler apply --allow-protected"),
        (("tb-smoke", "tb-compare"), False, False, "reconciler apply --target tb-smoke --target tb-compare"),
        (("runs/my smoke",), True, True, "reconciler apply --prune --allow-protected --target 'runs/my smoke'"),
    ],
)
def test_next_names_the_apply_with_the_plans_own_flags(
    targets: tuple[str, ...], prune: bool, allow_protected: bool, expected: str
) -> None:
    command = apply_command(targets, prune=prune, allow_protected=allow_protected)
    assert command == expected
    assert f"Next: `{expected}` to carry this out." in render_text(make(SUBMIT), apply_command=command)
