"""The JSON shapes of benchmarks, runs and leaderboards (docs/platform-api.md §2–§3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import scoring
from ..core.world import RunStatus
from .api import Context
from .catalog import BY_KEY, BenchmarkSpec
from .metrics import shown_per_task
from .runview import RunView, iso
from .store import LOCAL_EMAIL, LOCAL_USER, BenchmarkRow, RunRow


def benchmark_entry(ctx: Context, row: BenchmarkRow, stats: tuple[int, int, RunRow] | None) -> dict[str, Any]:
    """A list entry; `stats` = (run count, active runs, newest run) from `StoreSession.benchmark_stats`."""
    spec = BY_KEY[row.key]
    count, running, newest = stats if stats is not None else (0, 0, None)
    latest = RunView(newest, ctx.db, ctx.now, ctx.public_base) if newest is not None else None
    return {
        "id": row.id,
        "name": spec.name,
        "key": spec.key,
        "source_type": spec.source_type,
        "source_ref": spec.key,
        "description": spec.description,
        "source_url": spec.source_url,
        "platform_url": ctx.benchmark_url(row.id),
        "creator_name": spec.creator_name,
        "created_at": iso(row.created_at),
        "task_count": spec.task_count,
        "category_count": len(spec.categories),
        "task_sets": [
            {"name": s.name, "task_count": len(s.tasks), "recommended": s.recommended, "description": s.description}
            for s in spec.task_sets
        ],
        "sync_status": spec.sync_status,
        "synced_task_count": spec.synced_task_count if spec.synced_task_count is not None else len(spec.tasks),
        "sync_error": spec.sync_error,
        "run_count": count,
        "running_count": running,
        "last_run_at": iso(latest.row.submitted_at) if latest else None,
        "last_run_status": latest.status if latest else None,
        "last_run_name": latest.row.name if latest else None,
    }


def benchmark_detail(ctx: Context, row: BenchmarkRow, stats: tuple[int, int, RunRow] | None) -> dict[str, Any]:
    spec = BY_KEY[row.key]
    detail = benchmark_entry(ctx, row, stats)
    detail.update(
        {
            "runner_family": spec.runner_family,
            "version": spec.version,
            "resolved_digest": spec.digest,
            "supports_harness": spec.supports_harness,
            "requires_harness": spec.requires_harness,
            "default_harness": spec.default_harness,
            "requires_judge_model": spec.requires_judge_model,
            "requires_judge_api_key": spec.requires_judge_api_key,
            "judge_model_default": spec.judge_model_default,
            "pass_threshold": spec.pass_threshold,
            "required_secret_names": list(spec.required_secret_names),
            "categories": [{"name": name, "task_count": count} for name, count in spec.categories],
            "tasks": [{"name": t.name, "category": t.category, "difficulty": t.difficulty} for t in spec.tasks],
            "unavailable_tasks": {"reason": spec.sync_error, "tasks": []} if spec.sync_status == "failed" else None,
        }
    )
    return detail


def leaderboard(runs: Sequence[RunView], spec: BenchmarkSpec, rank_by: scoring.RankBy) -> list[dict[str, Any]]:
    """Every eligible agent of every finished full/parity run, ranked by `scoring.leaderboard`."""
    entrants: list[scoring.Entrant] = []
    for view in runs:
        if view.status != RunStatus.FINISHED or view.row.selection == "filtered":
            continue
        expected = len(view.task_names) * view.attempts
        for agent, score in zip(view.agents, view.scores, strict=True):
            eligible = scoring.is_eligible(
                run_status=view.status,
                agent_status=view.agent_status(agent.index),
                task_selection="parity" if view.row.selection == "parity" else "full",
                expected_results=expected,
                produced_results=score.produced,
            )
            if not eligible or not score.outcomes:
                continue
            entrants.append(
                scoring.Entrant(
                    harness=agent.effective_harness,
                    model=agent.model,
                    task_set="parity" if view.row.selection == "parity" else "full",
                    resolved_version=spec.version,
                    outcomes=score.outcomes,
                    cost_per_task=score.cost_per_task,
                    mean_duration_seconds=score.mean_duration_seconds,
                    tokens_per_task=score.tokens_per_task,
                    run_id=view.row.id,
                    run_name=view.row.name,
                    run_platform_url=view.platform_url,
                    completed_at=view.completed_at or view.iso(view.cutoff),
                )
            )
    return [shown_per_task(entry.model_dump(mode="json")) for entry in scoring.leaderboard(entrants, rank_by)]


def run_item(view: RunView, benchmark_name: str) -> dict[str, Any]:
    row = view.row
    return {
        "id": row.id,
        "name": row.name,
        "status": view.status,
        "benchmark_id": row.benchmark_id,
        "benchmark_name": benchmark_name,
        "created_at": iso(row.submitted_at),
        "started_at": view.started_at,
        "completed_at": view.completed_at,
        "creator_name": LOCAL_USER,
        "creator_email": LOCAL_EMAIL,
        "platform_url": view.platform_url,
        "agent_count": row.agent_count,
        "task_count": row.task_count,
        "best_pass_at_1": view.best_pass_at_1,
        "ingested_results": view.ingested,
        "expected_results": row.expected,
        "workflow_id": f"benchmark-run/{row.id}",
    }


def _interval(value: scoring.Interval | None) -> dict[str, Any] | None:
    return value.model_dump(mode="json") if value is not None else None


def run_detail(view: RunView) -> dict[str, Any]:
    spec = view.spec
    config = view.config
    tasks_config = config.get("tasks_config")
    agents = []
    metrics = []
    totals = {
        "passed": 0,
        "failed": 0,
        "errored": 0,
        "cancelled": 0,
        "total_input_tokens": 0,
        "total_output_tokens": 0,
        "total_cost_usd": 0.0,
    }
    for agent, score in zip(view.agents, view.scores, strict=True):
        agents.append(
            {
                "id": agent.id,
                "agent_index": agent.index,
                "model": agent.model,
                "model_display_name": agent.display_name,
                "model_ref": agent.model_ref,
                "harness": agent.harness,
                "status": view.agent_status(agent.index),
                "aggregates": shown_per_task(
                    {
                        "reported_cost_usd": round(score.cost_usd, 6),
                        "mean_duration_seconds": score.mean_duration_seconds,
                        "tokens_per_task": score.tokens_per_task,
                    }
                ),
                "environment_variables": agent.env,
            }
        )
        for key in ("passed", "failed", "errored", "cancelled"):
            totals[key] += getattr(score, key)
        totals["total_input_tokens"] += score.input_tokens
        totals["total_output_tokens"] += score.output_tokens
        totals["total_cost_usd"] += score.cost_usd
        if score.n_tasks:
            metrics.append(
                shown_per_task(
                    {
                        "benchmark_run_agent_id": agent.id,
                        "agent_index": agent.index,
                        "rank": score.rank,
                        "tied": score.tied,
                        "n_tasks": score.n_tasks,
                        "pass_at_1": _interval(score.pass_at_1),
                        "pass_at_k": [p.model_dump(mode="json") for p in score.pass_at_k],
                        "cost_per_task": score.cost_per_task,
                        "mean_duration_seconds": score.mean_duration_seconds,
                        "tokens_per_task": score.tokens_per_task,
                    }
                )
            )
    totals["total_cost_usd"] = round(float(totals["total_cost_usd"]), 6)
    benchmark_run = run_item(view, spec.name)
    return {
        "benchmark_run": benchmark_run,
        "configuration": {
            "source_type": spec.source_type,
            "source_ref": spec.key,
            "resolved_version": spec.version,
            "resolved_digest": spec.digest,
            "task_filters": tasks_config,
            "config": config,
            "resolved_secret_scopes": view.scopes,
            "benchmark_name": spec.name,
            "benchmark_id": view.row.benchmark_id,
        },
        "agents": agents,
        "progress": {"ingested": benchmark_run["ingested_results"], "expected": view.row.expected},
        "totals": totals,
        "agent_metrics": metrics,
        "is_internal_user": False,
    }
