"""An independent leaderboard, recomputed from downloaded `results.csv` files.

Written from the platform's documentation and the contract alone, without importing
`reconciler.core.scoring`: plain floats, `math.comb`, its own exact binomial test. Tests compare
it with the platform's API, its pages and the rendered Markdown, entrant by entrant.

Rules (the Benchmarks page, Leaderboard; contract section 3):
- one entrant per (harness, model), from its latest eligible run (the caller passes only those);
- pass@1 = mean over tasks of c/n; pass@k = mean over tasks of 1 − C(n−c, k)/C(n, k), at the
  one k of the list (the deepest k any entrant has); an entrant without that k has no value;
- cost, time and tokens per task: all of a task's attempts summed, averaged over tasks;
- one list sorted by the metric (best first; missing last); ties only within the same task set:
  exactly equal values, and by pass@1 an entrant whose first attempts an exact two-sided
  McNemar test (α = 0.05) cannot separate from the best one's shares rank 1, as does everyone
  listed above it; ranks are competition ranks (1, 1, 3).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field

DESCENDING = ("pass_at_1", "pass_at_k")


@dataclass
class OracleEntrant:
    harness: str
    model: str
    task_set: str
    run_id: str
    attempts: dict[str, list[bool]] = field(default_factory=dict)  # task -> outcomes in attempt order
    cost: float = 0.0
    seconds: float = 0.0
    tokens: int = 0

    @property
    def tasks(self) -> int:
        return len(self.attempts)

    def pass_at(self, k: int) -> float | None:
        if any(len(a) < k for a in self.attempts.values()):
            return None
        total = 0.0
        for outcomes in self.attempts.values():
            n, c = len(outcomes), sum(outcomes)
            total += 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)
        return total / self.tasks

    @property
    def deepest_k(self) -> int:
        return min(len(a) for a in self.attempts.values())

    def metric(self, rank_by: str, k: int) -> float | None:
        metrics: dict[str, Callable[[], float | None]] = {
            "pass_at_1": lambda: self.pass_at(1),
            "pass_at_k": lambda: self.pass_at(k),
            "cost_per_task": lambda: self.cost / self.tasks,
            "time_per_task": lambda: self.seconds / self.tasks,
            "tokens_per_task": lambda: self.tokens / self.tasks,
        }
        return metrics[rank_by]()


def entrants_from_results(csv_bytes: bytes, *, run_id: str, task_set: str) -> list[OracleEntrant]:
    """One entrant per agent of one run's `results.csv` (contract section 3 columns)."""
    by_agent: dict[str, OracleEntrant] = {}
    rows = sorted(csv.DictReader(io.StringIO(csv_bytes.decode())), key=lambda r: int(r["attempt"]))
    for row in rows:
        agent = by_agent.setdefault(row["agent_index"], OracleEntrant(row["harness"], row["model"], task_set, run_id))
        agent.attempts.setdefault(row["task_name"], []).append(row["outcome"] == "passed")
        agent.cost += float(row["cost_usd"] or 0)
        agent.seconds += float(row["duration_seconds"] or 0)
        agent.tokens += int(row["input_tokens"] or 0) + int(row["output_tokens"] or 0)
    return list(by_agent.values())


def mcnemar_p(b: int, c: int) -> float:
    n = b + c
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _cannot_separate(best: OracleEntrant, other: OracleEntrant) -> bool:
    shared = best.attempts.keys() & other.attempts.keys()
    b = sum(1 for t in shared if best.attempts[t][0] and not other.attempts[t][0])
    c = sum(1 for t in shared if other.attempts[t][0] and not best.attempts[t][0])
    return mcnemar_p(b, c) >= 0.05


@dataclass(frozen=True)
class OracleRow:
    rank: int
    tied: bool
    harness: str
    model: str
    value: float | None


def leaderboard(entrants: list[OracleEntrant], rank_by: str) -> list[OracleRow]:
    k = max(e.deepest_k for e in entrants)
    sign = -1.0 if rank_by in DESCENDING else 1.0

    def key(e: OracleEntrant) -> tuple[bool, float, str, str, str]:
        value = e.metric(rank_by, k)
        return value is None, 0.0 if value is None else sign * value, e.task_set, e.model, e.harness

    ordered = sorted(entrants, key=key)
    values = [e.metric(rank_by, k) for e in ordered]
    ranks = list(range(1, len(ordered) + 1))
    tied = [False] * len(ordered)
    for i in range(1, len(ordered)):
        same_group = ordered[i].task_set == ordered[i - 1].task_set
        if values[i] is not None and same_group and math.isclose(values[i], values[i - 1], abs_tol=1e-12):  # type: ignore[arg-type]
            ranks[i] = ranks[i - 1]
            tied[i] = tied[i - 1] = True
        elif values[i] is None and values[i - 1] is None:
            ranks[i] = ranks[i - 1]
    if rank_by == "pass_at_1":
        best = ordered[0]
        with_best = [
            i
            for i in range(1, len(ordered))
            if ordered[i].task_set == best.task_set and _cannot_separate(best, ordered[i])
        ]
        if with_best:
            tied[0] = True
            for i in with_best:
                tied[i] = True
            for i in range(len(ordered)):
                if ranks[i] <= max(with_best) + 1:
                    ranks[i] = 1
    return [OracleRow(r, t, e.harness, e.model, v) for e, r, t, v in zip(ordered, ranks, tied, values, strict=True)]


def per_task(entrant: OracleEntrant) -> dict[str, float]:
    """The three per-task figures, all attempts of a task summed."""
    return {
        "cost_per_task": entrant.cost / entrant.tasks,
        "mean_duration_seconds": entrant.seconds / entrant.tasks,
        "tokens_per_task": entrant.tokens / entrant.tasks,
    }
