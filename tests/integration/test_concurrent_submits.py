"""Machines that submit the same config at the same instant: the platform has no idempotency
key, so every submit is followed by a look-up that keeps the newest live copy and stops the rest."""

from __future__ import annotations

import asyncio
import shutil
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from urllib.parse import urlsplit

from reconciler.core.plan import plan
from reconciler.core.world import Policy
from reconciler.engine.apply import Applier, ApplyReport
from reconciler.engine.observe import marker_of
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.osmosis.asgi_transport import App, AsgiTransport
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Request, Response, StreamedResponse, Transport
from reconciler.settings import load_project

REPO = Path(__file__).resolve().parents[2]
MACHINES = 4
OWNER = "acme/race"


class SubmitBarrier:
    """The real platform app, except that no submit goes through until every machine has sent one,
    so each machine's pre-submit look-up has already found nothing."""

    def __init__(self, app: App, parties: int) -> None:
        self.inner = AsgiTransport(app)
        self.parties = parties
        self.arrived = 0
        self.all_here = asyncio.Event()

    async def send(self, request: Request) -> Response:
        if request.method == "POST" and urlsplit(request.url).path == "/api/cli/benchmark-runs":
            self.arrived += 1
            if self.arrived >= self.parties:
                self.all_here.set()
            await self.all_here.wait()
        return await self.inner.send(request)

    def stream(self, request: Request) -> AbstractAsyncContextManager[StreamedResponse]:
        return self.inner.stream(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def client_for(transport: Transport) -> OsmosisClient:
    return OsmosisClient(
        "http://local.osmosis",
        token=None,
        workspace="race",
        transport=transport,
        retry=RetryPolicy.disabled(),
        allow_insecure=True,
    )


def race(tmp_path: Path, *, shared_owner: bool = False) -> tuple[list[ApplyReport], list[tuple[str, str]]]:
    """MACHINES applies of tb-smoke whose submits all pass their look-ups before any lands:
    each machine's report, and (spec id, status) of every run afterwards."""
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text('workspace = "race"\n')
    app = create_app(tmp_path / "platform.sqlite3", speed=1.0)
    proj = load_project(tmp_path)
    desired, specs = load_desired(proj)

    async def machine(barrier: SubmitBarrier) -> ApplyReport:
        async with client_for(barrier) as client:
            session = RepoSession(proj, "local", OWNER, client, desired, specs, State(), shared_owner=shared_owner)
            observed = await session.observe()
            p = plan(desired, observed, Policy(targets=frozenset({"tb-smoke"})))
            return await Applier(session, observed).run(p)

    async def scenario() -> tuple[list[ApplyReport], list[tuple[str, str]]]:
        barrier = SubmitBarrier(app, MACHINES)
        reports = await asyncio.gather(*(machine(barrier) for _ in range(MACHINES)))
        async with client_for(AsgiTransport(app)) as client:
            runs = []
            for item in await client.list_runs():
                marker = marker_of(await client.get_run(item.id))
                runs.append((marker.spec_id if marker else "", item.status or ""))
        return list(reports), runs

    return asyncio.run(scenario())


def test_machines_submitting_one_config_at_the_same_instant_end_with_one_run_live(tmp_path: Path) -> None:
    reports, runs = race(tmp_path)
    statuses = [status for spec_id, status in runs if spec_id == "tb-smoke"]
    assert len(statuses) == MACHINES  # every machine did submit: the race happened
    assert sum(s in {"pending", "queued", "running"} for s in statuses) == 1
    assert statuses.count("stopped") == MACHINES - 1
    messages = [r.message for report in reports for r in report.results]
    assert all(r.ok for report in reports for r in report.results), messages
    assert sum("duplicate of" in m for m in messages) >= 1


def test_under_a_shared_owner_each_machine_stops_only_the_copy_it_submitted(tmp_path: Path) -> None:
    """A live copy of the same marker may be another origin-less repository's run
    (settings.Owner.shared): each machine stops its own submit when it is not the newest, and
    no other; one run stays live all the same."""
    reports, runs = race(tmp_path, shared_owner=True)
    statuses = [status for spec_id, status in runs if spec_id == "tb-smoke"]
    assert sum(s in {"pending", "queued", "running"} for s in statuses) == 1
    assert statuses.count("stopped") == MACHINES - 1
    messages = [r.message for report in reports for r in report.results]
    assert not any("duplicate of it" in m for m in messages), messages  # nobody stopped another's copy
    assert sum("then stopped it" in m for m in messages) == MACHINES - 1, messages


def test_a_stop_planned_before_the_owner_became_shared_is_refused_by_apply(tmp_path: Path) -> None:
    """A saved plan carries its stops; apply judges each again by the one rule
    (identity.stop_refusal), so the run stays live when the owner is shared by then."""
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text('workspace = "race"\n')
    app = create_app(tmp_path / "platform.sqlite3", speed=1.0)
    proj = load_project(tmp_path)
    desired, specs = load_desired(proj)

    async def scenario() -> tuple[list[tuple[bool, str]], list[str]]:
        async with client_for(AsgiTransport(app)) as client:
            session = RepoSession(proj, "local", OWNER, client, desired, specs, State())
            observed = await session.observe()
            await Applier(session, observed).run(plan(desired, observed, Policy(targets=frozenset({"tb-smoke"}))))
            observed = await session.observe()
            saved = plan(type(desired)(), observed, Policy(prune=True))  # no spec left: prune stops the run
            assert any(a.will_stop for a in saved.actions)
            shared = RepoSession(proj, "local", OWNER, client, desired, specs, State(), shared_owner=True)
            report = await Applier(shared, await shared.observe()).run(saved)
            statuses = [item.status or "" for item in await client.list_runs()]
        return [(r.ok, r.message) for r in report.results], statuses

    results, statuses = asyncio.run(scenario())
    assert statuses and all(s in {"pending", "queued", "running"} for s in statuses)  # still live
    assert any(not ok and "not stopped: reconciler stops no run marked with owner" in m for ok, m in results), results
