"""Has this config been submitted? Asked of the platform: an entry of the per-machine cache
saying a run is not ours may shape a plan, but it never lets apply submit a config again."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from reconciler.core.plan import ActionKind, plan
from reconciler.core.world import Policy
from reconciler.engine.apply import Applier, ApplyReport
from reconciler.engine.machine_cache import CACHE_DIR_ENV, NotOursCache
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.osmosis.asgi_transport import AsgiTransport
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy
from reconciler.settings import load_project

REPO = Path(__file__).resolve().parents[2]
OWNER = "acme/evals"
ONLY_SMOKE = Policy(targets=frozenset({"tb-smoke"}))


def test_a_run_wrongly_cached_as_not_ours_is_adopted_not_submitted_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text('workspace = "neg"\n')
    app = create_app(tmp_path / "platform.sqlite3", speed=1.0)
    project = load_project(tmp_path)
    desired, specs = load_desired(project)

    def cache() -> NotOursCache:
        return NotOursCache.open(platform="local", scope="neg", owner=OWNER)

    async def apply_once() -> tuple[list[str], ApplyReport]:
        client = OsmosisClient(
            "http://local.osmosis",
            token=None,
            workspace="neg",
            transport=AsgiTransport(app),
            retry=RetryPolicy.disabled(),
            allow_insecure=True,
        )
        async with client:
            # a cold checkout (no state file) on a machine whose cache is wrong
            session = RepoSession(project, "local", OWNER, client, desired, specs, State(), not_ours=cache())
            observed = await session.observe()
            p = plan(desired, observed, ONLY_SMOKE)
            report = await Applier(session, observed).run(p)
            return [r.id for r in await client.list_runs()], report

    (first,), _ = asyncio.run(apply_once())
    wrong = cache()
    wrong.runs.add(first)
    wrong.save()

    runs, report = asyncio.run(apply_once())
    (result,) = report.results
    assert result.action.kind is ActionKind.SUBMIT  # the plan trusted the cache ...
    assert result.adopted and runs == [first]  # ... the submit did not
    assert first not in cache().runs
