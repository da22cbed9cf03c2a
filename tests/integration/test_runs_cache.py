"""`reconciler runs` says whose each run is. A run's marker never changes once the run exists,
so what this machine read once (here or in a plan) answers the next look: only runs it has
never seen are read from the platform."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.identity import Marker, fingerprint, marked_payload
from reconciler.core.world import Observed
from reconciler.engine.connection import Connection
from reconciler.engine.machine_cache import CACHE_DIR_ENV, MachineCache
from reconciler.engine.runs_view import list_workspace_runs
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.settings import Project, load_project
from reconciler.specs.loader import discover, load_specs
from tests.inprocess_client import inprocess_client, refusing_run_details

REPO = Path(__file__).resolve().parents[2]
OWNER = "acme/evals"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text(f'workspace = "look"\nowner = "{OWNER}"\n')
    return load_project(tmp_path)


def connection(app: Any) -> Connection:
    return Connection(inprocess_client(app, "look"), "local", OWNER, "look", None)


def owners(app: Any, project: Project) -> dict[str, str]:
    """Run name -> the owner `reconciler runs` shows."""

    async def look() -> dict[str, str]:
        conn = connection(app)
        async with conn.client:
            return {row.name: row.owner for row in await list_workspace_runs(conn, project)}

    return asyncio.run(look())


@pytest.fixture
def app(project: Project, tmp_path: Path) -> Any:
    """The platform with three runs of one config: ours, another repository's, and an unmarked one."""
    app = create_app(tmp_path / "platform.sqlite3", speed=1.0)
    specs = load_specs(discover([project.specs_path]), project.root, "specs").run_specs
    smoke = next(s for s in specs if s.id == "tb-smoke")
    ours = Marker(owner=OWNER, spec_id="tb-smoke", fingerprint=fingerprint(smoke.config))
    theirs = Marker(owner="acme/other", spec_id="tb-smoke", fingerprint=fingerprint(smoke.config))

    async def submit() -> None:
        async with inprocess_client(app, "look") as client:
            for body in (marked_payload(smoke.config, ours), marked_payload(smoke.config, theirs)):
                await client.submit_run(body)
            await client.submit_run(smoke.config.to_payload())

    asyncio.run(submit())
    return app


def test_a_second_look_labels_every_run_without_reading_any_again(app: Any, project: Project) -> None:
    first = owners(app, project)
    assert sorted(first.values()) == ["other owner acme/other", "spec tb-smoke", "unmanaged"]
    assert owners(refusing_run_details(app), project) == first


def test_a_cache_written_before_other_owners_were_kept_is_read_anew(app: Any, project: Project) -> None:
    """Version 2 caches did not tell an unmarked run from another owner's: they are not trusted."""
    first = owners(app, project)
    cache = MachineCache.open(platform="local", scope="look", owner=OWNER)
    assert cache.path is not None
    doc = json.loads(cache.path.read_text())
    doc.pop("foreign")
    cache.path.write_text(json.dumps({**doc, "version": 2}))
    assert owners(app, project) == first
    assert MachineCache.open(platform="local", scope="look", owner=OWNER).foreign


def test_a_plan_knows_the_runs_a_look_read(app: Any, project: Project) -> None:
    """One cache for both: after `runs`, a plan on this machine reads no run to know it is ours."""
    owners(app, project)
    desired, specs = load_desired(project)

    async def observe() -> Observed:
        client = inprocess_client(refusing_run_details(app), "look")
        async with client:
            machine = MachineCache.open(platform="local", scope="look", owner=OWNER)
            return await RepoSession(
                project, "local", OWNER, client, desired, specs, State(), machine=machine
            ).observe()

    observed = asyncio.run(observe())
    assert [(r.marker.owner, r.marker.spec_id) for r in observed.runs if r.marker] == [(OWNER, "tb-smoke")]
    assert observed.others == 2


def test_two_checkouts_on_the_local_platform_keep_apart_what_they_learned(tmp_path: Path) -> None:
    """Each local database numbers its runs from the same seed: the same run id in two checkouts
    is two different runs, so what one checkout learned must not label the other's."""
    from reconciler.engine.connection import connect_project

    paths = []
    for name in ("a", "b"):
        root = tmp_path / name
        (root / "specs").mkdir(parents=True)
        (root / "reconciler.toml").write_text(f'workspace = "look"\nowner = "{OWNER}"\n')
        conn = connect_project(load_project(root), platform_flag="local", workspace_flag=None)
        cache = conn.machine_cache()
        cache.not_ours.add("run-1")
        cache.save()
        paths.append(cache.path)
    assert paths[0] != paths[1]
    assert all(path is not None and path.is_file() for path in paths)
