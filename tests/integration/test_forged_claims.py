"""Whose run is this, before a result is taken as ours: a stranger's finished run that a hand-edited
state file (or this machine's cache) names as a spec's run is never downloaded as that spec's,
never shown on the repository's leaderboard, and the claim is dropped from the state file."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.identity import Marker, marked_payload
from reconciler.core.plan import ActionKind, plan
from reconciler.core.world import Policy, RunAgents
from reconciler.engine.apply import ActionResult, Applier, ApplyReport
from reconciler.engine.download_targets import Target, resolve_targets
from reconciler.engine.downloads import downloader_for
from reconciler.engine.machine_cache import CACHE_DIR_ENV, MachineCache
from reconciler.engine.rendering import render_all
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State, load_state
from reconciler.localplatform.app import create_app
from reconciler.settings import load_project
from tests.inprocess_client import inprocess_client

OWNER = "acme/evals"
RAN = RunAgents(selection=False, agents=(("codex", "openai/gpt-5.2"),))  # what a finished run of ours records
LATER = 10_000_000.0  # simulated seconds: long enough for any run to end
SPEC = """\
[experiment]
benchmark = "terminal-bench-2-1"
[[agents]]
harness = "codex"
[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
[env]
LOCALPLATFORM_FORCE_STATUS = "finished"
[reconcile]
download = ["summary"]
"""
BOARD = """\
[benchmark]
ref = "terminal-bench-2-1"
[leaderboard]
output = "leaderboards/tb.md"
rank_by = "pass_at_1"
scope = "repo"
"""


@dataclass
class World:
    root: Path
    app: Any
    now: float = 1_700_000_000.0

    def session(self, client: Any, state: State, machine: MachineCache | None = None) -> RepoSession:
        project = load_project(self.root)
        desired, specs = load_desired(project)
        return RepoSession(project, "local", OWNER, client, desired, specs, state, machine=machine)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    (tmp_path / "specs/runs").mkdir(parents=True)
    (tmp_path / "specs/benchmarks").mkdir()
    (tmp_path / "specs/runs/smoke.toml").write_text(SPEC)
    (tmp_path / "specs/benchmarks/tb.toml").write_text(BOARD)
    (tmp_path / "reconciler.toml").write_text('workspace = "forged"\n')
    w = World(tmp_path, None)
    w.app = create_app(tmp_path / "platform.sqlite3", speed=1.0, clock=lambda: w.now)
    return w


def strangers_finished_run(world: World) -> tuple[str, Marker]:
    """A run of exactly the smoke spec's config submitted by someone else (no marker), finished;
    and the marker a forged claim gives it."""

    async def submit() -> tuple[str, Marker]:
        async with inprocess_client(world.app, "forged") as client:
            smoke = world.session(client, State()).desired.runs[0]
            run = await client.submit_run(smoke.spec.config.to_payload())
            return run.id, Marker(owner=OWNER, spec_id=smoke.spec.id, fingerprint=smoke.fingerprint)

    found = asyncio.run(submit())
    world.now += LATER
    return found


def forged_state(run_id: str, marker: Marker) -> State:
    """A state file edited by hand to name the run as ours."""
    state = State()
    state.markers[run_id] = marker
    state.run_agents[run_id] = RAN
    return state


def reconcile_download(world: World, state: State, run_id: str) -> ActionResult:
    """Plan and apply as `reconcile` does (downloads included); the one download action's result."""

    async def go() -> ApplyReport:
        async with inprocess_client(world.app, "forged") as client:
            session = world.session(client, state)
            observed = await session.observe()
            p = plan(session.desired, observed, Policy())
            assert [a.kind for a in p.actions if a.run_id == run_id] == [ActionKind.DOWNLOAD]  # the plan trusted it
            return await Applier(session, observed, downloader=downloader_for(session)).run(p)

    (result,) = [r for r in asyncio.run(go()).results if r.action.kind is ActionKind.DOWNLOAD]
    return result


def test_a_forged_claim_in_the_state_file_makes_apply_refuse_to_download_the_run(world: World) -> None:
    run_id, marker = strangers_finished_run(world)
    refused = reconcile_download(world, forged_state(run_id, marker), run_id)
    assert not refused.ok and "is not owned by this repository; not downloaded" in refused.message
    assert not (world.root / ".osmosis").exists()  # no result of a stranger's run was written as ours
    assert run_id not in load_state(world.root / ".reconciler/state.json").markers


def test_a_forged_claim_in_this_machines_cache_makes_download_name_the_spec_as_an_error(world: World) -> None:
    run_id, marker = strangers_finished_run(world)
    cache = MachineCache.open(platform="local", scope="forged", owner=OWNER)
    cache.ours[run_id] = marker.ref
    cache.agents[run_id] = RAN.model_dump(mode="json")
    cache.save()

    async def targets() -> list[Target]:
        async with inprocess_client(world.app, "forged") as client:
            machine = MachineCache.open(platform="local", scope="forged", owner=OWNER)
            return await resolve_targets(world.session(client, State(), machine), [], None)

    (target,) = asyncio.run(targets())
    assert target.run is None and target.error
    assert target.note is not None and "is not owned by this repository" in target.note


def test_a_forged_claim_never_puts_a_strangers_run_on_the_repositorys_leaderboard(world: World) -> None:
    run_id, marker = strangers_finished_run(world)

    async def board() -> str:
        async with inprocess_client(world.app, "forged") as client:
            session = world.session(client, forged_state(run_id, marker))
            observed = await session.observe()
            (outcome,) = await render_all(session, observed)
            assert outcome.error is None
            run_name = (await client.get_run(run_id)).benchmark_run.name
            assert run_name
            return run_name

    run_name = asyncio.run(board())
    text = (world.root / "leaderboards/tb.md").read_text()
    assert run_name not in text


def test_a_run_that_is_ours_is_downloaded_on_the_state_files_word_once_the_platform_agrees(world: World) -> None:
    """The control: the same flow with a run that really carries our marker downloads it."""

    async def apply_then_reconcile() -> ApplyReport:
        async with inprocess_client(world.app, "forged") as client:
            first = world.session(client, State())
            observed = await first.observe()
            await Applier(first, observed).run(plan(first.desired, observed, Policy()))
        world.now += LATER
        async with inprocess_client(world.app, "forged") as client:
            session = world.session(client, load_state(world.root / ".reconciler/state.json"))
            observed = await session.observe()
            p = plan(session.desired, observed, Policy())
            return await Applier(session, observed, downloader=downloader_for(session)).run(p)

    report = asyncio.run(apply_then_reconcile())
    (downloaded,) = [r for r in report.results if r.action.kind is ActionKind.DOWNLOAD]
    assert downloaded.ok, downloaded.message
    assert list((world.root / ".osmosis").rglob("*")), "nothing was downloaded"


def test_our_run_claimed_for_another_config_of_its_spec_is_not_downloaded_as_the_current_one(world: World) -> None:
    """Ours, but the state file says it runs the spec's current config when its marker says otherwise."""

    async def submit_older() -> tuple[str, Marker]:
        async with inprocess_client(world.app, "forged") as client:
            spec = world.session(client, State()).desired.runs[0]
            older = Marker(owner=OWNER, spec_id=spec.spec.id, fingerprint="0123456789abcdef")
            run = await client.submit_run(marked_payload(spec.spec.config, older))
            return run.id, Marker(owner=OWNER, spec_id=spec.spec.id, fingerprint=spec.fingerprint)

    run_id, claimed = asyncio.run(submit_older())
    world.now += LATER

    refused = reconcile_download(world, forged_state(run_id, claimed), run_id)
    assert not refused.ok and "runs another config than the plan saw; not downloaded" in refused.message
    assert not (world.root / ".osmosis").exists()
    kept = load_state(world.root / ".reconciler/state.json").markers[run_id]
    assert kept.fingerprint == "0123456789abcdef"  # what the run really carries


@pytest.mark.parametrize("shared", [False, True])
def test_under_a_shared_owner_the_repositorys_board_shows_only_runs_of_its_own_spec_ids(
    world: World, shared: bool
) -> None:
    """The workspace name as owner is every origin-less repository's (settings.Owner.shared): a
    run of a spec id this repository does not have is another's, and stays off its board."""

    async def board() -> tuple[str, str]:
        async with inprocess_client(world.app, "forged") as client:
            smoke = world.session(client, State()).desired.runs[0]
            ours = await client.submit_run(
                marked_payload(
                    smoke.spec.config, Marker(owner=OWNER, spec_id=smoke.spec.id, fingerprint=smoke.fingerprint)
                )
            )
            theirs = Marker(owner=OWNER, spec_id="runs/another-repositorys", fingerprint=smoke.fingerprint)
            elsewhere = marked_payload(smoke.spec.config, theirs)
            elsewhere["agents"][0]["harness"] = "terminus-2"  # another agent: the board keeps one row per agent
            other = await client.submit_run(elsewhere)
            world.now += LATER
            session = world.session(client, State())
            session.shared_owner = shared
            observed = await session.observe()
            (outcome,) = await render_all(session, observed)
            assert outcome.error is None
            names = [(await client.get_run(r.id)).benchmark_run.name or "" for r in (ours, other)]
            return names[0], names[1]

    ours, other = asyncio.run(board())
    text = (world.root / "leaderboards/tb.md").read_text()
    assert ours in text
    assert (other in text) is not shared


def strangers_live_run(world: World) -> tuple[str, Marker]:
    """A run of the smoke spec's config submitted by someone else, still running (no time passes)."""

    async def submit() -> tuple[str, Marker]:
        async with inprocess_client(world.app, "forged") as client:
            smoke = world.session(client, State()).desired.runs[0]
            run = await client.submit_run(smoke.spec.config.to_payload())
            return run.id, Marker(owner=OWNER, spec_id=smoke.spec.id, fingerprint=smoke.fingerprint)

    return asyncio.run(submit())


def planned(world: World, state: State, machine: MachineCache | None = None) -> dict[str | None, ActionKind]:
    async def go() -> dict[str | None, ActionKind]:
        async with inprocess_client(world.app, "forged") as client:
            session = world.session(client, state, machine)
            p = plan(session.desired, await session.observe(), Policy())
            return {a.spec_id: a.kind for a in p.actions if a.kind is not ActionKind.RENDER}

    return asyncio.run(go())


def test_a_live_stranger_run_the_state_file_claims_never_holds_back_the_specs_submit(world: World) -> None:
    """Planned as a wait on the state file's word, the spec would never be submitted: the claim
    of a live run is read from the platform before the plan waits on it."""
    run_id, marker = strangers_live_run(world)
    state = State()
    state.markers[run_id] = marker
    assert planned(world, state) == {"runs/smoke": ActionKind.SUBMIT}


def test_the_same_claim_copied_into_this_machines_cache_is_read_all_the_same(world: World) -> None:
    run_id, marker = strangers_live_run(world)
    machine = MachineCache.open(platform="local", scope="forged", owner=OWNER)
    machine.ours[run_id] = marker.ref  # as an earlier version copied every state-file marker there
    machine.save()
    state = State()
    state.markers[run_id] = marker
    assert planned(world, state, MachineCache.open(platform="local", scope="forged", owner=OWNER)) == {
        "runs/smoke": ActionKind.SUBMIT
    }
