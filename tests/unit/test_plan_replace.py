"""`apply --replace SPEC_ID`: the same config submitted again, on purpose, with the reason and the cost."""

from __future__ import annotations

from reconciler.core.plan import Action, ActionKind, plan
from reconciler.core.world import Desired, DesiredRun, Observed, Policy
from tests.unit.test_plan import SMOKE, observed, run, spec

REPLACE_A = Policy(replace=frozenset({"runs/a"}))


def only_action(d: DesiredRun, world: Observed, policy: Policy) -> Action:
    (action,) = plan(Desired(runs=(d,)), world, policy).actions
    return action


def test_a_failed_run_is_submitted_again_when_replace_is_requested() -> None:
    d = spec(SMOKE)
    action = only_action(d, observed(run("runs/a", d.fingerprint, "failed")), REPLACE_A)
    assert action.kind is ActionKind.SUBMIT and action.paid
    assert action.reason == "replace requested: run-r1 is failed; submit the same config again"
    assert action.cost is not None and action.cost.attempts == 1


def test_an_active_run_is_stopped_and_its_config_submitted_again_when_replace_is_requested() -> None:
    d = spec(SMOKE)
    action = only_action(d, observed(run("runs/a", d.fingerprint, "running")), REPLACE_A)
    assert action.kind is ActionKind.REPLACE and action.run_id == "r1" and action.fingerprint == d.fingerprint
    assert action.reason.startswith("replace requested: stop run-r1")


def test_without_the_request_the_same_stopped_run_stays_as_it_is() -> None:
    d = spec(SMOKE, download=[])
    action = only_action(d, observed(run("runs/a", d.fingerprint, "stopped")), Policy(replace=frozenset({"runs/b"})))
    assert action.kind is ActionKind.NOOP


def test_replacing_an_active_run_of_a_protected_spec_needs_allow_protected() -> None:
    d = spec(SMOKE, protect=True)
    world = observed(run("runs/a", d.fingerprint, "running"))
    blocked = only_action(d, world, REPLACE_A)
    assert blocked.kind is ActionKind.BLOCKED and blocked.blocked_by == "protected"
    allowed = only_action(d, world, REPLACE_A.model_copy(update={"allow_protected": True}))
    assert allowed.kind is ActionKind.REPLACE


def test_a_replace_request_is_still_blocked_by_a_missing_secret() -> None:
    d = spec(SMOKE)
    action = only_action(d, observed(run("runs/a", d.fingerprint, "finished"), secrets=()), REPLACE_A)
    assert action.kind is ActionKind.BLOCKED and action.blocked_by == "secrets_missing"
