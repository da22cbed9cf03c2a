"""`GET /api/cli/benchmarks` and `GET /api/cli/benchmarks/{key-name-or-id}`."""

from __future__ import annotations

from typing import get_args

from starlette.requests import Request
from starlette.responses import Response

from ..core import scoring
from .api import ApiError, Context, ok, page, paging, scoped
from .catalog import BY_KEY
from .runview import RunView
from .store import BenchmarkRow
from .views import benchmark_detail, benchmark_entry, leaderboard


def ranked_candidates(ctx: Context, row: BenchmarkRow) -> list[RunView]:
    """The workspace's finished, unfiltered runs on this benchmark, newest first."""
    return [RunView(r, ctx.db, ctx.now, ctx.public_base) for r in ctx.db.finished_ranked_runs(ctx.ws, row.id, ctx.now)]


def find_benchmark(ctx: Context, ref: str) -> BenchmarkRow:
    rows = ctx.db.benchmarks(ctx.ws)
    for found in (
        next((r for r in rows if r.key == ref), None),
        next((r for r in rows if BY_KEY[r.key].name == ref), None),
        next((r for r in rows if r.id == ref), None),
    ):
        if found is not None:
            return found
    raise ApiError(404, f"Benchmark not found: {ref}", "BENCHMARK_NOT_FOUND")


def parse_rank_by(value: str) -> scoring.RankBy:
    for allowed in get_args(scoring.RankBy):
        if value == allowed:
            rank_by: scoring.RankBy = allowed
            return rank_by
    choices = ", ".join(get_args(scoring.RankBy))
    raise ApiError(400, f"rank_by must be one of {choices}, got {value!r}", "VALIDATION", field="rank_by")


async def list_benchmarks(request: Request) -> Response:
    with scoped(request) as ctx:
        limit, offset = paging(request)
        rows = ctx.db.benchmarks(ctx.ws)
        stats = ctx.db.benchmark_stats(ctx.ws, ctx.now)
        items = [benchmark_entry(ctx, r, stats.get(r.id)) for r in rows[offset : offset + limit]]
        return ok(page("benchmarks", items, len(rows), limit, offset))


async def benchmark(request: Request) -> Response:
    with scoped(request) as ctx:
        rank_by = parse_rank_by(request.query_params.get("rank_by") or "pass_at_1")
        row = find_benchmark(ctx, request.path_params["ref"])
        stats = ctx.db.benchmark_stats(ctx.ws, ctx.now).get(row.id)
        return ok(
            {
                "benchmark": benchmark_detail(ctx, row, stats),
                "leaderboard": leaderboard(ranked_candidates(ctx, row), BY_KEY[row.key], rank_by),
            }
        )
