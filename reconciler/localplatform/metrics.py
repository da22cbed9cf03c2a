"""Per-agent scores of one run at one moment, through `reconciler.core.scoring`.

A result counts towards pass@k when it was produced (passed, failed or errored; errored counts
as a fail); cancelled slots count only in the totals. Cost, time and tokens per task all mean
the same thing: what one task took with all of its attempts summed, averaged over tasks. Agents
of one run are ranked against each other with the leaderboard's rules (`scoring.leaderboard`,
by pass@1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import scoring
from .simulator import Slot
from .timeline import PRODUCED


@dataclass
class AgentScore:
    index: int
    outcomes: dict[str, list[bool]] = field(default_factory=dict)
    passed: int = 0
    failed: int = 0
    errored: int = 0
    cancelled: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    duration_total: float = 0.0
    pass_at_1: scoring.Interval | None = None
    pass_at_k: list[scoring.PassAtK] = field(default_factory=list)
    rank: int | None = None
    tied: bool = False

    @property
    def produced(self) -> int:
        return self.passed + self.failed + self.errored

    @property
    def n_tasks(self) -> int:
        return len(self.outcomes)

    # exact: the leaderboard ranks on these, and rounding first would tie agents that differ
    @property
    def cost_per_task(self) -> float | None:
        return self.cost_usd / self.n_tasks if self.n_tasks else None

    @property
    def mean_duration_seconds(self) -> float | None:
        """Seconds per task, all of its attempts summed (like cost and tokens per task)."""
        return self.duration_total / self.n_tasks if self.n_tasks else None

    @property
    def tokens_per_task(self) -> float | None:
        return (self.input_tokens + self.output_tokens) / self.n_tasks if self.n_tasks else None


PER_TASK_PLACES = {"cost_per_task": 6, "mean_duration_seconds": 3, "tokens_per_task": 1}


def shown_per_task(figures: dict[str, Any]) -> dict[str, Any]:
    """`figures` with its per-task values rounded as the API shows them (after any ranking)."""
    return {
        key: round(value, PER_TASK_PLACES[key]) if key in PER_TASK_PLACES and value is not None else value
        for key, value in figures.items()
    }


def score_agents(
    results: Sequence[Slot],
    task_names: Sequence[str],
    agents: Sequence[tuple[str, str | None]],
    *,
    version: str,
    run_id: str,
    run_name: str,
    completed_at: str,
) -> list[AgentScore]:
    """One `AgentScore` per agent (`agents` = (model, harness) pairs), ranked within the run."""
    scores = [AgentScore(i) for i in range(len(agents))]
    for slot in sorted(results, key=lambda s: (s.agent, s.task, s.attempt)):
        score = scores[slot.agent]
        if slot.outcome == "cancelled":
            score.cancelled += 1
            continue
        setattr(score, slot.outcome, getattr(score, slot.outcome) + 1)
        score.input_tokens += slot.input_tokens
        score.output_tokens += slot.output_tokens
        score.cost_usd += slot.cost_usd
        score.duration_total += slot.duration
        if slot.outcome in PRODUCED:
            score.outcomes.setdefault(task_names[slot.task], []).append(slot.outcome == "passed")
    entrants: list[scoring.Entrant] = []
    for score in scores:
        if not score.outcomes:
            continue
        score.pass_at_1 = scoring.pass_at_1(score.outcomes)
        score.pass_at_k = scoring.pass_at_k_curve(score.outcomes)
        model, harness = agents[score.index]
        entrants.append(
            scoring.Entrant(
                harness=f"{harness or ''}#{score.index}",  # unique per agent: leaderboard() keeps one row per pair
                model=model,
                task_set="full",
                resolved_version=version,
                outcomes=score.outcomes,
                run_id=run_id,
                run_name=run_name,
                completed_at=completed_at,
            )
        )
    for entry in scoring.leaderboard(entrants):
        index = int((entry.harness or "#0").rsplit("#", 1)[1])
        scores[index].rank, scores[index].tied = entry.rank, entry.tied
    return scores


def best_pass_at_1(scores: Sequence[AgentScore]) -> float | None:
    values = [s.pass_at_1.value for s in scores if s.pass_at_1 is not None and s.pass_at_1.value is not None]
    return max(values) if values else None
