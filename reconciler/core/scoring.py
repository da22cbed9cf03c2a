"""Leaderboard scoring (docs/platform-api.md §3): pass@1, pass@k, 95% intervals, McNemar ties, ranks.

Pure functions over plain data: no I/O, no clock, no randomness; the standard library and
pydantic only. Counts are kept as exact integers and `Fraction`s until the last step, so every
result is one correctly rounded float that does not depend on the order of the input mapping.
Floats are never rounded here; renderers round.

Notation: a task has `n` attempts of which `c` passed; `T` is the number of tasks; `z` is the
two-sided 95% normal quantile `Z95`.

- pass@1 = (1/T) · Σ c/n.
- pass@k = (1/T) · Σ (1 − C(n−c, k) / C(n, k)), the unbiased estimator of Chen et al. 2021
  (arXiv:2107.03374 §2.1), for k in 1, 2, 4, … ≤ n and n itself (`ks_for`).
- 95% interval of pass@1: the Wilson score interval over tasks when every task has exactly one
  attempt (`"wilson"`); otherwise a normal interval on the per-task means, clustered by task
  (`"cluster-normal"`), clipped to [0, 1].
- 95% interval of pass@k, k > 1: the same cluster-normal interval on the per-task unbiased
  estimates e_i = 1 − C(n_i−c_i, k)/C(n_i, k): pass@k ± z · s/√T, s² = Σ (e_i − pass@k)²/(T − 1).
- Ranks and ties (`leaderboard`, `competition_ranks`): one list sorted by the ranked metric;
  competition ranks (1, 1, 3) of that order. Only entrants of the same task set and resolved
  benchmark version can tie: on exactly equal values, and, ranking by pass@1, when the exact
  two-sided McNemar test on first attempts (α = 0.05) cannot separate one from the best
  entrant; then every entrant listed between the best and it also ranks 1.
- Per-task figures: cost, time and tokens per task are totals over all of a task's attempts,
  averaged over tasks (the caller computes them; see `Entrant`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from fractions import Fraction
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "DESCENDING",
    "Z95",
    "Entrant",
    "Interval",
    "LeaderboardEntry",
    "Method",
    "Outcomes",
    "PassAtK",
    "RankBy",
    "RunRef",
    "TaskSelection",
    "TaskSet",
    "competition_ranks",
    "discordant_pairs",
    "first_attempts",
    "indistinguishable",
    "is_eligible",
    "ks_for",
    "leaderboard",
    "mcnemar_exact_p",
    "order_key",
    "pass_at_1",
    "pass_at_k_curve",
    "pass_at_k_unbiased",
    "ranked_k",
    "wilson_interval",
]

Z95: Final[float] = 1.9599639845400536
"""The 0.975 quantile of the standard normal, `statistics.NormalDist().inv_cdf(0.975)`."""

TIE_ALPHA: Final[float] = 0.05
"""Significance level of the McNemar tie test (docs/platform-api.md §3)."""

Method: TypeAlias = Literal["wilson", "cluster-normal"]
TaskSet: TypeAlias = Literal["full", "parity"]
TaskSelection: TypeAlias = Literal["full", "parity", "filtered"]
RankBy: TypeAlias = Literal["pass_at_1", "pass_at_k", "cost_per_task", "time_per_task", "tokens_per_task"]
Outcomes: TypeAlias = Mapping[str, Sequence[bool]]
"""Task name -> pass/fail of each attempt, in attempt order."""


class _Frozen(BaseModel):
    # defer_build: built when first scored; `plan` on the local platform imports these through it but rarely scores
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, defer_build=True)


class Interval(_Frozen):
    """A fraction in [0, 1] with its 95% interval; JSON `{value, ci_low, ci_high, n, method}`.

    `n` is the number of tasks. `value` is None when there are no tasks; the bounds are None
    when they are undefined (no tasks, or a cluster-normal interval over a single task).
    """

    value: float | None
    ci_low: float | None
    ci_high: float | None
    n: int = Field(ge=0)
    method: Method


class PassAtK(_Frozen):
    """One point of the pass@k curve with its 95% interval; JSON `{k, value, ci_low, ci_high, method}`.

    The bounds are None when undefined (a cluster-normal interval over a single task) and
    `method` is None only in platform answers that carry no interval.
    """

    k: int = Field(ge=1)
    value: float = Field(ge=0.0, le=1.0)
    ci_low: float | None = None
    ci_high: float | None = None
    method: Method | None = None


class RunRef(_Frozen):
    """The run a leaderboard row was scored from; JSON `{id, name, platform_url}`."""

    id: str
    name: str
    platform_url: str | None = None


class Entrant(_Frozen):
    """One leaderboard candidate: one agent (harness + model) of one eligible run.

    `outcomes` maps each task to its attempts in attempt order (pass@1 and pass@k use all of
    them; the tie test uses attempt 0). `cost_per_task`, `mean_duration_seconds` and
    `tokens_per_task` are per task with all of its attempts summed (a 3-attempt run spends
    about three times what a 1-attempt run does). `completed_at` is ISO-8601; a timestamp
    without an offset is read as UTC.
    """

    harness: str | None
    model: str
    task_set: TaskSet
    resolved_version: str
    outcomes: dict[str, list[bool]]
    cost_per_task: float | None = None
    mean_duration_seconds: float | None = None
    tokens_per_task: float | None = None
    run_id: str
    run_name: str
    run_platform_url: str | None = None
    completed_at: str

    @field_validator("outcomes")
    @classmethod
    def _every_task_has_an_attempt(cls, value: dict[str, list[bool]]) -> dict[str, list[bool]]:
        empty = sorted(task for task, attempts in value.items() if not attempts)
        if empty:
            raise ValueError(f"tasks without attempts: {', '.join(empty)}")
        return value

    @field_validator("completed_at")
    @classmethod
    def _is_iso_8601(cls, value: str) -> str:
        _instant(value)  # raises ValueError with the offending text
        return value


class LeaderboardEntry(_Frozen):
    """One leaderboard row, in the JSON shape of docs/platform-api.md §3."""

    rank: int = Field(ge=1)
    tied: bool
    task_set: str
    resolved_version: str
    harness: str | None
    model: str
    pass_at_1: Interval
    pass_at_k: list[PassAtK]
    cost_per_task: float | None
    mean_duration_seconds: float | None
    tokens_per_task: float | None
    run: RunRef


# --- estimators ------------------------------------------------------------------------------


def _pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    if n < 1:
        raise ValueError(f"pass@k needs at least one attempt, got n={n}")
    if not 0 <= c <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"pass@k needs 1 <= k <= n, got k={k}, n={n}")
    if n - c < k:
        return Fraction(1)  # every k-subset of the attempts contains a pass
    total = math.comb(n, k)
    return Fraction(total - math.comb(n - c, k), total)


def pass_at_k_unbiased(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task: 1 − C(n−c, k) / C(n, k) (Chen et al. 2021).

    The probability that k attempts drawn without replacement from the n made, c of which
    passed, contain at least one pass. It is 1 when n − c < k, and c/n when k = 1. Computed
    exactly with integer binomials (`math.comb`) and rounded once, so it neither overflows
    nor loses precision for large n. Raises ValueError unless 0 <= c <= n and 1 <= k <= n.
    """
    return float(_pass_at_k_exact(n, c, k))


def ks_for(n: int) -> list[int]:
    """The k values reported for n attempts per task: 1, 2, 4, … ≤ n, plus n itself, ascending.

    `ks_for(1) == [1]`, `ks_for(4) == [1, 2, 4]`, `ks_for(6) == [1, 2, 4, 6]`. Raises
    ValueError when n < 1.
    """
    if n < 1:
        raise ValueError(f"ks_for needs at least one attempt, got n={n}")
    ks: list[int] = []
    k = 1
    while k <= n:
        ks.append(k)
        k *= 2
    if ks[-1] != n:
        ks.append(n)
    return ks


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval (Wilson 1927) for `successes` out of `trials`.

    With p = x/n:
        centre     = (p + z²/2n) / (1 + z²/n)
        half-width = z / (1 + z²/n) · √(p(1 − p)/n + z²/4n²)
        interval   = (centre − half-width, centre + half-width)
    The lower bound is exactly 0 when x = 0 and the upper bound exactly 1 when x = n (the
    formula gives them up to rounding); both are clipped to [0, 1]. Raises ValueError when
    trials < 1, successes is outside 0..trials, or z is not a positive finite number.
    """
    if trials < 1:
        raise ValueError(f"the Wilson interval needs at least one trial, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in 0..{trials}, got {successes}")
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a positive finite number, got {z}")
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half_width = z / denominator * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    low = 0.0 if successes == 0 else max(0.0, centre - half_width)
    high = 1.0 if successes == trials else min(1.0, centre + half_width)
    return low, high


def _counts(outcomes: Outcomes) -> list[tuple[int, int]]:
    """(n, c) per task; raises ValueError for a task without attempts."""
    counts: list[tuple[int, int]] = []
    for task, attempts in outcomes.items():
        if not attempts:
            raise ValueError(f"task {task!r} has no attempts")
        counts.append((len(attempts), sum(1 for passed in attempts if passed)))
    return counts


def pass_at_1(outcomes: Outcomes, z: float = Z95) -> Interval:
    """pass@1 = (1/T) · Σ c/n over the T tasks, with its 95% interval; `n` of the result is T.

    - Every task has exactly one attempt: the Wilson interval of Σ c successes in T trials
      (`method="wilson"`).
    - Otherwise (`method="cluster-normal"`), a normal interval on the per-task means
      m_i = c_i/n_i, which treats tasks, not attempts, as the independent draws:
          s² = Σ (m_i − mean)² / (T − 1)          (sample variance)
          interval = mean ± z · s/√T, clipped to [0, 1]
      With one task, s is undefined and both bounds are None. When every task has the same
      mean, s = 0 and the interval collapses to the point (a known weakness of the normal
      interval; docs/platform-api.md §3 prescribes it).
    - No tasks: value and bounds are None, n = 0, method "wilson".
    Raises ValueError for a task without attempts.
    """
    counts = _counts(outcomes)
    tasks = len(counts)
    if tasks == 0:
        return Interval(value=None, ci_low=None, ci_high=None, n=0, method="wilson")
    means = [Fraction(c, n) for n, c in counts]
    mean = sum(means, Fraction(0)) / tasks
    value = float(mean)
    if all(n == 1 for n, _ in counts):
        wilson_low, wilson_high = wilson_interval(sum(c for _, c in counts), tasks, z)
        return Interval(value=value, ci_low=wilson_low, ci_high=wilson_high, n=tasks, method="wilson")
    low, high = _cluster_normal(means, z)
    return Interval(value=value, ci_low=low, ci_high=high, n=tasks, method="cluster-normal")


def _cluster_normal(estimates: Sequence[Fraction], z: float) -> tuple[float | None, float | None]:
    """mean ± z · s/√T over per-task estimates, clipped to [0, 1]; (None, None) for one task."""
    tasks = len(estimates)
    if tasks < 2:
        return None, None
    mean = sum(estimates, Fraction(0)) / tasks
    variance = sum(((m - mean) ** 2 for m in estimates), Fraction(0)) / (tasks - 1)
    standard_error = math.sqrt(variance / tasks)  # s/√T = √(s²/T)
    value = float(mean)
    return max(0.0, value - z * standard_error), min(1.0, value + z * standard_error)


def pass_at_k_curve(outcomes: Outcomes, z: float = Z95) -> list[PassAtK]:
    """pass@k = (1/T) · Σ (1 − C(n−c, k)/C(n, k)) for each k in `ks_for(min n over tasks)`, with 95% intervals.

    Ascending in k; the last point is the deepest k. Empty when there are no tasks. The k = 1
    point equals `pass_at_1(outcomes)` exactly, interval and method included. For k > 1 the
    interval is the cluster-normal one over tasks (`"cluster-normal"`): with the per-task
    estimates e_i = 1 − C(n_i−c_i, k)/C(n_i, k),
        s² = Σ (e_i − pass@k)² / (T − 1),   interval = pass@k ± z · s/√T, clipped to [0, 1];
    tasks, not attempts, are the independent draws, as for pass@1 with several attempts.
    With one task both bounds are None. Raises ValueError for a task without attempts.
    """
    counts = _counts(outcomes)
    if not counts:
        return []
    tasks = len(counts)
    curve: list[PassAtK] = []
    for k in ks_for(min(n for n, _ in counts)):
        if k == 1:
            first = pass_at_1(outcomes, z)
            if first.value is not None:
                curve.append(
                    PassAtK(k=1, value=first.value, ci_low=first.ci_low, ci_high=first.ci_high, method=first.method)
                )
            continue
        estimates = [_pass_at_k_exact(n, c, k) for n, c in counts]
        low, high = _cluster_normal(estimates, z)
        value = float(sum(estimates, Fraction(0)) / tasks)
        curve.append(PassAtK(k=k, value=value, ci_low=low, ci_high=high, method="cluster-normal"))
    return curve


# --- paired comparison -----------------------------------------------------------------------


def mcnemar_exact_p(b: int, c: int) -> float:
    """The exact two-sided McNemar p-value for b and c discordant pairs.

    Under the null both directions are equally likely, so X ~ Binomial(b + c, 1/2) and
        p = min(1, 2 · P(X ≤ min(b, c))) = min(1, 2 · Σ_{i=0..min(b,c)} C(b+c, i) / 2^(b+c)).
    p = 1 when b + c = 0 (nothing to compare). Exact (integer arithmetic, one rounding); the
    same as `statsmodels…mcnemar(table, exact=True)`. Raises ValueError for negative counts.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    pairs = b + c
    if pairs == 0:
        return 1.0
    tail = sum(math.comb(pairs, i) for i in range(min(b, c) + 1))
    return float(min(Fraction(1), Fraction(2 * tail, 2**pairs)))


def first_attempts(outcomes: Outcomes) -> dict[str, bool]:
    """Task -> outcome of attempt 0 (the paired sample the tie test uses); tasks without attempts are left out."""
    return {task: bool(attempts[0]) for task, attempts in outcomes.items() if attempts}


def discordant_pairs(a_first: Mapping[str, bool], b_first: Mapping[str, bool]) -> tuple[int, int]:
    """(b, c) over the tasks both ran: b = tasks A passed and B failed, c = the reverse."""
    shared = a_first.keys() & b_first.keys()
    b = sum(1 for task in shared if a_first[task] and not b_first[task])
    c = sum(1 for task in shared if b_first[task] and not a_first[task])
    return b, c


def indistinguishable(a_first: Mapping[str, bool], b_first: Mapping[str, bool], alpha: float = TIE_ALPHA) -> bool:
    """True when the exact McNemar test on the tasks both ran cannot separate A from B: p ≥ α.

    With no shared task or no discordant pair, p = 1 and the two are indistinguishable.
    Raises ValueError unless 0 < α < 1.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    b, c = discordant_pairs(a_first, b_first)
    return mcnemar_exact_p(b, c) >= alpha


# --- eligibility and ranks -------------------------------------------------------------------


def is_eligible(
    *,
    run_status: str,
    agent_status: str,
    task_selection: TaskSelection,
    expected_results: int,
    produced_results: int,
) -> bool:
    """Whether an agent of a run may be ranked (docs/platform-api.md §3).

    The run and the agent are both `finished`; the run used the full task list or a published
    parity set (runs filtered by category or task names never rank); every task × attempt
    produced a result (`produced_results >= expected_results`); and pass@1 exists, i.e. there
    is at least one expected result. Raises ValueError for negative counts.
    """
    if expected_results < 0 or produced_results < 0:
        raise ValueError(
            f"result counts must be non-negative, got expected={expected_results}, produced={produced_results}"
        )
    return (
        run_status == "finished"
        and agent_status == "finished"
        and task_selection in ("full", "parity")
        and expected_results > 0
        and produced_results >= expected_results
    )


def _instant(timestamp: str) -> datetime:
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        raise ValueError(f"not an ISO-8601 timestamp: {timestamp!r}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _latest_per_entrant(entrants: Sequence[Entrant]) -> list[Entrant]:
    """One entrant per (harness, model): the latest `completed_at`, then the greatest run_id."""
    latest: dict[tuple[str | None, str], Entrant] = {}
    for entrant in entrants:
        key = (entrant.harness, entrant.model)
        current = latest.get(key)
        if current is None or (_instant(entrant.completed_at), entrant.run_id) > (
            _instant(current.completed_at),
            current.run_id,
        ):
            latest[key] = entrant
    return list(latest.values())


class _Scored:
    __slots__ = ("entrant", "pass_at_1", "pass_at_k")

    def __init__(self, entrant: Entrant) -> None:
        self.entrant = entrant
        self.pass_at_1 = pass_at_1(entrant.outcomes)
        self.pass_at_k = pass_at_k_curve(entrant.outcomes)

    def metric(self, rank_by: RankBy, k: int | None) -> float | None:
        if rank_by == "pass_at_1":
            return self.pass_at_1.value
        if rank_by == "pass_at_k":
            return next((point.value for point in self.pass_at_k if point.k == k), None)
        if rank_by == "cost_per_task":
            return self.entrant.cost_per_task
        if rank_by == "time_per_task":
            return self.entrant.mean_duration_seconds
        return self.entrant.tokens_per_task

    def group(self) -> tuple[str, str]:
        return self.entrant.task_set, self.entrant.resolved_version


DESCENDING: Final[frozenset[RankBy]] = frozenset({"pass_at_1", "pass_at_k"})
"""The metrics where higher is better; the others (cost, time, tokens) rank lowest first."""


def ranked_k(curves: Sequence[Sequence[PassAtK]]) -> int | None:
    """The k that `rank_by = "pass_at_k"` ranks on: the deepest k any entrant has (None: no curve).

    One k for the whole list, so every ranked value measures the same thing; an entrant whose
    curve has no point at that k has no value for it (it is listed last, never compared at
    another k).
    """
    return max((curve[-1].k for curve in curves if curve), default=None)


def order_key(
    value: float | None,
    rank_by: RankBy,
    *,
    task_set: str | None,
    resolved_version: str | None,
    model: str,
    harness: str | None,
    run_id: str | None,
) -> tuple[bool, float, str, str, str, str, bool, str]:
    """The sort key of the list: the metric (best first, missing last), then a fixed tiebreak.

    Equal values are grouped by (task set, version) so that entrants which can tie are
    adjacent, then ordered by model, harness and run id, so the order never depends on input
    order.
    """
    signed = 0.0 if value is None else (-value if rank_by in DESCENDING else value)
    return (
        value is None,
        signed,
        task_set or "",
        resolved_version or "",
        model,
        harness or "",
        harness is not None,
        run_id or "",
    )


def competition_ranks(
    values: Sequence[float | None],
    groups: Sequence[tuple[str | None, str | None]],
    tied_with_best: Sequence[bool] | None = None,
) -> list[tuple[int, bool]]:
    """(rank, tied) for each entrant of a list already in `order_key` order.

    Two entrants tie when they are in the same group (task set, resolved version) and either
    have exactly the same value, or (`tied_with_best`, only for pass@1) one is the best (the
    first in the list) and the significance test cannot separate the other from it. Ranks are
    competition ranks of the listed order: the rank of an entrant is 1 + the number of
    entrants listed before the first entrant it shares a rank with (1, 1, 3).

    Because the list stays sorted by the metric, an entrant tied with the best pulls everyone
    listed between it and the best to rank 1 as well: they scored at least as well as one
    that shares rank 1. Such an entrant (for example a parity run between two tied full runs)
    has rank 1 but `tied = False`, since it was never tested. Entrants without a value never
    tie and share the rank after the last valued one.
    """
    count = len(values)
    if len(groups) != count or (tied_with_best is not None and len(tied_with_best) != count):
        raise ValueError("values, groups and tied_with_best must have one item per entrant")
    tied = [False] * count
    # block_start[i]: index of the first entrant sharing i's rank
    block_start = list(range(count))
    for i in range(1, count):
        if values[i] is not None and values[i] == values[i - 1] and groups[i] == groups[i - 1]:
            block_start[i] = block_start[i - 1]
            tied[i] = tied[i - 1] = True
        elif values[i] is None and values[i - 1] is None:
            block_start[i] = block_start[i - 1]
    if tied_with_best is not None and count and values[0] is not None:
        last = max((i for i in range(1, count) if tied_with_best[i] and values[i] is not None), default=0)
        if last:
            tied[0] = True
            for i in range(1, last + 1):
                tied[i] = tied[i] or tied_with_best[i]
            for i in range(count):
                if block_start[i] <= last:
                    block_start[i] = 0
    return [(block_start[i] + 1, tied[i]) for i in range(count)]


def leaderboard(entrants: Sequence[Entrant], rank_by: RankBy = "pass_at_1") -> list[LeaderboardEntry]:
    """Rank eligible entrants (docs/platform-api.md §3). Pure and deterministic.

    1. One row per (harness, model): the entrant with the latest `completed_at`, ties broken
       by the greater run_id. (Eligibility is the caller's: see `is_eligible`.)
    2. Every entrant is in one list sorted by the metric (`order_key`): pass@1 and pass@k
       descending; cost per task, time per task (`mean_duration_seconds`) and tokens per task
       ascending; a missing value last. pass@k is read at one k for the whole list
       (`ranked_k`, the deepest k any entrant has); an entrant without a point at that k has
       no value. Full runs and parity runs are in the same list.
    3. Ranks are competition ranks of that order (`competition_ranks`). Ties only ever join
       entrants of the same task set and resolved version: exactly equal values tie, and,
       ranking by pass@1, an entrant whose first attempts the exact McNemar test (α = 0.05,
       on the tasks both ran) cannot separate from the best entrant's shares rank 1 with it.
       Everyone listed between the best and such an entrant also has rank 1 (see
       `competition_ranks`), so ranks never decrease down the list.

    The significance test is a test of first attempts, i.e. of pass@1, so it decides ties only
    when ranking by pass@1; for pass@k, cost, time and tokens only equal values tie.
    """
    scored = [_Scored(e) for e in _latest_per_entrant(entrants)]
    k = ranked_k([row.pass_at_k for row in scored]) if rank_by == "pass_at_k" else None

    def key(row: _Scored) -> tuple[bool, float, str, str, str, str, bool, str]:
        e = row.entrant
        return order_key(
            row.metric(rank_by, k),
            rank_by,
            task_set=e.task_set,
            resolved_version=e.resolved_version,
            model=e.model,
            harness=e.harness,
            run_id=e.run_id,
        )

    ordered = sorted(scored, key=key)
    values = [row.metric(rank_by, k) for row in ordered]
    groups: list[tuple[str | None, str | None]] = [row.group() for row in ordered]
    tied_with_best: list[bool] | None = None
    if rank_by == "pass_at_1" and ordered:
        best = ordered[0]
        best_first = first_attempts(best.entrant.outcomes)
        tied_with_best = [False] + [
            row.group() == best.group() and indistinguishable(best_first, first_attempts(row.entrant.outcomes))
            for row in ordered[1:]
        ]
    ranks = competition_ranks(values, groups, tied_with_best)
    return [
        LeaderboardEntry(
            rank=rank,
            tied=tied,
            task_set=row.entrant.task_set,
            resolved_version=row.entrant.resolved_version,
            harness=row.entrant.harness,
            model=row.entrant.model,
            pass_at_1=row.pass_at_1,
            pass_at_k=row.pass_at_k,
            cost_per_task=row.entrant.cost_per_task,
            mean_duration_seconds=row.entrant.mean_duration_seconds,
            tokens_per_task=row.entrant.tokens_per_task,
            run=RunRef(id=row.entrant.run_id, name=row.entrant.run_name, platform_url=row.entrant.run_platform_url),
        )
        for row, (rank, tied) in zip(ordered, ranks, strict=True)
    ]
