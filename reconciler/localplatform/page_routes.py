"""The web pages' addresses, with handlers imported on the first page request.

The pages (templates, charts) are most of the local platform's import cost, and a client using
the platform in process (`platform = "local"`) never asks for one: the handler modules load
when a page is first served. `/benchmarks/runs…` comes before `/benchmarks/{ref}`.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

PAGES: tuple[tuple[str, str, str], ...] = (
    ("/", "pages", "home"),
    ("/static/{name}", "pages", "static"),
    ("/favicon.ico", "pages", "static"),
    ("/benchmarks", "pages", "benchmarks"),
    ("/benchmarks/runs", "pages", "runs"),
    ("/benchmarks/runs/{ref}", "pages_run", "run_page"),
    ("/benchmarks/{ref:path}", "pages", "benchmark"),
    ("/secrets", "pages", "secrets"),
)


def _lazy(module: str, name: str) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        handler: Callable[[Request], Awaitable[Response]] = getattr(
            importlib.import_module(f"{__package__}.{module}"), name
        )
        return await handler(request)

    endpoint.__name__ = name
    return endpoint


def routes() -> list[Route]:
    """The page routes, registered after the API's."""
    return [Route(path, _lazy(module, name), methods=["GET"]) for path, module, name in PAGES]
