"""Benchmark runs: list, submit, detail, logs and stop."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..core.world import RunStatus
from .api import ApiError, Context, json_object, ok, page, paging, scoped
from .catalog import BY_KEY
from .records import RunRow
from .runview import RunView, sim_time
from .submit import submit
from .timeline import events
from .views import run_detail, run_item

MAX_LOG_PAGE = 200
DEFAULT_LOG_PAGE = 50
_CURSOR = re.compile(r"^c(\d+)$")


def find_run(ctx: Context, ref: str) -> RunView:
    row = ctx.db.run(ctx.ws, ref)
    if row is None:
        raise ApiError(404, f"Benchmark run not found: {ref}", "RUN_NOT_FOUND")
    return RunView(row, ctx.db, ctx.now, ctx.public_base)


async def list_runs(request: Request) -> Response:
    """One page of runs; the body is byte for byte what `ok(page(...))` of the items would send."""
    with scoped(request) as ctx:
        limit, offset = paging(request)
        benchmark_id = request.query_params.get("benchmark") or None
        key = (ctx.db.version(), ctx.ws.id, benchmark_id, limit, offset, ctx.public_base)
        kept = ctx.platform.store.kept_page(key)
        if isinstance(kept, ListedPage):
            if kept.still_at(ctx.now):
                return Response(kept.body, media_type="application/json")
            rows, total = kept.rows, kept.total  # nothing was written since: the same runs
        else:
            rows = tuple(ctx.db.runs(ctx.ws, benchmark_id=benchmark_id, limit=limit, offset=offset))
            total = ctx.db.count_runs(ctx.ws, benchmark_id=benchmark_id)
        listed = [_listed(ctx, row) for row in rows]
        items = [item for item, _, _ in listed]
        meta = page("benchmark_runs", items, total, limit, offset)
        del meta["benchmark_runs"]
        tail = _json(meta)[1:]  # `"total_count":...}`: page()'s keys after the items, in its order
        body = b'{"benchmark_runs":[' + b",".join(items) + b"]," + tail
        windows = tuple((start, end) for _, start, end in listed)
        ctx.platform.store.keep_page(key, ListedPage(body, rows, total, windows))
        return Response(body, media_type="application/json")


@dataclass(frozen=True)
class ListedPage:
    """A rendered run-list page: its runs as stored, their count, and for each run the simulated
    times [start, end) over which its item stands still (RunView.unchanged).

    Kept under the database's version, so its runs and count hold until the next write. The body
    holds as long as the clock stays inside every run's window: a plan reads every page of a
    workspace's runs, and most of them are then answered without a query or a render."""

    body: bytes
    rows: tuple[RunRow, ...]
    total: int
    windows: tuple[tuple[float, float], ...]

    def still_at(self, clock_now: float) -> bool:
        return all(
            start <= sim_time(row, clock_now) < end for row, (start, end) in zip(self.rows, self.windows, strict=True)
        )


def _json(value: object) -> bytes:
    """As Starlette's JSONResponse renders a body."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


def _listed(ctx: Context, row: RunRow) -> tuple[bytes, float, float]:
    """The run's list item, and the simulated times [start, end) over which it stands still."""

    def render() -> tuple[bytes, float, float]:
        view = RunView(row, ctx.db, ctx.now, ctx.public_base)
        return _json(run_item(view, BY_KEY[row.benchmark_key].name)), *view.unchanged

    # keyed by the stop as stored: a stop is a write, and the window covers when it shows
    return ctx.platform.store.listed((row.id, ctx.public_base, row.stopped_at), sim_time(row, ctx.now), render)


async def submit_run(request: Request) -> Response:
    with scoped(request) as ctx:
        body = await json_object(request)
        return ok(submit(ctx, body), status=201)


async def run(request: Request) -> Response:
    with scoped(request) as ctx:
        return ok(run_detail(find_run(ctx, request.path_params["ref"])))


def log_params(request: Request) -> tuple[int, str, int | None]:
    raw_limit = request.query_params.get("limit") or str(DEFAULT_LOG_PAGE)
    try:
        limit = int(raw_limit)
    except ValueError:
        raise ApiError(400, f"limit must be an integer, got {raw_limit!r}", "VALIDATION", field="limit") from None
    if not 1 <= limit <= MAX_LOG_PAGE:
        raise ApiError(400, f"limit must be between 1 and {MAX_LOG_PAGE}, got {limit}", "VALIDATION", field="limit")
    direction = request.query_params.get("direction") or "older"
    if direction not in ("older", "newer"):
        raise ApiError(400, f"direction must be older or newer, got {direction!r}", "VALIDATION", field="direction")
    cursor = request.query_params.get("cursor") or None
    position = None
    if cursor is not None:
        match = _CURSOR.match(cursor)
        if match is None:
            raise ApiError(400, "cursor is not one this server issued", "VALIDATION", field="cursor")
        position = int(match.group(1))
    return limit, direction, position


@dataclass(frozen=True)
class LogPage:
    """One page of a run's lifecycle events: entries[start:end] of `total`, oldest first."""

    entries: list[dict[str, Any]]
    start: int
    end: int
    total: int
    next_cursor: str | None


def log_page(view: RunView, limit: int, direction: str, position: int | None) -> LogPage:
    """A cursor page of lifecycle events; no cursor + older = the newest page. Shared by the API and the pages."""
    entries = events(view.schedule, view.task_names, view.attempts, view.now, view.stopped_at)
    total = len(entries)
    if position is not None and position > total:
        raise ApiError(400, "cursor is past the end of this run's logs", "VALIDATION", field="cursor")
    if direction == "older":
        end = total if position is None else position
        start = max(0, end - limit)
        next_cursor = f"c{start}" if start > 0 else None
    else:
        start = 0 if position is None else position
        end = min(total, start + limit)
        next_cursor = f"c{end}" if end < total else None
    shown = [
        {"timestamp": view.iso(e.at), "level": e.level, "step": e.step, "message": e.message, "details": e.details}
        for e in entries[start:end]
    ]
    return LogPage(shown, start, end, total, next_cursor)


async def logs(request: Request) -> Response:
    """Cursor pages of lifecycle events, oldest first within a page; no cursor + older = newest page."""
    with scoped(request) as ctx:
        limit, direction, position = log_params(request)
        found = log_page(find_run(ctx, request.path_params["ref"]), limit, direction, position)
        return ok({"logs": found.entries, "next_cursor": found.next_cursor})


async def stop(request: Request) -> Response:
    with scoped(request) as ctx:
        await json_object(request)  # `{}`; anything else that is an object is ignored
        view = find_run(ctx, request.path_params["ref"])
        if not view.active:
            raise ApiError(
                409,
                f"Benchmark run {view.row.name} is {view.status}; only pending, queued or running runs can be stopped",
                "RUN_NOT_ACTIVE",
            )
        # with a cleanup time the run shows `stopped` only later (or when it would have ended, if
        # sooner); a stop asked again meanwhile is accepted and changes nothing
        at = min(view.now + ctx.platform.stop_cleanup, view.row.end_at) if ctx.platform.stop_cleanup else view.now
        if not ctx.db.stop_run(view.row.id, at) and not ctx.platform.stop_cleanup:
            raise ApiError(409, f"Benchmark run {view.row.name} is already stopped", "RUN_NOT_ACTIVE")
        status = RunStatus.STOPPED if at <= view.now else view.status
        return ok({"id": view.row.id, "name": view.row.name, "status": status})
