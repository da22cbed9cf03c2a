"""The run page: `/benchmarks/runs/{id or name}?tab=overview|results|config|logs`.

The sidebar and every tab start from the API's own answer for the run (`views.run_detail`)
and the same `RunView`; the Logs tab pages with the API's `log_page`, and downloads are the
same presigned URLs the download-URL endpoint issues, for the same snapshot.

- Overview: Agent Results (sortable with `?sort=`), the pass@k curve as inline SVG once the run
  has two or more attempts per task and results, and pass@1 per category and per difficulty.
- Task Results: every task × agent × attempt row so far, searchable (`?q=`) and filtered by
  agent (`?agent=0&agent=1`) and outcome (`?outcome=failed`), paged (`?offset=`); `?result=<id>`
  opens one result's graded output and trajectory.
- Configuration: the stored config as TOML, resolved (defaults filled in and marked) and pinned
  (benchmark version and manifest digest); `?format=toml` downloads it.
- Logs: lifecycle events, `?limit=&direction=&cursor=` exactly as the logs endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tomlkit
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..core import scoring
from ..core.world import RunStatus
from ..specs.run_config import DEFAULT_ATTEMPTS_PER_TASK, DEFAULT_MAX_CONCURRENT_ATTEMPTS, payload_to_document
from . import pages_charts, pages_format
from .api import ApiError, Context
from .outputs import FIXED_FILES, OutputCache
from .pages_frame import Page, guarded, offset_param, page_route, page_scope
from .routes_outputs import snapshot
from .routes_runs import find_run, log_page, log_params
from .runview import RunView
from .signing import sign_url
from .timeline import PRODUCED
from .views import run_detail

TABS: dict[str, str] = {"overview": "Overview", "results": "Task Results", "config": "Configuration", "logs": "Logs"}
OUTCOMES = ("passed", "failed", "errored", "cancelled")
RESULTS_PAGE = 50
SORTS: dict[str, str] = {
    "agent": "Agent",
    "pass_at_1": "Pass@1",
    "pass_at_k": "Pass@k",
    "cost_per_task": "Cost / task",
    "time_per_task": "Time / task",
    "tokens_per_task": "Tokens / task",
}
DOWNLOADS = tuple(FIXED_FILES)
REFRESH_SECONDS = 15  # an active run's Overview and Logs reload themselves (no scripts needed)


def agent_label(view: RunView, index: int) -> str:
    agent = view.agents[index]
    return f"{agent.effective_harness} · {agent.model}" if agent.effective_harness else agent.model


# --- sidebar ------------------------------------------------------------------------------


def sidebar(ctx: Context, view: RunView, detail: dict[str, Any]) -> dict[str, Any]:
    run = detail["benchmark_run"]
    progress = detail["progress"]
    reason = None
    if run["status"] == RunStatus.FAILED:
        reason = view.schedule.failure
    elif run["status"] == RunStatus.STOPPED:
        reason = f"Stopped by request; {detail['totals']['cancelled']} unfinished attempt(s) cancelled."
    simulated = None
    if view.cutoff >= view.row.running_at:
        simulated = min(view.cutoff, view.row.end_at) - view.row.running_at
    downloads: list[tuple[str, str]] = []
    if view.has_outputs:
        at = snapshot(view)
        key = ctx.platform.store.signing_key
        downloads = [(path, sign_url(key, ctx.base, view.row.id, path, at, ctx.now)) for path in DOWNLOADS]
    expected = progress["expected"]
    return {
        "reason": reason,
        "percent": progress["ingested"] / expected if expected else None,
        "duration": pages_format.span(run["started_at"], run["completed_at"], ctx.now),
        "simulated": simulated,
        "speed": view.row.speed,
        "tokens": detail["totals"]["total_input_tokens"] + detail["totals"]["total_output_tokens"],
        "attempts": view.attempts,
        "selection": view.row.selection,
        "downloads": downloads,
        "agents": [
            {"label": agent_label(view, a["agent_index"]), "status": a["status"], "index": a["agent_index"]}
            for a in detail["agents"]
        ],
    }


# --- overview -----------------------------------------------------------------------------


def _metric(row: dict[str, Any], key: str) -> float | None:
    metrics = row["metrics"]
    if metrics is None:
        return None
    if key == "pass_at_1":
        value: float | None = (metrics["pass_at_1"] or {}).get("value")
        return value
    if key == "pass_at_k":
        curve = metrics["pass_at_k"]
        return float(curve[-1]["value"]) if curve else None
    found: float | None = metrics["mean_duration_seconds" if key == "time_per_task" else key]
    return found


def agent_rows(ctx: Context, view: RunView, detail: dict[str, Any], sort: str) -> list[dict[str, Any]]:
    metrics = {m["agent_index"]: m for m in detail["agent_metrics"]}
    expected = len(view.task_names) * view.attempts
    rows = []
    for agent, score in zip(detail["agents"], view.scores, strict=True):
        index = agent["agent_index"]
        started = view.started_at
        end: str | None = None
        if agent["status"] in (RunStatus.FINISHED, RunStatus.FAILED):
            end = view.iso(view.schedule.agent_end[index])
        elif agent["status"] == RunStatus.STOPPED and view.stopped_at is not None:
            end = view.iso(view.stopped_at)
        rows.append(
            {
                "agent": agent,
                "label": agent_label(view, index),
                "model": view.agents[index].model,
                "harness": view.agents[index].effective_harness,
                "default_harness": agent["harness"] is None and view.agents[index].effective_harness is not None,
                "metrics": metrics.get(index),
                "produced": score.produced,
                "cancelled": score.cancelled,
                "expected": expected,
                "elapsed": pages_format.span(started, end, ctx.now)
                if agent["status"] not in (RunStatus.PENDING, RunStatus.QUEUED)
                else None,
                "live": agent["status"] == RunStatus.RUNNING,
            }
        )
    if sort != "agent":
        descending = sort in ("pass_at_1", "pass_at_k")

        def key(row: dict[str, Any]) -> tuple[bool, float, int]:
            value = _metric(row, sort)
            signed = 0.0 if value is None else (-value if descending else value)
            return value is None, signed, row["agent"]["agent_index"]

        rows.sort(key=key)
    return rows


def curves(view: RunView, detail: dict[str, Any]) -> list[tuple[int, str, list[tuple[int, float]]]]:
    return [
        (m["agent_index"], agent_label(view, m["agent_index"]), [(p["k"], p["value"]) for p in m["pass_at_k"]])
        for m in detail["agent_metrics"]
    ]


DIFFICULTY_ORDER = {"easy": 0, "medium": 1, "hard": 2}


def breakdown(view: RunView, field: Callable[[tuple[str, str | None, str | None]], str | None]) -> list[dict[str, Any]]:
    """pass@1 per group of tasks (a category, a difficulty) per agent, from the same outcomes the scores use.

    Groups are in name order, except difficulties, which go easy, medium, hard.
    """
    group_of = {task[0]: field(task) for task in view.selection_tasks()}
    groups = sorted({g for g in group_of.values() if g is not None}, key=lambda g: (DIFFICULTY_ORDER.get(g, 9), g))
    rows = []
    for group in groups:
        cells = []
        for score in view.scores:
            mine = {t: o for t, o in score.outcomes.items() if group_of.get(t) == group}
            value = scoring.pass_at_1(mine).value if mine else None
            cells.append({"value": value, "n": len(mine)})
        rows.append({"group": group, "tasks": sum(1 for g in group_of.values() if g == group), "cells": cells})
    return rows


def overview(request: Request, page: Page, ctx: Context, view: RunView, detail: dict[str, Any]) -> dict[str, Any]:
    sort = request.query_params.get("sort") or "agent"
    if sort not in SORTS:
        raise ApiError(400, f"sort must be one of {', '.join(SORTS)}, got {sort!r}", "VALIDATION", field="sort")
    found = curves(view, detail)
    chart = pages_charts.pass_at_k_chart(found) if pages_charts.drawable(found) else None
    categories = breakdown(view, lambda task: task[1])
    difficulties = breakdown(view, lambda task: task[2])
    return {
        "rows": agent_rows(ctx, view, detail, sort),
        "sort": sort,
        "sorts": SORTS,
        "chart": chart,
        "categories": categories if any(c["value"] is not None for r in categories for c in r["cells"]) else [],
        "difficulties": difficulties if any(c["value"] is not None for r in difficulties for c in r["cells"]) else [],
        "has_categories": any(task[1] for task in view.selection_tasks()),
    }


# --- task results -------------------------------------------------------------------------


def task_results(request: Request, page: Page, ctx: Context, view: RunView, detail: dict[str, Any]) -> dict[str, Any]:
    params = request.query_params
    query = (params.get("q") or "").strip()
    agents = sorted({int(a) for a in params.getlist("agent") if a.isdigit() and int(a) < len(view.agents)})
    outcomes = [o for o in OUTCOMES if o in params.getlist("outcome")]
    offset = offset_param(request, "offset")
    tasks = view.selection_tasks()
    counts = dict.fromkeys(OUTCOMES, 0)
    rows = []
    needle = query.lower()
    for slot in view.results:
        name, category, difficulty = tasks[slot.task]
        if agents and slot.agent not in agents:
            continue
        if needle and needle not in f"{name} {category or ''} {difficulty or ''} {slot.result_id}".lower():
            continue
        counts[slot.outcome] += 1
        if outcomes and slot.outcome not in outcomes:
            continue
        rows.append(
            {
                "slot": slot,
                "task": name,
                "category": category,
                "difficulty": difficulty,
                "agent": agent_label(view, slot.agent),
                "started_at": view.iso(slot.start) if slot.start is not None else None,
            }
        )
    selected = None
    wanted = params.get("result")
    if wanted:
        selected = result_detail(request, ctx, view, wanted)
    return {
        "query": query,
        "agents": agents,
        "outcomes": outcomes,
        "all_outcomes": OUTCOMES,
        "counts": counts,
        "rows": rows[offset : offset + RESULTS_PAGE],
        "matched": len(rows),
        "offset": offset,
        "page_size": RESULTS_PAGE,
        "agent_choices": [(a.index, agent_label(view, a.index)) for a in view.agents],
        "selected": selected,
    }


def result_detail(request: Request, ctx: Context, view: RunView, result_id: str) -> dict[str, Any]:
    """One result's row and its artifacts, from the same file set the downloads serve."""
    slot = next((s for s in view.results if s.result_id == result_id), None)
    if slot is None:
        raise ApiError(404, f"Result not found in this run: {result_id}", "RESULT_NOT_FOUND")
    files: dict[str, str] = {}
    links: list[tuple[str, str]] = []
    if slot.outcome in PRODUCED:
        at = snapshot(view)
        cache: OutputCache = request.app.state.outputs
        every = cache.files(RunView(view.row, ctx.db, ctx.now, ctx.public_base, at=float(at)))
        key = ctx.platform.store.signing_key
        prefix = f"artifacts/{result_id}/"
        mine = sorted((p for p in every if p.startswith(prefix)), key=lambda p: ("/verifier/" not in p, p))
        for path in mine:  # the graded output first, then the conversation
            files[path.removeprefix(prefix)] = every[path].decode()
            links.append((path, sign_url(key, ctx.base, view.row.id, path, at, ctx.now)))
    name, category, difficulty = view.selection_tasks()[slot.task]
    return {
        "slot": slot,
        "task": name,
        "category": category,
        "difficulty": difficulty,
        "agent": agent_label(view, slot.agent),
        "files": files,
        "links": links,
    }


# --- configuration ------------------------------------------------------------------------


def _with_default(table: Any, key: str, value: Any, why: str) -> None:
    if key not in table:
        item = tomlkit.item(value)
        item.comment(why)
        table.add(key, item)


def config_toml(view: RunView, detail: dict[str, Any]) -> str:
    """The stored config as a reconciler TOML document, defaults filled in and marked, version pinned."""
    configuration = detail["configuration"]
    document = payload_to_document(configuration["config"])
    spec = view.spec
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"Resolved configuration of benchmark run {view.row.name} ({view.row.id})"))
    doc.add(
        tomlkit.comment(
            f"Benchmark {configuration['benchmark_name']} ({configuration['source_ref']}),"
            f" pinned to version {configuration['resolved_version']}"
        )
    )
    doc.add(tomlkit.comment(f"Manifest digest {configuration['resolved_digest']}"))
    doc.add(tomlkit.comment("Values marked `default` were not in the submitted config; the platform filled them in."))
    doc.add(tomlkit.nl())
    experiment = tomlkit.table()
    experiment.add("benchmark", document.get("experiment", {}).get("benchmark", configuration["source_ref"]))
    doc.add("experiment", experiment)
    if document.get("tasks"):
        doc.add("tasks", document["tasks"])
    agents = tomlkit.aot()
    for agent in document.get("agents") or []:
        table = tomlkit.table()
        if agent.get("harness") is not None:
            table.add("harness", agent["harness"])
        elif spec.supports_harness and spec.default_harness:
            _with_default(table, "harness", spec.default_harness, "default: the benchmark's harness")
        if agent.get("harness_api_key_secret"):
            table.add("harness_api_key_secret", agent["harness_api_key_secret"])
        table.add("model", agent.get("model") or {})
        if agent.get("env"):
            table.add("env", agent["env"])
        agents.append(table)
    doc.add("agents", agents)
    execution = tomlkit.table()
    for key, value in (document.get("execution") or {}).items():
        execution.add(key, value)
    _with_default(execution, "attempts_per_task", DEFAULT_ATTEMPTS_PER_TASK, "default")
    _with_default(execution, "max_concurrent_attempts", DEFAULT_MAX_CONCURRENT_ATTEMPTS, "default")
    _with_default(execution, "pass_threshold", spec.pass_threshold, "default: the benchmark's threshold")
    if spec.requires_judge_model and spec.judge_model_default:
        _with_default(execution, "judge_model", spec.judge_model_default, "default: the benchmark's judge")
    doc.add("execution", execution)
    for name in ("verifier", "secrets", "env"):
        if document.get(name):
            doc.add(name, document[name])
    return tomlkit.dumps(doc)


def configuration(request: Request, page: Page, ctx: Context, view: RunView, detail: dict[str, Any]) -> dict[str, Any]:
    return {"toml": config_toml(view, detail), "configuration": detail["configuration"]}


# --- logs ---------------------------------------------------------------------------------


def logs(request: Request, page: Page, ctx: Context, view: RunView, detail: dict[str, Any]) -> dict[str, Any]:
    limit, direction, position = log_params(request)
    found = log_page(view, limit, direction, position)
    return {"log": found, "limit": limit}


_TABS: dict[str, Callable[[Request, Page, Context, RunView, dict[str, Any]], dict[str, Any]]] = {
    "overview": overview,
    "results": task_results,
    "config": configuration,
    "logs": logs,
}


@page_route
async def run_page(request: Request) -> Response:
    ref = request.path_params["ref"]
    with page_scope(request, run_ref=ref) as page:
        page.nav = "runs"

        def build() -> Response:
            ctx = page.require_benchmarks()
            view = find_run(ctx, ref)
            detail = run_detail(view)
            tab = request.query_params.get("tab") or "overview"
            if tab not in TABS:
                raise ApiError(400, f"tab must be one of {', '.join(TABS)}, got {tab!r}", "VALIDATION", field="tab")
            if tab == "config" and request.query_params.get("format") == "toml":
                return PlainTextResponse(
                    config_toml(view, detail),
                    headers={
                        "Content-Disposition": f'attachment; filename="{view.row.name}.toml"',
                        "Cache-Control": "no-store",
                    },
                )
            data = _TABS[tab](request, page, ctx, view, detail)
            page.title = f"{view.row.name} · {TABS[tab]}"
            return page.render(
                "run.html.j2",
                run=detail["benchmark_run"],
                detail=detail,
                side=sidebar(ctx, view, detail),
                tab=tab,
                tabs=TABS,
                refresh=REFRESH_SECONDS if view.active and tab in ("overview", "logs") else None,
                **data,
            )

        return guarded(page, build)
