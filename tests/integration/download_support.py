"""Helpers for download tests against the real local platform (in-process or served)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from reconciler.localplatform import Faults, create_app
from reconciler.osmosis.asgi_transport import AsgiTransport
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Request, Response, StreamedResponse
from tests.served_platform import served

EPOCH = 1_700_000_000.0
ALL = ("summary", "results", "artifacts", "logs")


async def _no_sleep(_: float) -> None:
    return None


NO_WAIT = RetryPolicy(
    max_attempts=8, base_delay=0.0, max_delay=0.0, max_total_seconds=30.0, jitter=False, sleep=_no_sleep
)


class Clock:
    def __init__(self, now: float = EPOCH) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def payload(tasks: int = 4, model: str = "openai/gpt-5-mini") -> dict[str, Any]:
    from reconciler.localplatform.catalog import BY_KEY

    names = [t.name for t in BY_KEY["terminal-bench-2-1"].tasks[:tasks]]
    return {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "agents": [{"model": {"type": "provider", "model": model, "api_key_secret": "OPENAI_API_KEY"}, "env": {}}],
        "tasks_config": {"task_names": names},
    }


class Recording:
    """The in-process transport, remembering (method, path, Range header, status) of every exchange."""

    def __init__(self, app: Any) -> None:
        self.inner = AsgiTransport(app)
        self.seen: list[tuple[str, str, str | None, int]] = []

    def _note(self, request: Request, status: int) -> None:
        self.seen.append((request.method, urlsplit(request.url).path, request.headers.get("Range"), status))

    async def send(self, request: Request) -> Response:
        response = await self.inner.send(request)
        self._note(request, response.status)
        return response

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[StreamedResponse]:
        async with self.inner.stream(request) as response:
            self._note(request, response.status)
            yield response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def file_requests(self) -> list[tuple[str, str | None, int]]:
        return [(path, asked, status) for _, path, asked, status in self.seen if path.startswith("/outputs/")]


def local_client(
    db: Path,
    clock: Clock,
    faults: Faults | None = None,
    retry: RetryPolicy = NO_WAIT,
    recording: list[Recording] | None = None,
) -> OsmosisClient:
    transport = Recording(create_app(db, clock=clock, faults=faults))
    if recording is not None:
        recording.append(transport)
    return OsmosisClient(
        "http://local.osmosis", token=None, workspace="w", transport=transport, retry=retry, allow_insecure=True
    )


def finished_run(db: Path, clock: Clock, tasks: int = 4) -> tuple[str, str]:
    """Submit a run and move the clock past its end; returns (id, name)."""

    async def go() -> tuple[str, str]:
        async with local_client(db, clock) as client:
            result = await client.submit_run(payload(tasks))
            clock.now += 30 * 24 * 3600
            detail = await client.get_run(result.id)
            assert detail.benchmark_run.status in ("finished", "failed"), detail.benchmark_run.status
            return result.id, result.name

    return asyncio.run(go())


def served_files(db: Path, clock: Clock, run_id: str, types: tuple[str, ...] = ALL) -> dict[str, bytes]:
    """Every file of the run, as a fault-free platform serves it (the reference bytes)."""

    async def go() -> dict[str, bytes]:
        async with local_client(db, clock) as client:
            manifest = await client.get_manifest(run_id, types)
            urls = await client.get_download_urls(run_id, [(f.path, f.token) for f in manifest.files])
            out = {}
            for item in urls.items:
                async with client.open_presigned(item.url) as response:
                    assert response.status == 200
                    out[item.path] = b"".join([chunk async for chunk in response.chunks()])
            return out

    return asyncio.run(go())


def on_disk(run_dir: Path) -> dict[str, bytes]:
    return {
        p.relative_to(run_dir).as_posix(): p.read_bytes()
        for p in run_dir.rglob("*")
        if p.is_file() and not p.name.startswith(".")
    }


@contextmanager
def served_platform(db: Path, *args: str) -> Iterator[tuple[str, str]]:
    """`reconciler platform serve --port 0` in a subprocess; yields (url, token)."""
    with served(db.parent / "serve", "--token", "download-test-token", *args, db=db) as address:
        yield address


def remote_client(url: str, token: str, retry: RetryPolicy = NO_WAIT) -> OsmosisClient:
    return OsmosisClient(url, token=token, workspace="w", retry=retry)


def cli_env(url: str, token: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "RECONCILER_"))}
    env.update({"OSMOSIS_PLATFORM_URL": url, "OSMOSIS_TOKEN": token, "CI": ""})
    return env
