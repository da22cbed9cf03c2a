"""What every route shares: the error type, auth and workspace scope, paging, JSON in and out."""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .store import Store, StoreSession, Workspace

MAX_PAGE = 50
MAX_OFFSET = 1_000_000_000
MAX_JSON_DEPTH = 32  # a submit body nests 4 deep
_JSON_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
BENCHMARKS_NOT_ENABLED = "Benchmarks is not available for your account"
_GIT_IDENTITY = re.compile(r"^[a-z0-9](?:[a-z0-9._-]*)/[a-z0-9._-]+$")


class ApiError(Exception):
    """An error answer: `{message, code, field?, issues?, ...extra}` with an HTTP status."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str,
        *,
        field: str | None = None,
        issues: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.field = field
        self.issues = issues
        self.extra = extra or {}
        self.headers = headers

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message, "code": self.code}
        if self.field is not None:
            body["field"] = self.field
        if self.issues is not None:
            body["issues"] = self.issues
        body.update(self.extra)
        return body

    def response(self) -> Response:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def error_response(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> Response:
    return ApiError(status, message, code, headers=headers).response()


@dataclass
class Platform:
    """The app's shared state (`app.state.platform`)."""

    store: Store
    token: str | None
    seed: int
    speed: float
    clock: Callable[[], float]
    public_url: str | None = None  # where people open the pages; None: the address the request came to
    # simulated seconds a stopped run stays in its status before it shows `stopped` (sandbox cleanup)
    stop_cleanup: float = 0.0


@dataclass
class Context:
    """One authenticated, scoped request."""

    platform: Platform
    db: StoreSession
    ws: Workspace
    base: str
    now: float  # one clock reading for the whole request

    @property
    def public_base(self) -> str:
        """The base of every `platform_url`: an address a browser can open, not the in-process one."""
        return self.platform.public_url or self.base

    def benchmark_url(self, benchmark_id: str) -> str:
        return f"{self.public_base}/benchmarks/{benchmark_id}"

    def run_url(self, run_id: str) -> str:
        return f"{self.public_base}/benchmarks/runs/{run_id}"


def platform_of(request: Request) -> Platform:
    platform: Platform = request.app.state.platform
    return platform


def base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def check_token(request: Request, platform: Platform) -> None:
    if platform.token is None:
        return
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), platform.token.encode()):
        raise ApiError(401, "Invalid or missing API token", "UNAUTHORIZED")


def scope_of(request: Request) -> tuple[str, str]:
    """(kind, name) from exactly one of X-Osmosis-Workspace / X-Osmosis-Git."""
    workspace = request.headers.get("x-osmosis-workspace", "").strip()
    git = request.headers.get("x-osmosis-git", "").strip()
    if workspace and git:
        raise ApiError(
            400,
            "Send exactly one of X-Osmosis-Workspace and X-Osmosis-Git, not both",
            "WORKSPACE_SCOPE_HEADER_CONFLICT",
        )
    if workspace:
        return "workspace", workspace
    if git:
        identity = git.lower()
        if not _GIT_IDENTITY.match(identity):
            raise ApiError(400, f"X-Osmosis-Git must be <owner>/<repo>, got {git!r}", "GIT_SCOPE_HEADER_INVALID")
        return "git", identity
    raise ApiError(
        400,
        "A workspace scope is required: send X-Osmosis-Workspace: <name> or X-Osmosis-Git: <owner>/<repo>",
        "GIT_SCOPE_HEADER_REQUIRED",
    )


@contextmanager
def scoped(request: Request, *, benchmarks: bool = True) -> Iterator[Context]:
    """Authenticate, resolve the workspace (creating it on first sight) and open a session."""
    platform = platform_of(request)
    check_token(request, platform)
    kind, name = scope_of(request)
    now = platform.clock()
    with platform.store.session() as db:
        ws = db.workspace(kind, name, now)
        if benchmarks and not ws.benchmarks_enabled:
            raise ApiError(403, BENCHMARKS_NOT_ENABLED, "BENCHMARKS_NOT_ENABLED")
        yield Context(platform, db, ws, base_url(request), now)


def paging(request: Request) -> tuple[int, int]:
    """`limit` 1..50 (default 50) and `offset` 0..MAX_OFFSET from the query string."""
    limit = _int_param(request, "limit", MAX_PAGE)
    offset = _int_param(request, "offset", 0)
    if not 1 <= limit <= MAX_PAGE:
        raise ApiError(400, f"limit must be between 1 and {MAX_PAGE}, got {limit}", "VALIDATION", field="limit")
    check_offset("offset", offset)
    return limit, offset


def check_offset(name: str, offset: int) -> None:
    """400 unless 0 <= offset <= MAX_OFFSET: SQLite integers end at 2**63, and no list is that long."""
    if offset < 0:
        raise ApiError(400, f"{name} must be 0 or more, got {offset}", "VALIDATION", field=name)
    if offset > MAX_OFFSET:
        raise ApiError(400, f"{name} must be at most {MAX_OFFSET}, got {offset}", "VALIDATION", field=name)


def _int_param(request: Request, name: str, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer, got {raw!r}", "VALIDATION", field=name) from None


def page(key: str, items: list[Any], total: int, limit: int, offset: int) -> dict[str, Any]:
    more = offset + len(items) < total
    return {key: items, "total_count": total, "has_more": more, "next_offset": offset + len(items) if more else None}


async def json_body(request: Request) -> Any:
    """The request's JSON (`{}` when empty); 400 when it is not JSON or nests past MAX_JSON_DEPTH.

    The size of the body is bounded before it gets here (BodyLimitMiddleware).
    """
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "Request body is not valid JSON: not UTF-8 text", "VALIDATION") from None
    if _nesting(text) > MAX_JSON_DEPTH:
        raise ApiError(400, f"Request body nests deeper than {MAX_JSON_DEPTH} levels", "VALIDATION")
    try:
        body = json.loads(text, parse_constant=_not_json)
    except ValueError as exc:
        raise ApiError(400, f"Request body is not valid JSON: {exc}", "VALIDATION") from None
    out_of_range = _out_of_range(body)
    if out_of_range is not None:
        raise ApiError(400, f"Request body holds a number out of range: {out_of_range}", "VALIDATION")
    return body


def _not_json(constant: str) -> Any:
    """NaN and Infinity are Python's extensions, not JSON: stored, no answer could carry them again."""
    raise ValueError(f"{constant} is not a JSON number")


INT_RANGE = range(-(2**63), 2**63)  # what the store keeps as an integer


def _out_of_range(value: Any) -> str | None:
    """The first integer the store could not keep, as text; None when there is none."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool) and item not in INT_RANGE:
            return str(item) if len(str(item)) <= 30 else f"{str(item)[:27]}..."
    return None


def _nesting(text: str) -> int:
    """The deepest `[`/`{` nesting outside strings, counted without recursion (json.loads recurses)."""
    deepest = depth = 0
    for token in _JSON_STRUCTURE.findall(text):
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
    return deepest


async def json_object(request: Request) -> dict[str, Any]:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise ApiError(400, "Request body must be a JSON object", "VALIDATION")
    return body


def ok(data: dict[str, Any], status: int = 200) -> Response:
    return JSONResponse(data, status_code=status)
