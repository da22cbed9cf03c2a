"""A plan never acts on runs that are not ours, so observing keeps them as a count, not as models
(a listing of 10,000 runs costs the memory of the runs we own); `status` asks for them in full."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from reconciler.core.plan import plan
from reconciler.core.world import Observed, Policy
from reconciler.engine.apply import Applier
from reconciler.engine.machine_cache import CACHE_DIR_ENV
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.settings import load_project
from tests.inprocess_client import inprocess_client

REPO = Path(__file__).resolve().parents[2]
OWNER = "acme/evals"
ONLY_SMOKE = Policy(targets=frozenset({"tb-smoke"}))
STRANGERS = 3


def observe_twice(tmp_path: Path) -> tuple[Observed, Observed]:
    """Our smoke run and three runs someone else submitted; observed by default, then with `unmanaged`."""
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text('workspace = "team"\n')
    app = create_app(tmp_path / "platform.sqlite3", speed=1.0)
    project = load_project(tmp_path)
    desired, specs = load_desired(project)
    smoke = next(d for d in desired.runs if d.spec.id == "tb-smoke")

    async def main() -> tuple[Observed, Observed]:
        client = inprocess_client(app, "team")
        async with client:
            session = RepoSession(project, "local", OWNER, client, desired, specs, State())
            observed = await session.observe()
            await Applier(session, observed).run(plan(desired, observed, ONLY_SMOKE))
            for _ in range(STRANGERS):
                await client.submit_run(smoke.spec.config.to_payload())  # no marker: not ours
            return await session.observe(), await session.observe(unmanaged=True)

    return asyncio.run(main())


@pytest.fixture
def observed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Observed, Observed]:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return observe_twice(tmp_path)


def test_observing_for_a_plan_keeps_only_our_runs_and_counts_the_others(observed: tuple[Observed, Observed]) -> None:
    for_plan, _ = observed
    assert [r.marker.spec_id for r in for_plan.runs if r.marker] == ["tb-smoke"]
    assert len(for_plan.runs) == 1
    assert for_plan.others == STRANGERS and for_plan.listed == STRANGERS + 1


def test_a_plan_still_reports_how_many_runs_it_leaves_alone(observed: tuple[Observed, Observed]) -> None:
    for_plan, in_full = observed
    desired, _ = load_desired(load_project(REPO))
    assert plan(desired, for_plan, Policy()).unmanaged_runs == STRANGERS
    assert plan(desired, in_full, Policy()).unmanaged_runs == STRANGERS


def test_observing_with_unmanaged_keeps_every_listed_run(observed: tuple[Observed, Observed]) -> None:
    _, in_full = observed
    assert len(in_full.runs) == STRANGERS + 1 and in_full.others == 0
    assert sum(r.marker is None for r in in_full.runs) == STRANGERS
