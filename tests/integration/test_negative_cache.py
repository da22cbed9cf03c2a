"""Has this config been submitted? Asked of the platform: an entry of the per-machine cache
saying a run is not ours may shape a plan, but it never lets apply submit a config again."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.plan import ActionKind, plan
from reconciler.core.world import Desired, Observed, Policy
from reconciler.engine.apply import Applier, ApplyReport
from reconciler.engine.machine_cache import CACHE_DIR_ENV, MachineCache
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.settings import Project, load_project
from reconciler.specs.loader import LoadResult
from tests.inprocess_client import inprocess_client, refusing_run_details

REPO = Path(__file__).resolve().parents[2]
OWNER = "acme/evals"
ONLY_SMOKE = Policy(targets=frozenset({"tb-smoke"}))


@dataclass(frozen=True)
class Checkout:
    """The example specs in a fresh checkout, with no state file, and a fresh platform."""

    app: Any
    project: Project
    desired: Desired
    specs: LoadResult


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Checkout:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text('workspace = "neg"\n')
    project = load_project(tmp_path)
    return Checkout(create_app(tmp_path / "platform.sqlite3", speed=1.0), project, *load_desired(project))


def cache() -> MachineCache:
    """This machine's cache, as a new process would open it."""
    return MachineCache.open(platform="local", scope="neg", owner=OWNER)


def test_a_run_wrongly_cached_as_not_ours_is_adopted_not_submitted_again(checkout: Checkout) -> None:
    app, project, desired, specs = checkout.app, checkout.project, checkout.desired, checkout.specs

    async def apply_once() -> tuple[list[str], ApplyReport]:
        client = inprocess_client(app, "neg")
        async with client:
            # a cold checkout (no state file) on a machine whose cache is wrong
            session = RepoSession(project, "local", OWNER, client, desired, specs, State(), machine=cache())
            observed = await session.observe()
            p = plan(desired, observed, ONLY_SMOKE)
            report = await Applier(session, observed).run(p)
            return [r.id for r in await client.list_runs()], report

    (first,), _ = asyncio.run(apply_once())
    wrong = cache()
    wrong.not_ours.add(first)
    wrong.save()

    runs, report = asyncio.run(apply_once())
    (result,) = report.results
    assert result.action.kind is ActionKind.SUBMIT  # the plan trusted the cache ...
    assert result.adopted and runs == [first]  # ... the submit did not
    assert first not in cache().not_ours


def test_a_second_plan_without_a_state_file_knows_our_runs_from_the_machine_cache(checkout: Checkout) -> None:
    """A plan never writes the state file, yet what it learned is not thrown away: a fresh checkout
    on the same machine plans without reading any run it has seen before."""
    app, project, desired, specs = checkout.app, checkout.project, checkout.desired, checkout.specs

    async def observe(asgi: Any, machine: MachineCache, *, apply: bool = False) -> Observed:
        client = inprocess_client(asgi, "neg")
        async with client:
            session = RepoSession(project, "local", OWNER, client, desired, specs, State(), machine=machine)
            observed = await session.observe()
            if apply:
                await Applier(session, observed).run(plan(desired, observed, ONLY_SMOKE))
            return observed

    asyncio.run(observe(app, MachineCache.in_memory(), apply=True))  # submitted elsewhere
    asyncio.run(observe(app, cache()))  # a plan here: reads the run once
    again = asyncio.run(observe(refusing_run_details(app), cache()))  # a fresh checkout, same machine
    assert [(r.marker.owner, r.marker.spec_id) for r in again.runs if r.marker] == [(OWNER, "tb-smoke")]
    assert [a.kind for a in plan(desired, again, ONLY_SMOKE).actions] == [ActionKind.WAIT]


def test_a_run_wrongly_cached_as_ours_is_never_stopped_and_the_entry_is_dropped(checkout: Checkout) -> None:
    """A hand-edited cache claims someone else's live run as an older config of tb-smoke: the plan
    reads a live run no read of this machine confirmed before it plans on it, plans no replace,
    stops nothing, and the claim is forgotten (apply's own read before a stop is the second guard:
    test_a_run_cached_under_another_config_of_ours_is_neither_stopped_nor_paid_for_twice)."""
    app, project, desired, specs = checkout.app, checkout.project, checkout.desired, checkout.specs
    smoke = next(d for d in desired.runs if d.spec.id == "tb-smoke")

    async def stranger() -> str:
        async with inprocess_client(app, "neg") as client:
            return (await client.submit_run(smoke.spec.config.to_payload())).id  # no marker: not ours

    run_id = asyncio.run(stranger())
    wrong = cache()
    wrong.ours[run_id] = "tb-smoke@" + "0" * 16
    wrong.save()

    async def apply_once() -> tuple[ApplyReport, str]:
        async with inprocess_client(app, "neg") as client:
            session = RepoSession(project, "local", OWNER, client, desired, specs, State(), machine=cache())
            observed = await session.observe()
            report = await Applier(session, observed).run(plan(desired, observed, ONLY_SMOKE))
            return report, (await client.get_run(run_id)).benchmark_run.status or ""

    report, status = asyncio.run(apply_once())
    assert not any(r.action.run_id == run_id for r in report.results), [r.message for r in report.results]
    assert status in ("pending", "queued", "running")
    assert run_id not in cache().ours


def test_a_run_cached_under_another_config_of_ours_is_neither_stopped_nor_paid_for_twice(checkout: Checkout) -> None:
    """A hand-edited cache says our live tb-smoke run runs another config: the plan would replace
    it, but the stop finds the run's real marker, keeps the run, and nothing is submitted; the
    claim never reaches the committed state file."""
    app, project, desired, specs = checkout.app, checkout.project, checkout.desired, checkout.specs

    async def apply_once(machine: MachineCache) -> tuple[list[tuple[str, str]], ApplyReport]:
        async with inprocess_client(app, "neg") as client:
            session = RepoSession(project, "local", OWNER, client, desired, specs, State(), machine=machine)
            observed = await session.observe()
            report = await Applier(session, observed).run(plan(desired, observed, ONLY_SMOKE))
            return [(r.id, r.status or "") for r in await client.list_runs()], report

    ((first, _),), _ = asyncio.run(apply_once(MachineCache.in_memory()))  # submitted elsewhere
    forged = "tb-smoke@" + "0" * 16
    wrong = cache()
    wrong.ours[first] = forged
    wrong.save()

    runs, report = asyncio.run(apply_once(cache()))
    assert [run for run, _ in runs] == [first]  # nothing was submitted again
    assert runs[0][1] in ("pending", "queued", "running")  # and the run was not stopped
    assert not any(r.ok and r.action.kind is ActionKind.SUBMIT and not r.adopted for r in report.results)
    state_file = (project.root / project.settings.state_file).read_text()
    assert forged not in state_file
