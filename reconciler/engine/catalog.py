"""What a spec author needs to know about the workspace's benchmarks, as plain values.

One detail request per benchmark (the list answer lacks harness and judge requirements).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..osmosis.client import OsmosisClient
from ..osmosis.errors import NotFound
from ..osmosis.models import BenchmarkDetail, Task

DETAIL_CONCURRENCY = 8
HarnessRule = Literal["required", "optional", "none"]


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class TaskSetView(_View):
    name: str
    task_count: int
    recommended: bool


class BenchmarkSummary(_View):
    """One row of `reconciler benchmarks`."""

    key: str
    name: str
    id: str
    sync_status: str
    sync_error: str | None
    task_count: int
    synced_task_count: int | None
    harness: HarnessRule
    default_harness: str | None
    requires_judge_api_key: bool
    judge_model_default: str | None
    required_secret_names: tuple[str, ...]
    task_sets: tuple[TaskSetView, ...]
    platform_url: str | None

    @property
    def parity_set(self) -> str | None:
        """The recommended published task set, if the benchmark has one."""
        return next((s.name for s in self.task_sets if s.recommended), None)


class CategoryView(_View):
    name: str
    task_count: int


class TaskView(_View):
    name: str
    category: str | None
    difficulty: str | None  # easy | medium | hard | None: None means the source gave none


class BenchmarkView(BenchmarkSummary):
    """`reconciler benchmarks KEY`: everything needed to write `[tasks]` and `[[agents]]`."""

    description: str | None
    source_url: str | None
    pass_threshold: float
    categories: tuple[CategoryView, ...]
    tasks: tuple[TaskView, ...]
    unavailable_reason: str | None
    unavailable_tasks: tuple[TaskView, ...]


def _harness(detail: BenchmarkDetail) -> HarnessRule:
    if not detail.supports_harness:
        return "none"
    return "required" if detail.requires_harness else "optional"


def _tasks(tasks: Sequence[Task]) -> tuple[TaskView, ...]:
    return tuple(TaskView(name=t.name, category=t.category, difficulty=t.difficulty) for t in tasks)


def summary_of(detail: BenchmarkDetail) -> BenchmarkSummary:
    return BenchmarkSummary(**_summary_fields(detail))


def _summary_fields(d: BenchmarkDetail) -> dict[str, object]:
    return {
        "key": d.source_ref,
        "name": d.name,
        "id": d.id,
        "sync_status": d.sync_status,
        "sync_error": d.sync_error,
        "task_count": d.task_count,
        "synced_task_count": d.synced_task_count,
        "harness": _harness(d),
        "default_harness": d.default_harness,
        "requires_judge_api_key": d.requires_judge_api_key,
        "judge_model_default": d.judge_model_default,
        "required_secret_names": tuple(d.required_secret_names),
        "task_sets": tuple(
            TaskSetView(name=s.name, task_count=s.task_count, recommended=s.recommended) for s in d.task_sets
        ),
        "platform_url": d.platform_url,
    }


def view_of(d: BenchmarkDetail) -> BenchmarkView:
    unavailable = d.unavailable_tasks
    return BenchmarkView(
        **_summary_fields(d),
        description=d.description,
        source_url=d.source_url,
        pass_threshold=d.pass_threshold,
        categories=tuple(CategoryView(name=c.name, task_count=c.task_count) for c in d.categories),
        tasks=_tasks(d.tasks),
        unavailable_reason=unavailable.reason if unavailable else None,
        unavailable_tasks=_tasks(unavailable.tasks) if unavailable else (),
    )


async def list_benchmarks(client: OsmosisClient) -> list[BenchmarkSummary]:
    """Every benchmark of the workspace, by key."""
    entries = await client.list_benchmarks()
    gate = asyncio.Semaphore(DETAIL_CONCURRENCY)

    async def one(entry_id: str) -> BenchmarkDetail:
        async with gate:
            return await client.get_benchmark(entry_id)

    details = await asyncio.gather(*(one(e.id) for e in entries))
    return sorted((summary_of(d) for d in details), key=lambda s: s.key)


async def show_benchmark(client: OsmosisClient, ref: str) -> BenchmarkView:
    try:
        return view_of(await client.get_benchmark(ref))
    except NotFound as exc:
        exc.hint = "`reconciler benchmarks` lists the keys of this workspace's benchmarks"
        raise
