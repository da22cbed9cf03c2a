"""One stored run as it is at the current clock reading.

Simulated elapsed time = (clock() − submitted_at) × the speed the run was submitted with, so
a later process with another `--speed` sees the same world. Timestamps are the wall-clock
instants at which simulated events happen: submitted_at + t / speed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property, lru_cache
from typing import Any

from ..core.world import ACTIVE, HAS_OUTPUTS, RunStatus
from .catalog import BY_KEY, BenchmarkSpec
from .metrics import AgentScore, best_pass_at_1, score_agents
from .simulator import FORCE_ENV, Schedule, Slot
from .store import RunData, RunRow, StoreSession, stable_uuid
from .timeline import agent_status, cutoff, results, run_status, unchanged_between


@lru_cache(maxsize=1 << 16)  # the same runs' times are formatted on every page that lists them
def iso(timestamp: float) -> str:
    """Epoch seconds -> `2026-01-02T03:04:05.678Z`."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class AgentInfo:
    index: int
    id: str
    model: str
    display_name: str
    model_ref: str | None
    harness: str | None  # as submitted (None: the benchmark's official scaffold)
    effective_harness: str | None
    env: dict[str, str]  # [env] overlaid by agents.env: what the agent process sees


def model_label(model: dict[str, Any]) -> tuple[str, str, str | None]:
    """(model, display name, model_ref) of a submitted `[agents.model]` table."""
    if model.get("type") == "hosted":
        lora, base = str(model.get("lora_model_name", "")), str(model.get("base_model", ""))
        return lora, f"{lora} ({base})", base
    name = str(model.get("model", ""))
    return name, name.rsplit("/", 1)[-1], model.get("base_url")


def agent_infos(run_id: str, config: dict[str, Any], spec: BenchmarkSpec) -> list[AgentInfo]:
    env_config = dict(config.get("env_config") or {})
    out: list[AgentInfo] = []
    for i, agent in enumerate(config.get("agents") or []):
        label, display, ref = model_label(agent.get("model") or {})
        harness = agent.get("harness")
        out.append(
            AgentInfo(
                index=i,
                id=stable_uuid("agent", run_id, i),
                model=label,
                display_name=display,
                model_ref=ref,
                harness=harness,
                effective_harness=harness or spec.default_harness,
                env={**env_config, **(agent.get("env") or {})},
            )
        )
    return out


def force_of(env: dict[str, str]) -> str | None:
    value = env.get(FORCE_ENV)
    return value if value in (RunStatus.FAILED, RunStatus.FINISHED) else None


def sim_time(row: RunRow, clock_now: float) -> float:
    """Simulated seconds since submit at the clock reading `clock_now`."""
    return max(0.0, (clock_now - row.submitted_at) * row.speed)


class RunView:
    def __init__(
        self, row: RunRow, db: StoreSession, clock_now: float, base_url: str, *, at: float | None = None
    ) -> None:
        """The run at `clock_now`, or at simulated time `at` (a download snapshot) when given."""
        self.row = row
        self.db = db
        self.base_url = base_url
        self.spec = BY_KEY[row.benchmark_key]
        self.now = at if at is not None else sim_time(row, clock_now)
        # a stop is part of history only from its moment on (a snapshot taken before it ignores it)
        stopped = row.stopped_at
        self.stopped_at = stopped if stopped is not None and stopped <= self.now else None
        self.status = run_status(row.queued_at, row.running_at, row.end_at, row.final_status, self.now, self.stopped_at)
        self.cutoff = cutoff(self.now, self.stopped_at)

    def iso(self, t: float) -> str:
        return iso(self.row.submitted_at + t / self.row.speed)

    @property
    def platform_url(self) -> str:
        return f"{self.base_url}/benchmarks/runs/{self.row.id}"

    @property
    def has_outputs(self) -> bool:
        return self.status in HAS_OUTPUTS

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def started_at(self) -> str | None:
        return self.iso(self.row.running_at) if self.cutoff >= self.row.running_at else None

    @property
    def completed_at(self) -> str | None:
        if self.stopped_at is not None:
            return self.iso(self.stopped_at)
        return self.iso(self.row.end_at) if self.now >= self.row.end_at else None

    @cached_property
    def data(self) -> RunData:
        return self.db.run_data(self.row.id)

    @property
    def config(self) -> dict[str, Any]:
        return self.data.config

    @property
    def scopes(self) -> dict[str, str]:
        return self.data.scopes

    @property
    def task_names(self) -> list[str]:
        return self.data.tasks

    @property
    def schedule(self) -> Schedule:
        return self.data.schedule

    @cached_property
    def agents(self) -> list[AgentInfo]:
        return agent_infos(self.row.id, self.config, self.spec)

    @cached_property
    def attempts(self) -> int:
        execution = self.config.get("execution_config") or {}
        return int(execution.get("attempts_per_task") or 1)

    @cached_property
    def results(self) -> list[Slot]:
        if not self.has_outputs:
            return []
        return results(self.schedule, self.now, self.stopped_at)

    @cached_property
    def scores(self) -> list[AgentScore]:
        if self._final or self.stopped_at is not None:  # nothing changes any more
            return self.db.store.memo(("scores", self.row.id, self.stopped_at), self._score)
        return self._score()

    def _score(self) -> list[AgentScore]:
        return score_agents(
            self.results,
            self.task_names,
            [(a.model, a.effective_harness) for a in self.agents],
            version=self.spec.version,
            run_id=self.row.id,
            run_name=self.row.name,
            completed_at=self.completed_at or self.iso(self.cutoff),
        )

    def agent_status(self, index: int) -> str:
        return agent_status(self.schedule, index, self.status, self.now, self.stopped_at)

    @property
    def unchanged(self) -> tuple[float, float]:
        """The simulated times [start, end) over which this run's list item stays as it is at `now`."""
        row = self.row
        if self.settled:  # an end or a stop is final
            return (self.stopped_at if self.stopped_at is not None else row.end_at), float("inf")
        moments = [row.queued_at, row.running_at, row.end_at]
        if row.stopped_at is not None:  # recorded, but later than this view's moment
            moments.append(row.stopped_at)
        if self.has_outputs:  # results show: each slot's end adds one
            moments.extend(s.end for s in self.schedule.slots)
        return unchanged_between(moments, self.now)

    @property
    def settled(self) -> bool:
        """The run has ended (finished, failed or stopped): nothing about it changes any more."""
        return self._final or self.stopped_at is not None

    @property
    def _final(self) -> bool:
        return self.stopped_at is None and self.now >= self.row.end_at

    @property
    def ingested(self) -> int:
        if self._final:
            return self.row.final_ingested
        if not self.has_outputs:
            return 0
        return sum(s.produced for s in self.scores)

    @property
    def best_pass_at_1(self) -> float | None:
        if self._final:
            return self.row.final_best
        if not self.has_outputs:
            return None
        return best_pass_at_1(self.scores)

    def selection_tasks(self) -> list[tuple[str, str | None, str | None]]:
        """(name, category, difficulty) of each task of the run, in run order."""
        out = []
        for name in self.task_names:
            task = self.spec.task(name)
            out.append((name, task.category if task else None, task.difficulty if task else None))
        return out
