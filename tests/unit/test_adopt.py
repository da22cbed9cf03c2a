"""`[reconcile] adopt`: when an existing run becomes a spec's, and what the plan says when it cannot."""

from __future__ import annotations

import json
import tomllib
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from reconciler.core.adopt import comparable_payload, differences
from reconciler.core.identity import Marker, canonical_json
from reconciler.core.plan import Action, ActionKind, plan
from reconciler.core.world import Adoption, Desired, ObservedRun
from reconciler.specs.run_config import RunConfig
from tests.unit.test_plan import SMOKE, observed, spec

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


@given(json_values, json_values)
def test_two_payloads_have_no_differences_exactly_when_they_are_the_same_json(a: Any, b: Any) -> None:
    assert (differences(a, b) == []) == (canonical_json(a) == canonical_json(b))


def test_differences_name_the_toml_field_and_both_values() -> None:
    run = {"experiment_config": {"benchmark": "tb"}, "execution_config": {"attempts_per_task": 2}}
    spec_payload = {"experiment_config": {"benchmark": "tb"}}
    assert differences(run, spec_payload) == ["execution: run has {'attempts_per_task': 2}, spec has (absent)"]
    agents_run = {"agents": [{"model": {"model": "a"}}]}
    agents_spec = {"agents": [{"model": {"model": "b"}}]}
    assert differences(agents_run, agents_spec) == ["agents[0].model.model: run has 'a', spec has 'b'"]


def test_a_run_config_is_compared_without_provided_secret_values_or_markers() -> None:
    config = {
        "agents": [{"model": {"type": "hosted"}, "env": {}}],
        "env_config": {"RECONCILER_OWNER": "x", "RECONCILER_SPEC": "y@0123456789abcdef"},
        "secrets": {"required": ["K"], "provided": {"K": "value"}},
    }
    expected = {"agents": [{"model": {"type": "hosted"}, "env": {}}], "secrets": {"required": ["K"], "provided": {}}}
    assert comparable_payload(config) == expected


def test_nulls_empty_parts_and_a_missing_agent_env_do_not_make_a_config_differ() -> None:
    spec_payload = RunConfig.model_validate(tomllib.loads(SMOKE)).to_payload()
    sparse = json.loads(json.dumps(spec_payload))
    del sparse["agents"][0]["env"]
    sparse["tasks_config"]["categories"] = None
    sparse["env_config"] = {}
    assert differences(comparable_payload(sparse), comparable_payload(spec_payload)) == []


def unmarked(status: str = "running") -> ObservedRun:
    return ObservedRun(id="r9", name="their-run", status=status, created_at="2026-01-01T00:00:00Z")


def test_a_matching_unmarked_run_is_imported_and_then_waited_on_instead_of_submitted() -> None:
    d = spec(SMOKE, adopt="their-run")
    world = observed(unmarked(), adoptions={d.spec.id: Adoption(spec_id=d.spec.id, ref="their-run", run=unmarked())})
    result = plan(Desired(runs=(d,)), world)
    assert [a.kind for a in result.actions] == [ActionKind.IMPORT, ActionKind.WAIT]
    assert result.has_changes is False and result.paid_attempts == 0 and result.unmanaged_runs == 0


def test_once_recorded_an_adopted_run_needs_no_import_line() -> None:
    d = spec(SMOKE, adopt="their-run")
    adoption = Adoption(spec_id=d.spec.id, ref="their-run", run=unmarked(), recorded=True)
    (action,) = plan(Desired(runs=(d,)), observed(unmarked(), adoptions={d.spec.id: adoption})).actions
    assert action.kind is ActionKind.WAIT and action.run_id == "r9"


def test_a_run_whose_config_differs_blocks_the_spec_and_nothing_is_submitted() -> None:
    d = spec(SMOKE, adopt="their-run")
    adoption = Adoption(
        spec_id=d.spec.id,
        ref="their-run",
        run=unmarked(),
        differences=("execution.attempts_per_task: run has 2, spec has 1",),
    )
    (action,) = plan(Desired(runs=(d,)), observed(unmarked(), adoptions={d.spec.id: adoption})).actions
    assert action.kind is ActionKind.BLOCKED and action.blocked_by == "adopt"
    assert "execution.attempts_per_task: run has 2, spec has 1" in action.reason


def test_a_missing_run_or_one_with_another_owners_marker_blocks_the_spec() -> None:
    d = spec(SMOKE, adopt="their-run")
    missing = Adoption(spec_id=d.spec.id, ref="their-run")
    (gone,) = plan(Desired(runs=(d,)), observed(adoptions={d.spec.id: missing})).actions
    assert gone.kind is ActionKind.BLOCKED and "no such run" in gone.reason
    theirs = Marker(owner="someone/else", spec_id="x", fingerprint="0" * 16)
    owned = Adoption(spec_id=d.spec.id, ref="their-run", run=unmarked(), marker=theirs)
    (taken,) = plan(Desired(runs=(d,)), observed(unmarked(), adoptions={d.spec.id: owned})).actions
    assert taken.kind is ActionKind.BLOCKED and "someone/else" in taken.reason


def plan_of_an_edited_adopted_spec(*, recorded: bool = False, recorded_by_older: bool = False) -> Action:
    """The one action for an adopting spec whose config now differs from its run's."""
    d = spec(SMOKE, adopt="their-run")
    adoption = Adoption(
        spec_id=d.spec.id,
        ref="their-run",
        run=unmarked(),
        differences=("agents[0].harness: run has 'codex', spec has 'opencode'",),
        fingerprint="f" * 16,
        recorded=recorded,
        recorded_by_older=recorded_by_older,
    )
    (action,) = plan(Desired(runs=(d,)), observed(unmarked(), adoptions={d.spec.id: adoption})).actions
    return action


def test_an_adopted_spec_edited_after_the_adoption_was_recorded_replaces_the_run() -> None:
    action = plan_of_an_edited_adopted_spec(recorded=True)
    assert action.kind is ActionKind.REPLACE and action.run_id == "r9" and action.previous_fingerprint == "f" * 16


def test_an_adoption_an_older_version_recorded_blocks_an_edited_spec_saying_how_to_go_on() -> None:
    """Its record names no config fingerprint, so it proves nothing about the run: the spec is
    blocked as any differing adopt is, and the reason says to match the run once, apply, then edit."""
    action = plan_of_an_edited_adopted_spec(recorded_by_older=True)
    assert action.kind is ActionKind.BLOCKED and "as an older reconciler recorded it" in action.reason
