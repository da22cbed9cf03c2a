"""What the platform answers, as frozen pydantic models (field names are the wire's own).

Every field the official client reads (docs/platform-api.md §2–§3) is declared; fields the platform adds
later are ignored (`extra="ignore"`). Required fields follow the official client: a missing one is
a ProtocolError in the client. Optional numbers that are not finite, non-bool numbers become
None rather than failing the whole answer (the official client does the same for `best_pass_at_1`),
and a missing or null list/bool takes its documented default.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Set
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from ..core.world import ACTIVE, TERMINAL

T = TypeVar("T")
Difficulty = Literal["easy", "medium", "hard"]


def _default_if_none(default: object) -> Callable[[object], object]:
    return lambda value: default if value is None else value


def _number_or_none(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _difficulty(value: object) -> str | None:
    if isinstance(value, str) and value.strip().lower() in ("easy", "medium", "hard"):
        return value.strip().lower()
    return None


def _objects_only(value: object) -> object:
    return tuple(item for item in value if isinstance(item, dict)) if isinstance(value, list | tuple) else ()


Number = Annotated[float | None, BeforeValidator(_number_or_none)]
Count = Annotated[int | None, BeforeValidator(_int_or_none)]
FalseIfNone = Annotated[bool, BeforeValidator(_default_if_none(False))]
Json = dict[str, Any]
JsonObject = Annotated[Json, BeforeValidator(lambda v: v if isinstance(v, dict) else {})]
Objects = Annotated[tuple[Json, ...], BeforeValidator(_objects_only)]


EmptyIfNone = Annotated[tuple[T, ...], BeforeValidator(_default_if_none(()))]
"""A tuple field where a missing or null list means empty."""


class WireModel(BaseModel):
    # defer_build: a model's validator is built when it first parses an answer, not on import;
    # a command reads a few of these models, and building all of them cost every command ~20 ms
    model_config = ConfigDict(frozen=True, extra="ignore", coerce_numbers_to_str=True, defer_build=True)


# --- benchmarks (§2.1, §2.2) ---


class TaskSet(WireModel):
    name: str
    task_count: int
    recommended: FalseIfNone = False
    description: str | None = None


class Category(WireModel):
    name: str
    task_count: int


class Task(WireModel):
    name: str
    category: str | None = None
    difficulty: Annotated[Difficulty | None, BeforeValidator(_difficulty)] = None


def _text(value: object) -> str | None:
    """A free-form field shown to people: a string as it is, any other value as compact JSON."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


class UnavailableTasks(WireModel):
    """Any object; we keep every key, and normalise its `tasks` like the benchmark's."""

    model_config = ConfigDict(extra="allow")
    reason: Annotated[str | None, BeforeValidator(_text)] = None
    tasks: EmptyIfNone[Task] = ()


class BenchmarkEntry(WireModel):
    id: str
    name: str
    source_type: str
    source_ref: str
    task_count: int
    category_count: int
    description: str | None = None
    source_url: str | None = None
    platform_url: str | None = None
    creator_name: str | None = None
    task_sets: EmptyIfNone[TaskSet] = ()
    sync_status: Annotated[str, BeforeValidator(_default_if_none("ready"))] = "ready"
    synced_task_count: Count = None
    sync_error: str | None = None
    run_count: Count = None
    running_count: Count = None
    last_run_at: str | None = None
    last_run_status: str | None = None
    last_run_name: str | None = None

    @property
    def key(self) -> str:
        """The user-facing key (`source_ref`), as the official CLI shows it."""
        return self.source_ref


class Interval(WireModel):
    value: Number = None
    ci_low: Number = None
    ci_high: Number = None
    n: Count = None
    method: str | None = None


class PassAtK(Interval):
    k: Count = None


class RunRef(WireModel):
    id: str | None = None
    name: str | None = None
    platform_url: str | None = None


class LeaderboardEntry(WireModel):
    """A typed view of one leaderboard object; the verbatim dict stays in BenchmarkDetail."""

    rank: Count = None
    tied: Annotated[bool, BeforeValidator(bool)] = False
    task_set: str | None = None
    resolved_version: str | None = None
    harness: str | None = None
    model: str | None = None
    pass_at_1: Interval | None = None
    pass_at_k: Annotated[tuple[PassAtK, ...], BeforeValidator(_objects_only)] = ()
    cost_per_task: Number = None
    mean_duration_seconds: Number = None
    tokens_per_task: Number = None
    run: RunRef | None = None


class BenchmarkDetail(BenchmarkEntry):
    runner_family: str
    supports_harness: bool
    requires_harness: bool
    requires_judge_model: bool
    pass_threshold: float
    requires_judge_api_key: FalseIfNone = False
    judge_model_default: str | None = None
    default_harness: str | None = None
    categories: EmptyIfNone[Category] = ()
    tasks: EmptyIfNone[Task] = ()
    unavailable_tasks: UnavailableTasks | None = None
    required_secret_names: EmptyIfNone[str] = ()
    leaderboard: Objects = ()
    """The detail answer's top-level `leaderboard`, verbatim; non-objects dropped."""

    def leaderboard_entries(self) -> tuple[LeaderboardEntry, ...]:
        return tuple(LeaderboardEntry.model_validate(entry) for entry in self.leaderboard)


# --- runs (§2.3, §2.4) ---


class RunItem(WireModel):
    id: str
    name: str | None = None
    status: str | None = None
    benchmark_name: str | None = None
    benchmark_id: str | None = None
    created_at: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    creator_name: str | None = None
    creator_email: str | None = None
    platform_url: str | None = None
    agent_count: Count = None
    best_pass_at_1: Number = None
    ingested_results: Count = None
    expected_results: Count = None

    @model_validator(mode="before")
    @classmethod
    def _fallbacks(cls, data: Any) -> Any:
        return _run_fallbacks(data) if isinstance(data, dict) else data

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL


def _run_fallbacks(data: dict[str, Any]) -> dict[str, Any]:
    """§2.3: `name` from `benchmark_run_name`; `benchmark_name`/`benchmark_id` from `benchmark`."""
    data = dict(data)
    if data.get("name") is None:
        data["name"] = data.get("benchmark_run_name")
    benchmark = data.get("benchmark")
    if isinstance(benchmark, dict):
        for ours, theirs in (("benchmark_name", "name"), ("benchmark_id", "id")):
            if data.get(ours) is None:
                data[ours] = benchmark.get(theirs)
    return data


class RunConfiguration(WireModel):
    source_type: str | None = None
    source_ref: str | None = None
    resolved_version: str | None = None
    resolved_digest: str | None = None
    task_filters: Any = None
    config: Any = None
    resolved_secret_scopes: JsonObject = Field(default_factory=dict)
    benchmark_name: str | None = None
    benchmark_id: str | None = None


class AgentAggregates(WireModel):
    reported_cost_usd: Number = None
    mean_duration_seconds: Number = None
    tokens_per_task: Number = None


class AgentEntry(WireModel):
    id: str | None = None
    agent_index: Count = None
    harness: str | None = None
    model_display_name: str | None = None
    model: str | None = None
    model_ref: str | None = None
    status: str | None = None
    aggregates: Annotated[AgentAggregates, BeforeValidator(_default_if_none({}))] = Field(
        default_factory=AgentAggregates
    )
    environment_variables: JsonObject = Field(default_factory=dict)

    @property
    def model_label(self) -> str | None:
        return self.model_display_name or self.model or self.model_ref


class AgentMetric(WireModel):
    benchmark_run_agent_id: str | None = None
    rank: Count = None
    n_tasks: Count = None
    pass_at_1: Interval | None = None
    pass_at_k: Annotated[tuple[PassAtK, ...], BeforeValidator(_objects_only)] = ()


class Progress(WireModel):
    ingested: Count = None
    expected: Count = None


class RunTotals(WireModel):
    passed: Count = None
    failed: Count = None
    errored: Count = None
    cancelled: Count = None
    total_input_tokens: Count = None
    total_output_tokens: Count = None
    total_cost_usd: Number = None


class RunDetail(WireModel):
    """§2.4, with the reference's fallbacks folded into `benchmark_run`."""

    benchmark_run: RunItem
    configuration: Annotated[RunConfiguration, BeforeValidator(_default_if_none({}))] = Field(
        default_factory=RunConfiguration
    )
    agents: EmptyIfNone[AgentEntry] = ()
    progress: Annotated[Progress, BeforeValidator(_default_if_none({}))] = Field(default_factory=Progress)
    totals: Annotated[RunTotals, BeforeValidator(_default_if_none({}))] = Field(default_factory=RunTotals)
    agent_metrics: EmptyIfNone[AgentMetric] = ()
    is_internal_user: FalseIfNone = False

    @model_validator(mode="before")
    @classmethod
    def _fallbacks(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not isinstance(data.get("benchmark_run"), dict):
            return data
        run = _run_fallbacks(data["benchmark_run"])
        configuration = data.get("configuration")
        if isinstance(configuration, dict):
            for key in ("benchmark_name", "benchmark_id"):
                if run.get(key) is None:
                    run[key] = configuration.get(key)
        agents = data.get("agents")
        if _int_or_none(run.get("agent_count")) is None and isinstance(agents, list):
            run["agent_count"] = len(agents)
        if _number_or_none(run.get("best_pass_at_1")) is None:
            run["best_pass_at_1"] = _best_pass_at_1(data.get("agent_metrics"))
        progress = data.get("progress")
        if isinstance(progress, dict):
            for ours, theirs in (("ingested_results", "ingested"), ("expected_results", "expected")):
                if _int_or_none(progress.get(theirs)) is not None:
                    run[ours] = progress[theirs]
        return {**data, "benchmark_run": run}


def _best_pass_at_1(metrics: object) -> float | None:
    values = [
        _number_or_none(m["pass_at_1"].get("value"))
        for m in (metrics if isinstance(metrics, list) else [])
        if isinstance(m, dict) and isinstance(m.get("pass_at_1"), dict)
    ]
    numbers = [v for v in values if v is not None]
    return max(numbers) if numbers else None


# --- logs, submit (§2.5, §2.6) ---


class LogEntry(WireModel):
    timestamp: str | None = None
    level: str | None = None
    step: str | None = None
    message: str | None = None
    details: Annotated[Json | None, BeforeValidator(lambda v: v if isinstance(v, dict) else None)] = None


class LogPage(WireModel):
    logs: EmptyIfNone[LogEntry] = ()
    next_cursor: str | None = None


class SubmitResult(WireModel):
    id: str
    name: str
    status: str
    created_at: str
    workflow_id: str
    task_count: int
    platform_url: str | None = None


# --- outputs (§2.8, §2.9) ---


class ManifestFile(WireModel):
    path: Annotated[str, Field(min_length=1, strict=True)]
    size: Annotated[int, Field(ge=0, strict=True)]
    token: str | None = None


class Manifest(WireModel):
    files: EmptyIfNone[ManifestFile] = ()
    totals: JsonObject = Field(default_factory=dict)


def _first_present(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((data[key] for key in keys if data.get(key) is not None), None)


class DownloadUrl(WireModel):
    path: Annotated[str, Field(min_length=1)]
    url: Annotated[str, Field(min_length=1)]
    token: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _alternate_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {**data, "url": _first_present(data, ("url", "presignedUrl", "presigned_url"))}
        return data


class DownloadUrls(WireModel):
    items: EmptyIfNone[DownloadUrl] = ()
    expires_in: Count = None

    @model_validator(mode="before")
    @classmethod
    def _alternate_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {**data, "items": _first_present(data, ("items", "files", "urls"))}
        return data

    def match(self, path: str, token: str | None) -> DownloadUrl | None:
        """The URL for a manifest file: the exact (token, path) pair first, else a unique path."""
        for item in self.items:
            if item.path == path and item.token == token:
                return item
        same_path = [item for item in self.items if item.path == path]
        return same_path[0] if len(same_path) == 1 else None


# --- secrets (§2.10) and pages (§2.11) ---


class SecretRecord(WireModel):
    id: str
    name: str | None = None
    scope: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    creator_name: str | None = None
    updater_name: str | None = None
    platform_url: str | None = None


class PageMeta(WireModel):
    """The paging fields of a list answer, read once per page (the items are parsed apart)."""

    total_count: Annotated[int, BeforeValidator(_default_if_none(0))] = 0
    has_more: FalseIfNone = False
    next_offset: int | None = None


class Page(PageMeta, Generic[T]):
    """One page of a list answer; `next_offset` is None at the end."""

    items: tuple[T, ...] = ()
    # ids of the items a caller's `keep` filter passed over: listed, counted, never modelled
    skipped: tuple[str, ...] = ()


class RunScan(WireModel):
    """A run listing read through a filter: the runs kept as models, and the ids of the others."""

    items: tuple[RunItem, ...] = ()
    others: Set[str] = frozenset()  # never copied: up to every run of the workspace
