"""One run's results, read from its `results.csv`, and the paired comparison with an earlier run.

Pure: text in, frozen values out. The per-agent figures follow the platform's definitions
(contract section 3), so a comment and the leaderboard never disagree:

- a result counts towards pass@1 and pass@k when it was produced (passed, failed or errored;
  errored counts as a fail); cancelled rows count only in the totals;
- cost, tokens and time per task = the agent's totals over its non-cancelled rows / its tasks
  (all of a task's attempts summed, as on the leaderboard).

The comparison pairs two runs of the same spec agent by agent (same harness and model) and task
by task on first attempts (`attempt` 0, the lowest attempt present), and reports the delta in
pass@1 and the exact two-sided McNemar p-value of `scoring.mcnemar_exact_p`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from . import scoring

PRODUCED = frozenset({"passed", "failed", "errored"})
REQUIRED_COLUMNS = ("agent_index", "task_name", "attempt", "outcome")


class ResultsError(ValueError):
    """`results.csv` is not the platform's layout; the message names the line and column."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AgentResults(_Frozen):
    """One agent of one run: its outcomes per task (attempt order) and its per-task figures."""

    agent_index: int
    harness: str | None
    model: str
    outcomes: dict[str, tuple[bool, ...]]
    cost_per_task: float | None
    mean_duration_seconds: float | None
    tokens_per_task: float | None

    @property
    def label(self) -> str:
        return f"{self.harness} · {self.model}" if self.harness else self.model

    @property
    def key(self) -> tuple[str | None, str]:
        """What pairs an agent with the same agent in another run of the spec."""
        return (self.harness, self.model)

    @property
    def pass_at_1(self) -> scoring.Interval:
        return scoring.pass_at_1(self.outcomes)

    @property
    def deepest_pass_at_k(self) -> scoring.PassAtK | None:
        curve = scoring.pass_at_k_curve(self.outcomes)
        return curve[-1] if curve else None

    @property
    def first_attempts(self) -> dict[str, bool]:
        return scoring.first_attempts(self.outcomes)


class Comparison(_Frozen):
    """This run's agent against the same agent in the previous run of the spec.

    `delta` = pass@1 now − pass@1 before (over each run's own tasks); `b` = tasks passed now
    and failed before on the first attempt, `c` = the reverse, over the `paired` tasks both ran;
    `p_value` = the exact two-sided McNemar p of (b, c).
    """

    previous_run: str
    delta: float | None
    paired: int
    b: int
    c: int
    p_value: float


def _int(value: str, line: int, column: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ResultsError(f"line {line}: {column} must be an integer, not {value!r}") from None


def _float(value: str | None) -> float:
    try:
        return float(value) if value not in (None, "") else 0.0
    except ValueError:
        return 0.0


def parse_results(text: str, *, source: str = "results.csv") -> list[AgentResults]:
    """Every agent of a `results.csv`, by agent index; raises ResultsError naming the bad line."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise ResultsError(f"{source}: missing column(s) {', '.join(missing)}")
    rows: dict[int, list[tuple[int, int, dict[str, str]]]] = {}
    for line, row in enumerate(reader, start=2):
        index = _int(row["agent_index"], line, "agent_index")
        attempt = _int(row["attempt"], line, "attempt")
        rows.setdefault(index, []).append((attempt, line, row))
    return [_agent(index, sorted(rows[index], key=lambda r: (r[0], r[1]))) for index in sorted(rows)]


def _agent(index: int, rows: Sequence[tuple[int, int, dict[str, str]]]) -> AgentResults:
    outcomes: dict[str, list[bool]] = {}
    cost = tokens = duration = 0.0
    for _attempt, _line, row in rows:
        outcome = row["outcome"]
        if outcome == "cancelled":
            continue
        cost += _float(row.get("cost_usd"))
        tokens += _float(row.get("input_tokens")) + _float(row.get("output_tokens"))
        if outcome in PRODUCED:
            duration += _float(row.get("duration_seconds"))
            outcomes.setdefault(row["task_name"], []).append(outcome == "passed")
    first = rows[0][2]
    tasks = len(outcomes)
    return AgentResults(
        agent_index=index,
        harness=first.get("harness") or None,
        model=first.get("model") or "?",
        outcomes={task: tuple(attempts) for task, attempts in sorted(outcomes.items())},
        cost_per_task=cost / tasks if tasks else None,
        mean_duration_seconds=duration / tasks if tasks else None,
        tokens_per_task=tokens / tasks if tasks else None,
    )


def compare(now: AgentResults, before: AgentResults, previous_run: str) -> Comparison:
    """The paired comparison of one agent's two runs (see `Comparison`)."""
    a, b_first = now.first_attempts, before.first_attempts
    b, c = scoring.discordant_pairs(a, b_first)
    p_now, p_before = now.pass_at_1.value, before.pass_at_1.value
    return Comparison(
        previous_run=previous_run,
        delta=None if p_now is None or p_before is None else p_now - p_before,
        paired=len(a.keys() & b_first.keys()),
        b=b,
        c=c,
        p_value=scoring.mcnemar_exact_p(b, c),
    )


def comparisons(
    now: Sequence[AgentResults], before: Sequence[AgentResults], previous_run: str
) -> Mapping[int, Comparison]:
    """Agent index (of `now`) -> its comparison, for every agent the previous run also had."""
    earlier = {agent.key: agent for agent in before if agent.outcomes}
    return {
        agent.agent_index: compare(agent, earlier[agent.key], previous_run)
        for agent in now
        if agent.outcomes and agent.key in earlier
    }


class AgentReport(_Frozen):
    results: AgentResults
    rank: int | None = None
    tied: bool = False
    comparison: Comparison | None = None


class RunReport(_Frozen):
    """One spec's latest run, as the results comment shows it."""

    spec_id: str
    spec_path: str
    run_id: str
    run_name: str
    status: str
    terminal: bool
    platform_url: str | None = None
    commit: str | None = None
    agents: tuple[AgentReport, ...] = ()
    reason: str | None = None  # why a failed or stopped run ended, from its logs
    problem: str | None = None  # why the figures are missing (results.csv unreadable or not downloadable)
    leaderboard: str | None = None  # the committed leaderboard file of the run's benchmark
    superseded_by: str | None = None  # the run a later change of the spec replaced it with

    @property
    def succeeded(self) -> bool:
        return self.status == "finished"
