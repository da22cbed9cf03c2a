"""Reads a plan needs from a platform URL start while the spec files load (engine/observe.EarlyReads).
They may only ever change how fast a plan is: the same world is observed, invalid specs are still
the error reported, a spec that adopts a run still finds it, and a second look sees the platform anew."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.plan import plan
from reconciler.core.world import Observed, Policy
from reconciler.engine import other_core
from reconciler.engine.apply import Applier
from reconciler.engine.connection import open_client
from reconciler.engine.machine_cache import CACHE_DIR_ENV
from reconciler.engine.session import RepoSession, load_desired, open_session
from reconciler.errors import SpecError
from reconciler.settings import Project, load_project
from tests.e2e.workspace_repo import SMOKE_PAYLOAD
from tests.served_platform import served

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """`reconciler platform serve` on 127.0.0.1: early reads are for platforms across a network."""
    with served(tmp_path_factory.mktemp("platform")) as url_and_token:
        yield url_and_token


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, platform: tuple[str, str]) -> Project:
    """The example specs in a workspace of their own, with tb-smoke applied (so a state file exists)."""
    url, token = platform
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setenv("OSMOSIS_TOKEN", token)
    root = tmp_path / "repo"
    shutil.copytree(REPO / "specs", root / "specs")
    workspace = f"early-{tmp_path.name[-24:]}"
    (root / "reconciler.toml").write_text(f'platform = "{url}"\nworkspace = "{workspace}"\nowner = "acme/evals"\n')
    found = load_project(root)

    async def apply_smoke(session: RepoSession) -> None:
        observed = await session.observe()
        await Applier(session, observed).run(plan(session.desired, observed, Policy(targets=frozenset({"tb-smoke"}))))
        session.save_state()

    asyncio.run(in_session(found, apply_smoke, early_reads=False))
    return found


async def in_session(project: Project, work: Callable[[RepoSession], Any], *, early_reads: bool) -> Any:
    async with open_session(project, early_reads=early_reads) as session:
        return await work(session)


def observe(project: Project, *, early_reads: bool) -> Observed:
    async def look(session: RepoSession) -> Observed:
        return await session.observe()

    result: Observed = asyncio.run(in_session(project, look, early_reads=early_reads))
    return result


def submit_unmarked(project: Project) -> str:
    """A run someone else submitted to the same workspace (no ownership marker); its name."""

    async def submit() -> str:
        async with open_client(project) as connection:
            return (await connection.client.submit_run(SMOKE_PAYLOAD)).name

    return asyncio.run(submit())


def facts(observed: Observed) -> tuple[object, ...]:
    # the simulated runs move on between two looks: statuses are not compared
    runs = sorted((r.id, r.marker.spec_id if r.marker else None) for r in observed.runs)
    return runs, observed.others, sorted(observed.benchmarks), sorted(observed.secrets)


def test_reading_early_observes_the_same_world(project: Project) -> None:
    submit_unmarked(project)
    assert facts(observe(project, early_reads=True)) == facts(observe(project, early_reads=False))


def test_reading_early_loads_the_specs_on_another_core_and_observes_the_same_world(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a platform URL the spec files load in a forked child (engine/other_core.py) while
    the listing is read; what the session holds is what a load here gives."""
    started: list[other_core.Elsewhere[Any]] = []
    original = other_core.Elsewhere.__init__

    def recorded(self: other_core.Elsewhere[Any], compute: Callable[[], Any], **options: Any) -> None:
        original(self, compute, **options)
        started.append(self)

    monkeypatch.setattr(other_core.Elsewhere, "__init__", recorded)

    async def specs(session: RepoSession) -> tuple[object, object]:
        return session.desired, session.specs

    assert asyncio.run(in_session(project, specs, early_reads=True)) == load_desired(project)
    assert [loading.forked for loading in started] == [True]


def test_a_fresh_checkout_reads_early_from_what_this_machine_knows_and_observes_the_same(project: Project) -> None:
    submit_unmarked(project)
    (project.root / ".reconciler/state.json").unlink()  # a fresh checkout on the same machine
    early = observe(project, early_reads=True)
    assert facts(early) == facts(observe(project, early_reads=False))
    assert [r.marker.spec_id for r in early.runs if r.marker] == ["tb-smoke"]


@pytest.mark.parametrize(
    "url", ["https://127.0.0.1:9", "http://platform.example"], ids=["unreachable", "refused-insecure-url"]
)
def test_invalid_specs_are_still_the_error_reported_whatever_the_platform(project: Project, url: str) -> None:
    (project.root / "specs/runs/broken.toml").write_text("[experiment\n")

    async def look() -> None:
        async with open_session(project, platform_flag=url, early_reads=True) as session:
            await session.observe()

    with pytest.raises(SpecError, match=r"broken\.toml"):
        asyncio.run(look())


def test_a_spec_adopting_a_run_finds_it_although_the_early_listing_dropped_it(project: Project) -> None:
    name = submit_unmarked(project)
    observe(project, early_reads=False)  # this machine now knows the run is not ours: a listing drops it
    spec = project.root / "specs/runs/adopted.toml"
    smoke = (project.root / "specs/runs/tb-smoke.toml").read_text().split("[reconcile]")[0]
    spec.write_text(smoke + f'[reconcile]\nid = "adopted"\nadopt = "{name}"\n')
    observed = observe(project, early_reads=True)
    (adoption,) = observed.adoptions.values()
    assert adoption.run is not None and adoption.run.name == name
    assert facts(observed) == facts(observe(project, early_reads=False))


def test_a_second_look_in_the_same_session_reads_the_platform_again(project: Project) -> None:
    async def twice(session: RepoSession) -> tuple[Observed, Observed]:
        first = await session.observe()
        await asyncio.to_thread(submit_unmarked, project)
        return first, await session.observe()

    first, second = asyncio.run(in_session(project, twice, early_reads=True))
    assert second.others == first.others + 1
