"""Apply with one action failing: the others still happen, and the report says which failed."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from reconciler.core.plan import ActionKind, plan
from reconciler.core.world import Policy
from reconciler.engine.apply import Applier
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.osmosis.asgi_transport import AsgiTransport
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Headers, Request, Response, StreamedResponse
from reconciler.settings import load_project

REPO = Path(__file__).resolve().parents[2]


class FailingSubmits:
    """The real platform app, except that submits for one spec answer 500 without creating a run."""

    def __init__(self, app: Any, failing_spec: str) -> None:
        self.inner = AsgiTransport(app)
        self.failing_spec = failing_spec

    async def send(self, request: Request) -> Response:
        if request.method == "POST" and urlsplit(request.url).path == "/api/cli/benchmark-runs":
            body = json.loads(request.body or b"{}")
            if body.get("env_config", {}).get("RECONCILER_SPEC", "").startswith(f"{self.failing_spec}@"):
                error = json.dumps({"message": "internal error", "code": "INTERNAL"}).encode()
                return Response(500, Headers([("content-type", "application/json")]), error)
        return await self.inner.send(request)

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[StreamedResponse]:
        async with self.inner.stream(request) as response:
            yield response

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text('workspace = "partial"\n')
    return tmp_path


def test_one_failed_submit_does_not_stop_the_others_and_keeps_its_intent(project: Path) -> None:
    async def scenario() -> tuple[list[tuple[str, bool, str]], State]:
        app = create_app(project / "platform.sqlite3", speed=1.0)
        client = OsmosisClient(
            "http://local.osmosis",
            token=None,
            workspace="partial",
            transport=FailingSubmits(app, "tb-compare"),
            retry=RetryPolicy.disabled(),
            allow_insecure=True,
        )
        proj = load_project(project)
        desired, specs = load_desired(proj)
        async with client:
            session = RepoSession(proj, "local", "partial", client, desired, specs, State())
            observed = await session.observe()
            p = plan(desired, observed, Policy())
            report = await Applier(session, observed).run(p)
        results = [
            (r.action.spec_id or "", r.ok, r.message) for r in report.results if r.action.kind is ActionKind.SUBMIT
        ]
        return results, session.state

    results, state = asyncio.run(scenario())
    by_spec = {spec: (ok, message) for spec, ok, message in results}
    assert by_spec["tb-smoke"][0] and by_spec["hle-parity"][0]
    assert not by_spec["tb-compare"][0] and "outcome unknown" in by_spec["tb-compare"][1]
    assert set(state.specs) == {"tb-smoke", "hle-parity"}
    assert [i.spec_id for i in state.intents] == ["tb-compare"]  # the next plan looks again before submitting
