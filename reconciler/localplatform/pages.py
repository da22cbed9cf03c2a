"""The local platform's web pages: server-rendered HTML at the addresses the API's `platform_url`s name.

    /benchmarks                     the Benchmarks table
    /benchmarks/{id, key or name}   a benchmark: header, Leaderboard (`?rank_by=`), Benchmark Runs
    /benchmarks/runs                every run of the workspace
    /benchmarks/runs/{id or name}   a run: sidebar and the tabs of `pages_run.py`
    /secrets                        the workspace's secret records (names and scopes, never values)
    /static/{file}                  the one stylesheet and the icon (also at /favicon.ico)

Pages read the same store through the same view functions as the API (`views.py`,
`routes_*.py`), so a page and an API answer taken at the same clock reading never disagree.
They only read: the one write a page makes is a cookie.

Auth: with a token configured, a page needs `Authorization: Bearer <token>` or the session
cookie that `?token=<token>` sets (HttpOnly, SameSite=Lax; its value is an HMAC of the token,
never the token) before redirecting to the clean URL. Without a token (in-process use), every
page says in a banner that it is in local-only mode.

Workspace: `?workspace=<name>` (`git:<owner>/<repo>` for a git identity) picks one and
remembers it in a cookie; otherwise the workspace that owns the run or benchmark id in the path,
then the cookie's, then the first in the store. Every page names the workspace it shows. Pages
never create a workspace: the API does, the first time a client names one.

Every template is rendered with autoescape on; responses carry a Content-Security-Policy that
allows nothing but this origin's stylesheet and icon (no scripts at all).
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
from starlette.routing import Route

from ..core import scoring
from . import pages_format
from .api import BENCHMARKS_NOT_ENABLED, ApiError, Context, base_url, check_offset, platform_of
from .catalog import BY_KEY
from .routes_benchmarks import find_benchmark, parse_rank_by, ranked_candidates
from .routes_secrets import secret_item
from .runview import RunView, iso
from .store import Session, Workspace
from .views import benchmark_detail, benchmark_entry, leaderboard, run_item

SESSION_COOKIE = "osmosis_local_session"
WORKSPACE_COOKIE = "osmosis_local_workspace"
RUNS_PAGE = 25
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
RANK_LABELS: dict[str, str] = {
    "pass_at_1": "Pass@1",
    "pass_at_k": "Pass@k",
    "cost_per_task": "Cost / task",
    "time_per_task": "Time / task",
    "tokens_per_task": "Tokens / task",
}
ELIGIBILITY = (
    "its run finished, and the agent itself finished",
    "the run covered the full task list, or a parity set the benchmark publishes",
    "every task-and-attempt slot produced a result",
    "the agent has a pass@1 score",
)


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


async def static(request: Request) -> Response:
    found = static_file(request.path_params.get("name", "icon.svg"))  # /favicon.ico: the icon
    if found is None:
        return Response("Not found", status_code=404, media_type="text/plain")
    content, media_type = found
    return Response(
        content,
        media_type=media_type,
        headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"},
    )


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
    db: Session
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


# --- the pages -----------------------------------------------------------------------------


async def home(request: Request) -> Response:
    query = request.url.query
    return RedirectResponse("/benchmarks" + (f"?{query}" if query else ""), status_code=303)


@page_route
async def benchmarks(request: Request) -> Response:
    with page_scope(request) as page:
        page.title, page.nav = "Benchmarks", "benchmarks"
        if page.ws is None:
            return page.render("empty.html.j2")

        def build() -> Response:
            ctx = page.require_benchmarks()
            stats = ctx.db.benchmark_stats(ctx.ws, ctx.now)
            rows = []
            for row in ctx.db.benchmarks(ctx.ws):
                found = stats.get(row.id)
                rows.append({"entry": benchmark_entry(ctx, row, found), "last_run_id": found[2].id if found else None})
            return page.render("benchmarks.html.j2", rows=rows)

        return guarded(page, build)


def offset_param(request: Request, name: str) -> int:
    raw = request.query_params.get(name) or "0"
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer, got {raw!r}", "VALIDATION", field=name) from None
    check_offset(name, value)
    return value


def run_rows(ctx: Context, benchmark_id: str | None, offset: int) -> tuple[list[dict[str, Any]], int]:
    """A page of run list items (the API's `run_item`) and the total count."""
    found = ctx.db.runs(ctx.ws, benchmark_id=benchmark_id, limit=RUNS_PAGE, offset=offset)
    total = ctx.db.count_runs(ctx.ws, benchmark_id=benchmark_id)
    items = [run_item(RunView(r, ctx.db, ctx.now, ctx.base), BY_KEY[r.benchmark_key].name) for r in found]
    return items, total


def tie_notes(views: list[RunView], board: list[dict[str, Any]], rank_by: str) -> dict[int, str]:
    """Row position -> why the row shares its rank, with the numbers of the test behind it."""
    notes: dict[int, str] = {}
    if not board:
        return notes
    if rank_by in ("pass_at_1", "pass_at_k"):
        outcomes: dict[tuple[str, str | None, str], dict[str, list[bool]]] = {}
        for view in views:
            for agent, score in zip(view.agents, view.scores, strict=True):
                outcomes[(view.row.id, agent.effective_harness, agent.model)] = score.outcomes
        leader = board[0]
        leader_first = scoring.first_attempts(
            outcomes.get((leader["run"]["id"], leader["harness"], leader["model"]), {})
        )
        tied = [i for i, e in enumerate(board) if e["tied"] and i > 0]
        if leader["tied"]:
            notes[0] = (
                f"Leader. {len(tied)} entrant(s) cannot be told apart from it: an exact two-sided McNemar test on"
                " first attempts (α = 0.05, tasks both ran) finds no significant difference, so they share rank 1."
            )
        for i in tied:
            entry = board[i]
            mine = scoring.first_attempts(outcomes.get((entry["run"]["id"], entry["harness"], entry["model"]), {}))
            b, c = scoring.discordant_pairs(leader_first, mine)
            shared = len(leader_first.keys() & mine.keys())
            p = scoring.mcnemar_exact_p(b, c)
            notes[i] = (
                f"Tied with the leader: on the {shared} tasks both ran, the leader alone passed {b} and this entrant"
                f" alone passed {c} on the first attempt; exact McNemar p = {p:.3f} ≥ 0.05, so the difference is not"
                " significant."
            )
    else:
        label = RANK_LABELS[rank_by].lower()
        for i, entry in enumerate(board):
            if entry["tied"]:
                notes[i] = f"Shares rank {entry['rank']}: exactly the same {label} as the entrants it is listed with."
    return notes


@page_route
async def benchmark(request: Request) -> Response:
    ref = request.path_params["ref"]
    with page_scope(request, benchmark_ref=ref) as page:
        page.nav = "benchmarks"

        def build() -> Response:
            ctx = page.require_benchmarks()
            rank_by = parse_rank_by(request.query_params.get("rank_by") or "pass_at_1")
            row = find_benchmark(ctx, ref)
            stats = ctx.db.benchmark_stats(ctx.ws, ctx.now).get(row.id)
            detail = benchmark_detail(ctx, row, stats)
            views = ranked_candidates(ctx, row)
            board = leaderboard(views, BY_KEY[row.key], rank_by)
            offset = offset_param(request, "runs_offset")
            runs, total = run_rows(ctx, row.id, offset)
            page.title = detail["name"]
            return page.render(
                "benchmark.html.j2",
                benchmark=detail,
                board=board,
                notes=tie_notes(views, board, rank_by),
                rank_by=rank_by,
                rank_labels=RANK_LABELS,
                eligibility=ELIGIBILITY,
                runs=runs,
                runs_total=total,
                runs_offset=offset,
                runs_page=RUNS_PAGE,
            )

        return guarded(page, build)


@page_route
async def runs(request: Request) -> Response:
    with page_scope(request) as page:
        page.title, page.nav = "Benchmark Runs", "runs"
        if page.ws is None:
            return page.render("empty.html.j2")

        def build() -> Response:
            ctx = page.require_benchmarks()
            offset = offset_param(request, "offset")
            items, total = run_rows(ctx, None, offset)
            return page.render("runs.html.j2", runs=items, runs_total=total, runs_offset=offset, runs_page=RUNS_PAGE)

        return guarded(page, build)


@page_route
async def secrets(request: Request) -> Response:
    with page_scope(request) as page:
        page.title, page.nav = "Secrets", "secrets"
        if page.ws is None:
            return page.render("empty.html.j2")

        def build() -> Response:
            ctx = page.ctx
            rows = [secret_item(r) for r in ctx.db.secrets(ctx.ws, ("workspace", "user"))]
            return page.render("secrets.html.j2", secrets=rows)

        return guarded(page, build)


def routes() -> list[Route]:
    """The page routes, registered after the API's; `/benchmarks/runs…` before `/benchmarks/{ref}`."""
    from . import pages_run

    return [
        Route("/", home, methods=["GET"]),
        Route("/static/{name}", static, methods=["GET"]),
        Route("/favicon.ico", static, methods=["GET"]),
        Route("/benchmarks", benchmarks, methods=["GET"]),
        Route("/benchmarks/runs", runs, methods=["GET"]),
        Route("/benchmarks/runs/{ref}", pages_run.run_page, methods=["GET"]),
        Route("/benchmarks/{ref:path}", benchmark, methods=["GET"]),
        Route("/secrets", secrets, methods=["GET"]),
    ]
