"""The two inputs of a plan: what the specs want (desired) and what the platform has (observed).

Plain immutable values, built by the engine from files and API answers; the planner reads
nothing else, so a plan is a pure function of these.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import Field

from ..specs.models import BenchmarkSpec, RunSpec
from ..specs.rules import BenchmarkFacts
from ..values import Value
from .identity import Marker


class RunStatus(StrEnum):
    PENDING = "pending"
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    STOPPED = "stopped"


ACTIVE = frozenset({RunStatus.PENDING, RunStatus.QUEUED, RunStatus.RUNNING})
TERMINAL = frozenset({RunStatus.FINISHED, RunStatus.FAILED, RunStatus.STOPPED})
HAS_OUTPUTS = frozenset({RunStatus.RUNNING, *TERMINAL})
NO_OUTPUTS_YET = frozenset({RunStatus.PENDING, RunStatus.QUEUED})  # the platform answers 409 for outputs


class _Value(Value):
    """A frozen value of the world model (reconciler/values.py)."""


class RunAgents(_Value):
    """The agents a finished run's own submitted config ran, and whether it ran a task selection."""

    selection: bool
    agents: tuple[tuple[str | None, str], ...]  # (harness as submitted, model)


class ObservedRun(_Value):
    id: str
    name: str
    status: str
    benchmark_id: str | None = None
    benchmark_name: str | None = None
    created_at: str | None = None
    marker: Marker | None = None
    ingested: int = 0
    expected: int = 0
    best_pass_at_1: float | None = None
    platform_url: str | None = None
    ran: RunAgents | None = None  # known for our finished runs

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


class BenchmarkState(_Value):
    """One benchmark as the platform reports it, under the ref a spec uses."""

    ref: str
    id: str
    key: str
    name: str
    sync_status: str = "ready"
    sync_error: str | None = None
    task_count: int = 0
    task_set_counts: dict[str, int] = Field(default_factory=dict)
    category_counts: dict[str, int] = Field(default_factory=dict)
    task_names: frozenset[str] = frozenset()
    default_harness: str | None = None
    required_secret_names: tuple[str, ...] = ()
    facts: BenchmarkFacts | None = None
    # "harness|model" -> cost per task and attempt, from the platform's leaderboard history
    cost_per_task: dict[str, float] = Field(default_factory=dict)
    cost_runs: dict[str, str] = Field(default_factory=dict)  # "harness|model" -> the run that cost is from
    leaderboard_digest: str = ""

    @property
    def ready(self) -> bool:
        return self.sync_status == "ready"


class Adoption(_Value):
    """What the platform says about the run a spec's `[reconcile] adopt` names (core/adopt.py decides)."""

    spec_id: str
    ref: str  # the run name or id as written in the spec
    run: ObservedRun | None = None  # None: no such run in the workspace
    marker: Marker | None = None  # the run's own marker, when it already has one
    differences: tuple[str, ...] = ()  # "field: run has X, spec has Y", empty when the configs match exactly
    fingerprint: str | None = None  # of the run's own submitted config
    recorded: bool = False  # the state file already records this run as the spec's
    # the state file has an entry an older reconciler wrote for it (no config fingerprint): not
    # enough on its own (engine.adoption.adoption_entry), but the block says how to go on
    recorded_by_older: bool = False


class Observed(_Value):
    owner: str
    runs: tuple[ObservedRun, ...] = ()
    others: int = 0  # listed runs not in `runs`: not ours, counted only (engine/observe.py)
    benchmarks: dict[str, BenchmarkState] = Field(default_factory=dict)  # keyed by spec ref; absent = unknown
    secrets: frozenset[str] = frozenset()
    downloaded: dict[str, frozenset[str]] = Field(default_factory=dict)  # run id -> output types on disk
    rendered: dict[str, str] = Field(default_factory=dict)  # benchmark spec id -> render digest (core.plan)
    templates_digest: str = ""  # the leaderboard templates as they would load now: a render input
    adoptions: dict[str, Adoption] = Field(default_factory=dict)  # spec id -> the run its `adopt` names
    moved: dict[str, str] = Field(default_factory=dict)  # run id -> spec id it was recorded as moved to
    # run id -> the commit it was submitted from, which this checkout is behind (engine/stale_checkout.py)
    behind: dict[str, str] = Field(default_factory=dict)
    # (spec id, fingerprint) of runs marked with `legacy_owner`, the owner name earlier versions wrote
    legacy_owner: str | None = None
    legacy: frozenset[tuple[str, str]] = frozenset()
    # the owner is the workspace name every repository of the workspace with no GitHub origin and no
    # `owner` writes (settings.Owner.shared): a run marked with it may be another repository's
    shared_owner: bool = False

    @property
    def listed(self) -> int:
        """How many runs the platform listed on the benchmarks read."""
        return len(self.runs) + self.others

    def adopted_markers(self) -> dict[str, Marker]:
        """run id -> the marker a spec's `adopt` gave a run that carries none of its own (read from
        the platform by the process that observed it: engine/adoption.py)."""
        claimed = {a.run.id for a in self.adoptions.values() if a.run is not None and a.marker is None}
        return {r.id: r.marker for r in self.runs if r.id in claimed and r.marker is not None}


def keeper(runs: Iterable[ObservedRun]) -> ObservedRun:
    """The run every machine keeps of several live runs of one config: the newest, by the same
    total order (creation time, then id) everywhere, so appliers agree without talking.

    The newest, because every stop reconciler itself makes of such a run is of an older one
    (`--replace` stops the old run, then submits), and the platform shows a stopped run as
    running until it has cleaned up its sandboxes: keeping the oldest would keep the run being
    stopped and stop the new one, on any machine that did not make the stop itself."""
    return max(runs, key=lambda r: (r.created_at or "", r.id))


class DesiredRun(_Value):
    spec: RunSpec
    fingerprint: str


class Desired(_Value):
    runs: tuple[DesiredRun, ...] = ()
    benchmarks: tuple[BenchmarkSpec, ...] = ()


class Policy(_Value):
    prune: bool = False
    allow_protected: bool = False
    max_attempts_per_apply: int | None = None
    targets: frozenset[str] = frozenset()  # spec ids; empty = every spec
    replace: frozenset[str] = frozenset()  # spec ids whose current config is submitted again on purpose

    def targeted(self, spec_id: str) -> bool:
        return not self.targets or spec_id in self.targets
