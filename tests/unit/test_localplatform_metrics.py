"""The local platform's per-agent figures: exact for ranking, rounded only where the API shows them."""

from __future__ import annotations

from reconciler.core.scoring import Entrant, leaderboard
from reconciler.localplatform.metrics import AgentScore, shown_per_task

TASKS = {f"t{i:03d}": [True] for i in range(120)}


def score(index: int, tokens: int, seconds: float) -> AgentScore:
    return AgentScore(index, outcomes=dict(TASKS), input_tokens=tokens, duration_total=seconds)


def entrant(model: str, agent: AgentScore) -> Entrant:
    return Entrant(
        harness="terminus-2",
        model=model,
        task_set="full",
        resolved_version="v1",
        outcomes=agent.outcomes,
        cost_per_task=agent.cost_per_task,
        mean_duration_seconds=agent.mean_duration_seconds,
        tokens_per_task=agent.tokens_per_task,
        run_id=f"run-{model}",
        run_name=f"name-{model}",
        completed_at="2026-01-01T00:00:00Z",
    )


def test_agents_apart_by_less_than_the_shown_precision_are_not_tied() -> None:
    # 5 tokens and 0.05 s over 120 tasks: 1000.04 against 1000.0 tokens, 60.0004 against 60.0 s
    lean, heavy = score(0, 120_000, 7200.0), score(1, 120_005, 7200.05)
    for rank_by in ("tokens_per_task", "time_per_task"):
        board = leaderboard([entrant("heavy", heavy), entrant("lean", lean)], rank_by)
        assert [(row.model, row.rank, row.tied) for row in board] == [("lean", 1, False), ("heavy", 2, False)]


def test_the_api_shows_per_task_figures_rounded() -> None:
    heavy = score(1, 120_005, 7200.05)
    shown = shown_per_task(
        {"tokens_per_task": heavy.tokens_per_task, "mean_duration_seconds": heavy.mean_duration_seconds, "rank": 2}
    )
    assert shown == {"tokens_per_task": 1000.0, "mean_duration_seconds": 60.0, "rank": 2}
