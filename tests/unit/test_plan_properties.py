"""Properties of the planner over random desired and observed states."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconciler.core.identity import Marker
from reconciler.core.plan import Action, ActionKind, plan
from reconciler.core.world import Desired, Observed, ObservedRun, Policy
from tests.unit.test_plan import FULL, OWNER, SMOKE, bench, spec

SPEC_IDS = ["runs/a", "runs/b", "runs/c"]
STATUSES = ["pending", "queued", "running", "finished", "failed", "stopped"]


@st.composite
def worlds(draw: st.DrawFn) -> tuple[Desired, Observed, Policy]:
    chosen = draw(st.lists(st.sampled_from(SPEC_IDS), unique=True))
    desired_runs = tuple(
        spec(
            draw(st.sampled_from([FULL, SMOKE])),
            sid,
            state=draw(st.sampled_from(["running", "stopped"])),
            on_change=draw(st.sampled_from(["replace", "queue"])),
            protect=draw(st.booleans()),
        )
        for sid in chosen
    )
    fingerprints = [d.fingerprint for d in desired_runs] + ["0" * 16, "1" * 16]
    runs = []
    for i in range(draw(st.integers(0, 8))):
        marker = draw(
            st.one_of(
                st.none(),
                st.builds(
                    Marker,
                    owner=st.sampled_from([OWNER, "other/repo"]),
                    spec_id=st.sampled_from([*SPEC_IDS, "runs/gone"]),
                    fingerprint=st.sampled_from(fingerprints),
                ),
            )
        )
        runs.append(
            ObservedRun(
                id=f"r{i}",
                name=f"run-{i}",
                status=draw(st.sampled_from(STATUSES)),
                created_at=f"2026-01-01T00:00:{i:02d}Z",
                marker=marker,
            )
        )
    observed = Observed(
        owner=OWNER,
        runs=tuple(runs),
        benchmarks={"tb": bench()},
        secrets=frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}),
    )
    policy = Policy(prune=draw(st.booleans()), allow_protected=draw(st.booleans()))
    return Desired(runs=desired_runs), observed, policy


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_at_most_one_submit_per_spec_and_fingerprint(world: tuple[Desired, Observed, Policy]) -> None:
    p = plan(*world)
    paid = [(a.spec_id, a.fingerprint) for a in p.actions if a.paid]
    assert len(paid) == len(set(paid))
    assert len([a for a in p.actions if a.paid]) <= len(world[0].runs)


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_no_action_ever_names_a_run_we_do_not_own(world: tuple[Desired, Observed, Policy]) -> None:
    desired, observed, policy = world
    ours = {r.id for r in observed.runs if r.marker and r.marker.owner == OWNER}
    for action in plan(desired, observed, policy).actions:
        if action.run_id is not None:
            assert action.run_id in ours


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_nothing_is_stopped_without_prune_or_a_spec_that_asks_for_it(world: tuple[Desired, Observed, Policy]) -> None:
    """A run is stopped (or replaced) only when it is an active run of its spec and the spec says so:
    state = "stopped", or the run carries an older config. The run of the spec's current config never is."""
    desired, observed, policy = world
    by_id = {d.spec.id: d for d in desired.runs}
    runs = {r.id: r for r in observed.runs}
    actions = plan(desired, observed, policy).actions
    # a renamed spec's runs carry its old id; the same plan moves them to the new one
    moved_to = {run_id: a.spec_id for a in actions if a.kind is ActionKind.MOVED for run_id in a.moved_runs}
    for action in actions:
        if action.kind is ActionKind.ORPHAN and action.will_stop:
            assert policy.prune and action.spec_id not in by_id
        if action.kind is ActionKind.STOP and action.reason.startswith("duplicate of "):
            continue  # a copy of a config that keeps running: see the duplicates property below
        if action.kind in (ActionKind.STOP, ActionKind.REPLACE):
            d = by_id[action.spec_id or ""]
            run = runs[action.run_id or ""]
            assert run.active
            assert run.marker is not None and d.spec.id in (run.marker.spec_id, moved_to.get(run.id))
            if d.spec.reconcile.state != "stopped":
                assert run.marker.fingerprint != d.fingerprint
            assert not d.spec.reconcile.protect or policy.allow_protected


@settings(max_examples=100, deadline=None)
@given(worlds())
def test_nothing_is_submitted_while_a_run_of_the_same_config_is_active(world: tuple[Desired, Observed, Policy]) -> None:
    desired, observed, policy = world
    active = {
        (r.marker.spec_id, r.marker.fingerprint)
        for r in observed.runs
        if r.marker and r.marker.owner == OWNER and r.active
    }
    for action in plan(desired, observed, policy).actions:
        if action.paid:
            assert (action.spec_id, action.fingerprint) not in active


def carry_out(observed: Observed, actions: tuple[Action, ...]) -> Observed:
    """The world right after an apply that succeeded at every action, as the platform and the disk would show it."""
    runs = {r.id: r for r in observed.runs}
    downloaded = dict(observed.downloaded)
    moved = dict(observed.moved)
    for n, action in enumerate(actions):
        if action.kind is ActionKind.MOVED and action.spec_id is not None:
            moved.update(dict.fromkeys(action.moved_runs, action.spec_id))  # what apply records in the state file
        stops = action.kind in (ActionKind.STOP, ActionKind.REPLACE) or (
            action.kind is ActionKind.ORPHAN and action.will_stop
        )
        if stops and action.run_id is not None:
            runs[action.run_id] = runs[action.run_id].model_copy(update={"status": "stopped"})
        if action.paid:
            new_id = f"new{n}"
            runs[new_id] = ObservedRun(
                id=new_id,
                name=f"new-run-{n}",
                status="queued",
                created_at=f"2026-02-01T00:00:{n:02d}Z",  # newer than every run the world started with
                marker=Marker(owner=OWNER, spec_id=action.spec_id or "", fingerprint=action.fingerprint or ""),
            )
        if action.kind is ActionKind.DOWNLOAD and action.run_id is not None:
            have = downloaded.get(action.run_id, frozenset())
            downloaded[action.run_id] = have | frozenset(action.download_types)
    return observed.model_copy(update={"runs": tuple(runs.values()), "downloaded": downloaded, "moved": moved})


def two_older_configs_running() -> tuple[Desired, Observed, Policy]:
    """A spec whose config changed twice while both older runs kept running: one apply must end both."""
    older = tuple(
        ObservedRun(
            id=f"old{i}",
            name=f"old-{i}",
            status="running",
            created_at=f"2026-01-01T00:00:0{i}Z",
            marker=Marker(owner=OWNER, spec_id="runs/a", fingerprint=str(i) * 16),
        )
        for i in range(2)
    )
    observed = Observed(
        owner=OWNER, runs=older, benchmarks={"tb": bench()}, secrets=frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
    )
    return Desired(runs=(spec(FULL, "runs/a"),)), observed, Policy()


@settings(max_examples=150, deadline=None)
@given(worlds())
@example(two_older_configs_running())
def test_planning_again_after_carrying_out_the_plan_finds_nothing_to_change(
    world: tuple[Desired, Observed, Policy],
) -> None:
    desired, observed, policy = world
    first = plan(desired, observed, policy)
    after = carry_out(observed, first.actions)
    again = plan(desired, after, policy)
    assert [a for a in again.actions if a.changes] == []


@settings(max_examples=150, deadline=None)
@given(worlds())
def test_of_live_runs_of_one_config_exactly_the_newest_is_kept(world: tuple[Desired, Observed, Policy]) -> None:
    desired, observed, policy = world
    p = plan(desired, observed, policy)
    runs = {r.id: r for r in observed.runs}
    stopped = {a.run_id for a in p.actions if a.kind is ActionKind.STOP and a.reason.startswith("duplicate of ")}
    for d in desired.runs:
        if d.spec.reconcile.state == "stopped":
            continue
        live = sorted(
            (
                r
                for r in observed.runs
                if r.marker == Marker(owner=OWNER, spec_id=d.spec.id, fingerprint=d.fingerprint) and r.active
            ),
            key=lambda r: (r.created_at or "", r.id),
            reverse=True,
        )
        assert {r.id for r in live[1:]} <= stopped
        assert not live or live[0].id not in stopped
    assert all(runs[s].active for s in stopped if s)


@given(worlds())
def test_under_a_shared_owner_nothing_is_stopped_and_every_submit_still_goes_ahead(
    world: tuple[Desired, Observed, Policy],
) -> None:
    """A run marked with the workspace name may be another origin-less repository's
    (settings.Owner.shared): every stop an edit, a duplicate, `state` or `--prune` asks for is
    blocked instead, and the submits the same plan makes unshared are made shared too."""
    desired, observed, policy = world
    alone = plan(desired, observed, policy).actions
    shared = plan(desired, observed.model_copy(update={"shared_owner": True}), policy).actions
    stopping = [a for a in shared if a.kind in (ActionKind.STOP, ActionKind.REPLACE) or a.will_stop]
    assert stopping == []
    assert [a.spec_id for a in shared if a.kind is ActionKind.SUBMIT] == [
        a.spec_id for a in alone if a.kind is ActionKind.SUBMIT
    ]
    stops_alone = [a for a in alone if a.kind in (ActionKind.STOP, ActionKind.REPLACE) or a.will_stop]
    assert [(a.run_id, a.blocked_by) for a in shared if a.blocked_by == "shared_owner"] == [
        (a.run_id, "shared_owner") for a in stops_alone
    ]
