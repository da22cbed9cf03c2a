"""What every local platform page shares: templates, static files, auth, the workspace choice, the error frame.

`pages.py` and `pages_run.py` build their pages on this; it knows no page of its own.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote, unquote, urlencode

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from . import pages_format
from .api import BENCHMARKS_NOT_ENABLED, ApiError, Context, base_url, check_offset, platform_of
from .runview import iso
from .store import StoreSession, Workspace

SESSION_COOKIE = "osmosis_local_session"
WORKSPACE_COOKIE = "osmosis_local_workspace"
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}


# --- templates and static files ------------------------------------------------------------


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reconciler.localplatform", "templates"),
        autoescape=True,
        finalize=pages_format.shown,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pages_format.FILTERS)
    return env


@cache
def static_file(name: str) -> tuple[bytes, str] | None:
    """(content, media type) of a packaged static file, or None."""
    suffix = name[name.rfind(".") :] if "." in name else ""
    if "/" in name or name.startswith(".") or suffix not in STATIC_TYPES:
        return None
    path = resources.files("reconciler.localplatform").joinpath("static", name)
    if not path.is_file():
        return None
    return path.read_bytes(), STATIC_TYPES[suffix]


def static_url(name: str) -> str:
    """The file's URL with a content hash, so a changed stylesheet is never served stale."""
    found = static_file(name)
    version = hashlib.sha256(found[0]).hexdigest()[:10] if found else "0"
    return f"/static/{name}?v={version}"


# --- auth ----------------------------------------------------------------------------------


def session_value(token: str) -> str:
    """The cookie a browser keeps: an HMAC of the token, so the cookie is never a usable API token."""
    return hmac.new(token.encode(), b"reconciler-localplatform-pages", hashlib.sha256).hexdigest()


def authorized(request: Request, token: str | None) -> bool:
    if token is None:
        return True
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
        return True
    cookie = request.cookies.get(SESSION_COOKIE)
    return cookie is not None and hmac.compare_digest(cookie.encode(), session_value(token).encode())


def clean_url(request: Request, drop: str) -> str:
    """This request's path and query without the parameter `drop` (a relative URL)."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != drop]
    query = urlencode(kept)
    return request.url.path + (f"?{query}" if query else "")


# --- workspace and page scope --------------------------------------------------------------


def workspace_param(ws: Workspace) -> str:
    return ws.name if ws.kind == "workspace" else f"git:{ws.name}"


def workspace_label(ws: Workspace) -> str:
    return ws.name if ws.kind == "workspace" else f"{ws.name} (git)"


def find_workspace(workspaces: list[Workspace], value: str) -> Workspace | None:
    """By `?workspace=` value: `git:<identity>` for a git identity, else a name (workspace kind first)."""
    if value.startswith("git:"):
        return next((w for w in workspaces if w.kind == "git" and w.name == value[4:].lower()), None)
    for kind in ("workspace", "git"):
        found = next((w for w in workspaces if w.kind == kind and w.name == value), None)
        if found is not None:
            return found
    return None


@dataclass
class Page:
    """One authenticated page request: its store session, workspace and what every template shows."""

    request: Request
    db: StoreSession
    now: float
    local_only: bool
    workspaces: list[Workspace]
    ws: Workspace | None
    default_ws: Workspace | None  # the one a link without `?workspace=` would show
    remember: Workspace | None = None  # set the workspace cookie to this one
    title: str = ""
    nav: str = ""

    @property
    def ctx(self) -> Context:
        if self.ws is None:
            raise ApiError(404, "This platform has no workspace yet", "WORKSPACE_NOT_FOUND")
        return Context(platform_of(self.request), self.db, self.ws, base_url(self.request), self.now)

    def require_benchmarks(self) -> Context:
        ctx = self.ctx
        if not ctx.ws.benchmarks_enabled:
            raise ApiError(403, BENCHMARKS_NOT_ENABLED, "BENCHMARKS_NOT_ENABLED")
        return ctx

    def url(self, path: str, **params: Any) -> str:
        """A link inside the pages: carries `workspace` when the shown one is not the default."""
        items: list[tuple[str, str]] = []
        if self.ws is not None and self.default_ws is not None and self.ws.id != self.default_ws.id:
            items.append(("workspace", workspace_param(self.ws)))
        for key, value in params.items():
            if value is None or value == "" or value == []:
                continue
            if isinstance(value, list | tuple):
                items += [(key, str(v)) for v in value]
            else:
                items.append((key, str(value)))
        return quote(path, safe="/@:") + (f"?{urlencode(items)}" if items else "")

    @staticmethod
    def param(ws: Workspace) -> str:
        return workspace_param(ws)

    @staticmethod
    def label(ws: Workspace) -> str:
        return workspace_label(ws)

    def span(self, start: str | None, end: str | None) -> float | None:
        return pages_format.span(start, end, self.now)

    @property
    def now_iso(self) -> str:
        return iso(self.now)

    def age(self, timestamp: str | None) -> str:
        return pages_format.age(timestamp, self.now)

    def render(self, template: str, status: int = 200, **data: Any) -> Response:
        html = environment().get_template(template).render(page=self, static_url=static_url, **data)
        response = HTMLResponse(html, status_code=status, headers=page_headers())
        if self.remember is not None:
            response.set_cookie(
                WORKSPACE_COOKIE,
                quote(workspace_param(self.remember), safe=""),
                max_age=30 * 86400,
                httponly=True,
                samesite="lax",
            )
        return response


def page_headers() -> dict[str, str]:
    return {
        "Content-Security-Policy": CSP,
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "X-Frame-Options": "DENY",
    }


@contextmanager
def page_scope(request: Request, *, run_ref: str | None = None, benchmark_ref: str | None = None) -> Iterator[Page]:
    """Authenticate (the caller has), open a session and choose the workspace (see the module docstring)."""
    platform = platform_of(request)
    now = platform.clock()
    with platform.store.session() as db:
        workspaces = db.workspaces()
        by_id = {w.id: w for w in workspaces}
        cookie = unquote(request.cookies.get(WORKSPACE_COOKIE, ""))
        default_ws = (find_workspace(workspaces, cookie) if cookie else None) or (workspaces[0] if workspaces else None)
        ws, remember = default_ws, None
        asked = request.query_params.get("workspace")
        owner: int | None = None
        if run_ref is not None:
            found = db.run(None, run_ref)
            owner = found.workspace_id if found is not None else None
        elif benchmark_ref is not None:
            owner = db.benchmark_workspace(benchmark_ref)
        if asked:
            ws = remember = find_workspace(workspaces, asked)
            if ws is None:
                page = Page(request, db, now, platform.token is None, workspaces, None, default_ws)
                raise PageError(page, ApiError(404, f"No workspace named {asked!r} on this platform", "NOT_FOUND"))
        elif owner is not None:
            ws = by_id.get(owner, ws)
        yield Page(request, db, now, platform.token is None, workspaces, ws, default_ws, remember)


class PageError(Exception):
    """An error to render inside a page frame that already knows its workspace."""

    def __init__(self, page: Page, error: ApiError) -> None:
        super().__init__(error.message)
        self.page = page
        self.error = error


_TITLES = {400: "Bad request", 401: "Sign in needed", 403: "Not available", 404: "Not found", 409: "Conflict"}


def error_page(request: Request, page: Page | None, error: ApiError) -> Response:
    if page is None:
        platform = platform_of(request)
        with platform.store.session() as db:
            page = Page(request, db, platform.clock(), platform.token is None, [], None, None)
            return _render_error(page, error)
    return _render_error(page, error)


def _render_error(page: Page, error: ApiError) -> Response:
    page.title = _TITLES.get(error.status, "Error")
    response = page.render("error.html.j2", status=error.status, error=error, heading=page.title)
    if error.status == 401:
        response.headers["WWW-Authenticate"] = 'Bearer realm="osmosis-local-platform"'
    return response


Handler = Callable[[Request], Awaitable[Response]]


def page_route(handler: Handler) -> Handler:
    """Wrap a page handler: `?token=` redirects, the auth check, and errors rendered as HTML."""

    async def endpoint(request: Request) -> Response:
        platform = platform_of(request)
        given = request.query_params.get("token")
        if given is not None:
            if platform.token is not None and not hmac.compare_digest(given.encode(), platform.token.encode()):
                return error_page(request, None, _unauthorized("The token in the link is not this platform's token."))
            response = RedirectResponse(clean_url(request, "token"), status_code=303, headers=page_headers())
            if platform.token is not None:
                response.set_cookie(
                    SESSION_COOKIE, session_value(platform.token), max_age=7 * 86400, httponly=True, samesite="lax"
                )
            return response
        if not authorized(request, platform.token):
            return error_page(request, None, _unauthorized("This page needs the platform's token."))
        try:
            return await handler(request)
        except PageError as exc:
            return error_page(request, exc.page, exc.error)
        except ApiError as exc:
            return error_page(request, None, exc)

    endpoint.__name__ = handler.__name__
    endpoint.__doc__ = handler.__doc__
    return endpoint


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, message, "UNAUTHORIZED")


def guarded(page: Page, build: Callable[[], Response]) -> Response:
    """Run `build`, rendering any API error inside this page's frame (its workspace named)."""
    try:
        return build()
    except ApiError as exc:
        raise PageError(page, exc) from None


def offset_param(request: Request, name: str) -> int:
    raw = request.query_params.get(name) or "0"
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer, got {raw!r}", "VALIDATION", field=name) from None
    check_offset(name, value)
    return value
