"""What a paid action costs: tasks × agents × attempts, and dollars where history allows.

Tasks come from the benchmark's manifest and the spec's selection. The dollar estimate is
per attempt: the platform's leaderboard reports cost per task with all of a task's attempts
summed, so history is divided by the attempts per task of the run it came from, then multiplied
by the attempts this spec asks for (`estimate_cost`).
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
    priced_agents: int = 0  # agents with a cost history
    history_runs: int = 0  # distinct finished runs that history comes from

    @property
    def basis(self) -> str:
        """Where the estimate comes from: `from 2 finished runs of these agents`; "" without one."""
        if not self.priced_agents:
            return ""
        runs = f"{self.history_runs} finished run{'' if self.history_runs == 1 else 's'}"
        if self.priced_agents < self.agents:
            return f"from {runs} of {self.priced_agents} of the {self.agents} agents; no cost history for the others"
        return f"from {runs} of {'this agent' if self.agents == 1 else 'these agents'}"


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
    """How many tasks the selection runs.

    Selectors are alternatives (rules refuse a combination, so a plan never prices one); should
    one reach here anyway, a task set wins and names and categories add up.
    """
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
    """tasks × attempts per task × (each priced agent's cost per attempt from history), summed.

    `bench.cost_per_task` holds cost per task *and attempt* (see `engine.observe`), so a
    3-attempt history priced for a 1-attempt spec is not counted three times.
    """
    tasks = resolve_task_count(config, bench)
    per_agent = tasks * config.attempts_per_task
    keys = agent_models(config, bench.default_harness)
    priced = [k for k in keys if k in bench.cost_per_task]
    return Cost(
        tasks=tasks,
        agents=len(config.agents),
        attempts_per_task=config.attempts_per_task,
        attempts=per_agent * len(config.agents),
        estimated_usd=round(sum(bench.cost_per_task[k] * per_agent for k in priced), 2) if priced else None,
        estimate_complete=len(priced) == len(keys),
        priced_agents=len(priced),
        history_runs=len({bench.cost_runs.get(k, k) for k in priced}),
    )
