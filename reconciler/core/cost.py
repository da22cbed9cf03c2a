"""What a paid action costs: tasks × agents × attempts, and dollars where history allows.

Tasks come from the benchmark's manifest and the spec's selection; the dollar estimate uses
the platform's leaderboard history of cost per task for the same harness and model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..specs.run_config import HostedModel, RunConfig
from .world import BenchmarkState


class Cost(BaseModel):
    model_config = ConfigDict(frozen=True)

    tasks: int
    agents: int
    attempts_per_task: int
    attempts: int
    estimated_usd: float | None = None
    estimate_complete: bool = False  # every agent had a cost history


def agent_key(harness: str | None, model: str | None) -> str:
    return f"{harness or ''}|{model or ''}"


def agent_models(config: RunConfig, default_harness: str | None = None) -> list[str]:
    keys = []
    for agent in config.agents:
        model = agent.model
        name = f"{model.base_model}:{model.lora_model_name}" if isinstance(model, HostedModel) else model.model
        keys.append(agent_key(agent.harness or default_harness, name))
    return keys


def is_full_run(config: RunConfig) -> bool:
    t = config.tasks
    return t is None or (t.task_set is None and not t.task_names and not t.categories)


def resolve_task_count(config: RunConfig, bench: BenchmarkState) -> int:
    """How many tasks the selection runs: a task set overrides names and categories, which add up."""
    t = config.tasks
    if is_full_run(config) or t is None:
        return bench.task_count
    if t.task_set is not None:
        return bench.task_set_counts.get(t.task_set, 0)
    names = set(t.task_names or [])
    if bench.facts is not None and t.categories:
        names |= {task.name for task in bench.facts.tasks if task.category in set(t.categories)}
        return len(names)
    return len(names) + sum(bench.category_counts.get(c, 0) for c in t.categories or [])


def estimate_cost(config: RunConfig, bench: BenchmarkState) -> Cost:
    tasks = resolve_task_count(config, bench)
    per_agent = tasks * config.attempts_per_task
    known = [bench.cost_per_task.get(k) for k in agent_models(config, bench.default_harness)]
    priced = [c for c in known if c is not None]
    return Cost(
        tasks=tasks,
        agents=len(config.agents),
        attempts_per_task=config.attempts_per_task,
        attempts=per_agent * len(config.agents),
        estimated_usd=round(sum(c * per_agent for c in priced), 2) if priced else None,
        estimate_complete=len(priced) == len(known),
    )
