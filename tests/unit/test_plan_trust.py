"""The planner's trust rules: duplicates submitted concurrently, renamed spec files, and
policies that hold however a spec names its benchmark."""

from __future__ import annotations

import pytest

from reconciler.core.plan import ActionKind, plan
from reconciler.core.world import Desired, ObservedRun, Policy, RunAgents
from tests.unit.test_plan import FULL, SMOKE, bench, benchmark_spec, kinds, observed, run, spec

GPT = (None, "openai/gpt-5.2")
CLAUDE = (None, "anthropic/claude-sonnet-4")
CLAUDE_AGENT = '[[agents]]\n[agents.model]\ntype = "provider"\nmodel = "anthropic/claude-sonnet-4"\n'
CLAUDE_AGENT += 'api_key_secret = "ANTHROPIC_API_KEY"\n'


def at(second: int) -> str:
    return f"2026-01-01T00:00:{second:02d}Z"


# --- duplicates ---------------------------------------------------------------------------------


def test_live_copies_of_one_config_keep_the_newest_and_stop_the_others() -> None:
    d = spec(SMOKE)
    runs = [run("runs/a", d.fingerprint, "running", f"r{i}", created=at(i)) for i in (3, 1, 2)]
    p = plan(Desired(runs=(d,)), observed(*runs))
    stops = sorted((a.run_id, a.reason) for a in p.actions if a.kind is ActionKind.STOP)
    assert stops == [
        ("r1", "duplicate of run-r3, the newest live run of this config"),
        ("r2", "duplicate of run-r3, the newest live run of this config"),
    ]
    (wait,) = [a for a in p.actions if a.kind is ActionKind.WAIT]
    assert wait.run_id == "r3" and not any(a.paid for a in p.actions)


def test_a_protected_spec_still_stops_its_duplicates() -> None:
    d = spec(SMOKE, protect=True)
    runs = [run("runs/a", d.fingerprint, "pending", f"r{i}", created=at(i)) for i in (1, 2)]
    p = plan(Desired(runs=(d,)), observed(*runs))
    assert [(a.kind.value, a.run_id) for a in p.actions] == [("stop", "r1"), ("wait", "r2")]


def test_a_finished_run_of_the_same_config_is_not_a_duplicate() -> None:
    d = spec(SMOKE)
    runs = [
        run("runs/a", d.fingerprint, "finished", "r1", created=at(1)),
        run("runs/a", d.fingerprint, "running", "r2"),
    ]
    assert kinds(plan(Desired(runs=(d,)), observed(*runs))) == ["wait"]


def test_a_replaced_run_still_cleaning_up_is_never_kept_over_its_replacement() -> None:
    # a `--replace` of the same config, seen from any machine: the old run still shows running
    # while the platform cleans up ("moves to `stopped` once the platform finishes cleaning up its
    # sandboxes"), and the new one must be the one kept
    d = spec(SMOKE)
    old = run("runs/a", d.fingerprint, "running", "r1", created=at(1))
    new = run("runs/a", d.fingerprint, "pending", "r2", created=at(2))
    assert [(a.kind.value, a.run_id) for a in plan(Desired(runs=(d,)), observed(old, new)).actions] == [
        ("stop", "r1"),
        ("wait", "r2"),
    ]


# --- renamed spec files ---------------------------------------------------------------------------


def test_a_renamed_spec_with_an_unchanged_config_moves_its_run_and_submits_nothing() -> None:
    d = spec(SMOKE, "runs/new name")
    p = plan(Desired(runs=(d,)), observed(run("runs/old", d.fingerprint, "running", "r1")))
    moved, wait = p.actions
    assert (moved.kind, moved.spec_id, moved.moved_from, moved.run_id) == (
        ActionKind.MOVED,
        "runs/new name",
        "runs/old",
        "r1",
    )
    assert moved.changes and not moved.paid and moved.cost is None
    assert (wait.kind, wait.run_id) == (ActionKind.WAIT, "r1")
    assert p.paid_attempts == 0


def test_a_recorded_move_plans_no_further_change() -> None:
    d = spec(SMOKE, "runs/new")
    p = plan(Desired(runs=(d,)), observed(run("runs/old", d.fingerprint, "running", "r1"), moved={"r1": "runs/new"}))
    assert kinds(p) == ["wait"] and not p.has_changes


def test_a_recorded_move_that_no_longer_holds_is_ignored() -> None:
    old, new = spec(FULL, "runs/old"), spec(SMOKE, "runs/new")
    # the old spec is back: its run is its own again, whatever the state file says
    p = plan(
        Desired(runs=(old, new)), observed(run("runs/old", old.fingerprint, "running", "r1"), moved={"r1": "runs/new"})
    )
    assert [(a.kind.value, a.spec_id) for a in p.actions] == [("submit", "runs/new"), ("wait", "runs/old")]


def test_a_renamed_spec_edited_after_its_move_replaces_the_run_it_inherited() -> None:
    d = spec(SMOKE, "runs/new")
    live = run("runs/old", "0" * 16, "running", "r1")
    p = plan(Desired(runs=(d,)), observed(live, moved={"r1": "runs/new"}))
    assert [(a.kind.value, a.spec_id, a.run_id) for a in p.actions] == [("replace", "runs/new", "r1")]


def test_a_renamed_protected_spec_edited_after_its_move_is_blocked_not_submitted_beside_its_run() -> None:
    d = spec(SMOKE, "runs/new", protect=True)
    p = plan(Desired(runs=(d,)), observed(run("runs/old", "0" * 16, "running", "r1"), moved={"r1": "runs/new"}))
    assert [(a.kind.value, a.blocked_by) for a in p.actions] == [("blocked", "protected")]
    assert p.paid_attempts == 0


def test_a_recorded_move_to_a_spec_of_another_config_never_makes_the_renamed_spec_submit_again() -> None:
    """A state file edited by hand (or merged wrongly) moves a run to a spec of another config
    while the spec that now has the run's exact config has no run: that spec inherits the run."""
    renamed, other = spec(SMOKE, "runs/renamed"), spec(FULL, "runs/other")
    live = run("runs/old", renamed.fingerprint, "running", "r1")
    p = plan(Desired(runs=(other, renamed)), observed(live, moved={"r1": "runs/other"}))
    assert [(a.kind.value, a.spec_id, a.run_id) for a in p.actions if a.spec_id == "runs/renamed"] == [
        ("moved", "runs/renamed", "r1"),
        ("wait", "runs/renamed", "r1"),
    ]
    assert [a.kind.value for a in p.actions if a.spec_id == "runs/other"] == ["submit"]
    assert not any(a.run_id == "r1" and a.kind.value in ("stop", "replace") for a in p.actions)


def test_a_changed_config_under_a_new_name_is_a_new_spec_and_the_old_run_an_orphan() -> None:
    d = spec(SMOKE, "runs/new")
    p = plan(Desired(runs=(d,)), observed(run("runs/old", "0" * 16, "running", "r1")))
    assert [(a.kind.value, a.spec_id) for a in p.actions] == [("submit", "runs/new"), ("orphan", "runs/old")]


def test_two_new_specs_with_the_same_config_are_not_guessed_at() -> None:
    a, b = spec(SMOKE, "runs/a"), spec(SMOKE, "runs/b")
    p = plan(Desired(runs=(a, b)), observed(run("runs/old", a.fingerprint, "running", "r1")))
    assert [(x.kind.value, x.spec_id) for x in p.actions] == [
        ("submit", "runs/a"),
        ("submit", "runs/b"),
        ("orphan", "runs/old"),
    ]


# --- policies by benchmark identity ---------------------------------------------------------------


@pytest.mark.parametrize("ref", ["tb", "TB", "b1"], ids=["key", "name", "id"])
def test_max_attempts_per_run_holds_however_the_run_spec_names_the_benchmark(ref: str) -> None:
    policy = benchmark_spec('[benchmark]\nref = "tb"\n[policy]\nmax_attempts_per_run = 100\n')
    d = spec(FULL.replace('benchmark = "tb"', f'benchmark = "{ref}"'))
    world = observed(benchmarks={"tb": bench(), ref: bench(ref=ref)})
    (action,) = plan(Desired(runs=(d,), benchmarks=(policy,)), world).actions
    assert action.blocked_by == "over_run_limit"


@pytest.mark.parametrize("ref", ["tb", "TB", "b1"], ids=["key", "name", "id"])
def test_require_smoke_holds_however_the_run_spec_names_the_benchmark(ref: str) -> None:
    policy = benchmark_spec('[benchmark]\nref = "TB"\n[policy]\nrequire_smoke = true\n')
    d = spec(FULL.replace('benchmark = "tb"', f'benchmark = "{ref}"'))
    world = observed(benchmarks={"TB": bench(ref="TB"), ref: bench(ref=ref)})
    (action,) = plan(Desired(runs=(d,), benchmarks=(policy,)), world).actions
    assert action.blocked_by == "smoke_required"


# --- require_smoke counts what a finished smoke run actually ran ----------------------------------


def smoke_run(run_id: str, status: str, agents: tuple[tuple[str | None, str], ...], fp: str) -> ObservedRun:
    ran = RunAgents(selection=True, agents=agents) if status == "finished" else None
    return run("runs/smoke", fp, status, run_id).model_copy(update={"benchmark_id": "b1", "ran": ran})


def require_smoke_world() -> tuple[Desired, str]:
    policy = benchmark_spec('[benchmark]\nref = "tb"\n[policy]\nrequire_smoke = true\n')
    # the smoke spec now names both agents; its finished run ran only gpt-5.2
    smoke = spec(SMOKE.replace('harness = "codex"\n', "") + CLAUDE_AGENT, "runs/smoke")
    full = spec(FULL, "runs/full")
    return Desired(runs=(full, smoke), benchmarks=(policy,)), smoke.fingerprint


def test_an_agent_added_to_a_finished_smoke_spec_is_not_smoke_tested() -> None:
    desired, _ = require_smoke_world()
    finished = smoke_run("r1", "finished", (GPT,), "0" * 16)
    p = plan(desired, observed(finished))
    by_spec = {a.spec_id: a for a in p.actions}
    assert by_spec["runs/full"].blocked_by == "smoke_required"
    assert "anthropic/claude-sonnet-4" in by_spec["runs/full"].reason and "gpt-5.2" not in by_spec["runs/full"].reason
    assert by_spec["runs/smoke"].kind is ActionKind.SUBMIT


def test_the_full_run_stays_blocked_while_the_new_smoke_run_is_running() -> None:
    desired, fp = require_smoke_world()
    world = observed(smoke_run("r1", "finished", (GPT,), "0" * 16), smoke_run("r2", "running", (GPT, CLAUDE), fp))
    by_spec = {a.spec_id: a for a in plan(desired, world).actions}
    assert by_spec["runs/full"].blocked_by == "smoke_required"


def test_the_full_run_is_submitted_once_a_smoke_run_of_every_agent_finished() -> None:
    desired, fp = require_smoke_world()
    world = observed(smoke_run("r1", "finished", (GPT,), "0" * 16), smoke_run("r2", "finished", (GPT, CLAUDE), fp))
    by_spec = {a.spec_id: a for a in plan(desired, world, Policy()).actions}
    assert by_spec["runs/full"].kind is ActionKind.SUBMIT


# --- runs marked by earlier versions ----------------------------------------------------------------


def test_a_config_that_runs_under_the_owner_name_earlier_versions_wrote_is_not_submitted_again() -> None:
    d = spec(FULL)
    world = observed(legacy_owner="shared", legacy=frozenset({("runs/a", d.fingerprint)}))
    (action,) = plan(Desired(runs=(d,)), world).actions
    assert action.blocked_by == "legacy_owner" and 'owner = "shared"' in action.reason and not action.paid


def test_the_earlier_owner_names_block_says_it_may_be_another_repositorys_and_how_to_submit_anyway() -> None:
    """The workspace name is also what repositories without a GitHub origin or an owner write:
    taking it as the owner is safe only without them, so the other way out is named too."""
    d = spec(FULL)
    world = observed(legacy_owner="shared", legacy=frozenset({("runs/a", d.fingerprint)}))
    (action,) = plan(Desired(runs=(d,)), world).actions
    assert "without a GitHub origin or an owner" in action.reason
    assert "`reconciler apply --replace runs/a`" in action.reason


def test_a_replace_submits_the_config_despite_a_run_under_the_earlier_owner_name() -> None:
    d = spec(FULL)
    world = observed(legacy_owner="shared", legacy=frozenset({("runs/a", d.fingerprint)}))
    assert kinds(plan(Desired(runs=(d,)), world, Policy(replace=frozenset({"runs/a"})))) == ["submit"]


def test_a_changed_config_is_submitted_despite_an_old_run_under_the_earlier_owner_name() -> None:
    d = spec(FULL)
    world = observed(legacy_owner="shared", legacy=frozenset({("runs/a", "0" * 16)}))
    assert kinds(plan(Desired(runs=(d,)), world)) == ["submit"]


def test_a_spec_reverted_to_a_config_it_ran_before_stops_the_newer_run_saying_why() -> None:
    """Back to config A after a replace by B: B's run is not "an older config", it is a config the
    spec no longer has; A's run is A's, so nothing is submitted again."""
    a, b = spec(SMOKE, "runs/a"), spec(FULL, "runs/a")
    first = run("runs/a", a.fingerprint, "stopped", "r1", created=at(1))
    second = run("runs/a", b.fingerprint, "running", "r2", created=at(2))
    p = plan(Desired(runs=(a,)), observed(first, second))
    (stop,) = [x for x in p.actions if x.kind is ActionKind.STOP]
    assert (stop.run_id, stop.reason) == ("r2", "runs a config this spec no longer has")
    assert not any(x.paid for x in p.actions)
