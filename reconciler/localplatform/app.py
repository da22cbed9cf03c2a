"""The embedded Osmosis platform as a Starlette app: every endpoint of docs/platform-api.md §2.

    create_app(db_path, token=..., seed=..., speed=..., clock=..., faults=..., public_url=...)

- `token`: with one, `Authorization: Bearer <token>` must match (401 otherwise); None skips the
  check (in-process use).
- `seed`: run ids, names and every simulated outcome derive from it (with hashlib).
- `speed`: simulated seconds per clock second, fixed per run at submit.
- `clock`: epoch seconds (default `time.time`); inject one to drive time in tests.
- `faults`: latency, 5xx, 429 and truncated downloads (`faults.py`).
- `stop_cleanup`: simulated seconds between a stop request and the run showing `stopped`; the
  platform's docs: "The run moves to `stopped` once the platform finishes cleaning up its
  sandboxes." Until then it keeps its status (a run that would have ended sooner shows `stopped`
  then); a second stop is accepted.
  0 (the default) stops at once.
- `public_url`: the base of every `platform_url` the API answers with, so a link committed in
  a leaderboard opens in a browser. It defaults to `DEFAULT_PUBLIC_URL`, the address
  `reconciler platform serve` listens on by default (serve passes its real address); None
  names the address each request came to.

The same app serves the web pages (`pages.py`) at the addresses the API's `platform_url`s name.

Every response carries `X-Osmosis-Version-Status: current`; every error is JSON
`{message, code, field?, issues?}`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import page_routes, routes_benchmarks, routes_outputs, routes_runs, routes_secrets, testhooks
from .api import ApiError, Platform, error_response
from .bodylimit import BodyLimitMiddleware
from .defaults import DEFAULT_PUBLIC_URL
from .faults import Faults, FaultsMiddleware
from .outputs import OutputCache
from .signing import FILES_PREFIX
from .store import Store

VERSION_HEADER = (b"x-osmosis-version-status", b"current")
_HTTP_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


class VersionHeaderMiddleware:
    """Adds the version header to every response, and answers unexpected errors with JSON 500."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_header(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), VERSION_HEADER]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_header)
        except Exception:
            if not started:
                response = error_response(500, "Internal server error", "INTERNAL")
                await response(scope, receive, send_with_header)
            raise


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return exc.response()


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = "Not found" if exc.status_code == 404 else str(exc.detail)
    return error_response(
        exc.status_code, message, _HTTP_CODES.get(exc.status_code, "HTTP_ERROR"), dict(exc.headers or {})
    )


def routes() -> list[Route]:
    base = "/api/cli"
    runs = f"{base}/benchmark-runs"
    return [
        Route(f"{base}/benchmarks", routes_benchmarks.list_benchmarks, methods=["GET"]),
        Route(f"{base}/benchmarks/{{ref:path}}", routes_benchmarks.benchmark, methods=["GET"]),
        Route(runs, routes_runs.list_runs, methods=["GET"]),
        Route(runs, routes_runs.submit_run, methods=["POST"]),
        Route(f"{runs}/{{ref}}", routes_runs.run, methods=["GET"]),
        Route(f"{runs}/{{ref}}/logs", routes_runs.logs, methods=["GET"]),
        Route(f"{runs}/{{ref}}/stop", routes_runs.stop, methods=["POST"]),
        Route(f"{runs}/{{ref}}/outputs/manifest", routes_outputs.manifest, methods=["GET"]),
        Route(f"{runs}/{{ref}}/outputs/download-urls", routes_outputs.download_urls, methods=["POST"]),
        Route(f"{base}/environment-secrets", routes_secrets.list_secrets, methods=["GET"]),
        Route(f"{base}/environment-secrets", routes_secrets.set_secret, methods=["POST"]),
        Route(f"{base}/environment-secrets", routes_secrets.delete_secret, methods=["DELETE"]),
        Route(f"{FILES_PREFIX}/{{run_id}}/{{path:path}}", routes_outputs.output_file, methods=["GET"]),
        *page_routes.routes(),  # the web pages at the addresses `platform_url` names
        *testhooks.routes(),  # answer 404 unless the app was started with test hooks
    ]


def create_app(
    db_path: Path,
    *,
    token: str | None = None,
    seed: int = 0,
    speed: float = 600.0,
    clock: Callable[[], float] | None = None,
    faults: Faults | None = None,
    test_hooks: bool = False,
    bench_artifacts: tuple[int, int] | None = None,
    public_url: str | None = DEFAULT_PUBLIC_URL,
    stop_cleanup: float = 0.0,
) -> Starlette:
    if speed <= 0:
        raise ValueError(f"speed must be positive, got {speed}")
    clock = clock or time.time
    middleware = [Middleware(VersionHeaderMiddleware), Middleware(BodyLimitMiddleware)]
    if faults is not None and faults.active:
        middleware.append(Middleware(FaultsMiddleware, faults=faults, clock=clock))
    store = Store(Path(db_path))

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        store.close()  # served: close every connection on shutdown

    app = Starlette(
        routes=routes(),
        middleware=middleware,
        exception_handlers={ApiError: _api_error, HTTPException: _http_error},
        lifespan=lifespan,
    )
    platform = Platform(store, token, seed, speed, clock, public_url.rstrip("/") if public_url else None, stop_cleanup)
    app.state.platform = platform
    app.state.outputs = OutputCache(extra=testhooks.bulk_artifacts(*bench_artifacts) if bench_artifacts else None)
    app.state.test_hooks = testhooks.TestHooks(enabled=test_hooks)
    return app
