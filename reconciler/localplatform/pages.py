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

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..core import scoring
from .api import Context
from .catalog import BY_KEY
from .pages_frame import guarded, offset_param, page_route, page_scope, static_file
from .routes_benchmarks import find_benchmark, parse_rank_by, ranked_candidates
from .routes_secrets import secret_item
from .runview import RunView
from .views import benchmark_detail, benchmark_entry, leaderboard, run_item

RUNS_PAGE = 25
RANK_LABELS: dict[str, str] = {
    "pass_at_1": "Pass@1",
    "pass_at_k": "Pass@k",
    "cost_per_task": "Cost / task",
    "time_per_task": "Time / task",
    "tokens_per_task": "Tokens / task",
}


def ranked_k(board: list[dict[str, Any]]) -> int | None:
    """The one k of the Pass@k column: the deepest k of any entrant (as `scoring.ranked_k`)."""
    return max((e["pass_at_k"][-1]["k"] for e in board if e["pass_at_k"]), default=None)


def point_at(entry: dict[str, Any], k: int | None) -> dict[str, Any] | None:
    """The entrant's pass@k point at exactly k, or None: a column never shows another k."""
    return next((p for p in entry["pass_at_k"] if p["k"] == k), None)


def ranked_value(entry: dict[str, Any], rank_by: str, k: int | None) -> float | None:
    if rank_by == "pass_at_k":
        point = point_at(entry, k)
        return point["value"] if point else None
    key = {"pass_at_1": None, "time_per_task": "mean_duration_seconds"}.get(rank_by, rank_by)
    found: float | None = entry["pass_at_1"]["value"] if key is None else entry[key]
    return found


ELIGIBILITY = (
    "its run finished, and the agent itself finished",
    "the run covered the full task list, or a parity set the benchmark publishes",
    "every task-and-attempt slot produced a result",
    "the agent has a pass@1 score",
)


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


def run_rows(ctx: Context, benchmark_id: str | None, offset: int) -> tuple[list[dict[str, Any]], int]:
    """A page of run list items (the API's `run_item`) and the total count."""
    found = ctx.db.runs(ctx.ws, benchmark_id=benchmark_id, limit=RUNS_PAGE, offset=offset)
    total = ctx.db.count_runs(ctx.ws, benchmark_id=benchmark_id)
    items = [run_item(RunView(r, ctx.db, ctx.now, ctx.public_base), BY_KEY[r.benchmark_key].name) for r in found]
    return items, total


def tie_notes(views: list[RunView], board: list[dict[str, Any]], rank_by: str) -> dict[int, str]:
    """Row position -> why the row shares its rank, with the numbers of the test behind it."""
    notes: dict[int, str] = {}
    if not board:
        return notes
    outcomes: dict[tuple[str, str | None, str], dict[str, list[bool]]] = {}
    for view in views:
        for agent, score in zip(view.agents, view.scores, strict=True):
            outcomes[(view.row.id, agent.effective_harness, agent.model)] = score.outcomes

    def firsts(entry: dict[str, Any]) -> dict[str, bool]:
        return scoring.first_attempts(outcomes.get((entry["run"]["id"], entry["harness"], entry["model"]), {}))

    best = board[0]
    best_first = firsts(best)
    label = RANK_LABELS[rank_by].lower()
    k = ranked_k(board)
    for i, entry in enumerate(board):
        mine_value = ranked_value(entry, rank_by, k)
        same_value = [
            j
            for j, other in enumerate(board)
            if j != i
            and mine_value is not None
            and ranked_value(other, rank_by, k) == mine_value
            and (other["task_set"], other["resolved_version"]) == (entry["task_set"], entry["resolved_version"])
        ]
        if rank_by == "pass_at_1" and entry["rank"] == 1 and i > 0 and not same_value:
            if entry["tied"]:
                mine = firsts(entry)
                b, c = scoring.discordant_pairs(best_first, mine)
                p = scoring.mcnemar_exact_p(b, c)
                shared = len(best_first.keys() & mine.keys())
                notes[i] = (
                    f"Tied with the best: on the {shared} tasks both ran, the best alone passed {b} and this entrant"
                    f" alone passed {c} on the first attempt; exact McNemar p = {p:.3f} ≥ 0.05, so the difference is"
                    " not significant."
                )
            else:
                notes[i] = (
                    "Rank 1 without a tie: it scores at least as well as an entrant listed below it that the test"
                    " cannot separate from the best, so it cannot rank below that entrant."
                )
        elif rank_by == "pass_at_1" and i == 0 and entry["tied"] and not same_value:
            notes[i] = (
                "The best. Entrants of the same task set and version that an exact two-sided McNemar test on first"
                " attempts (α = 0.05, tasks both ran) cannot separate from it share rank 1."
            )
        elif entry["tied"]:
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
                ranked_k=ranked_k(board),
                point_at=point_at,
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
