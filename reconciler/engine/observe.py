"""Observed state: what the platform has for the benchmarks the specs use, read in pages.

Cost: one benchmark-detail request per benchmark, one run listing page per 50 runs, one
secrets listing, and one run-detail request per run never seen before (its marker is then
cached in the state file for good, since a run's environment never changes).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..core.cost import agent_key
from ..core.identity import Marker, canonical_json, read_marker
from ..core.world import BenchmarkState, Desired, Observed, ObservedRun
from ..osmosis.client import OsmosisClient
from ..osmosis.errors import NotFound
from ..osmosis.models import BenchmarkDetail, RunDetail, RunItem
from ..outputs.layout import run_dir_name, types_on_disk
from ..specs.rules import BenchmarkFacts, TaskInfo
from .state import State

DETAIL_CONCURRENCY = 16


def benchmark_state(ref: str, detail: BenchmarkDetail) -> BenchmarkState:
    b = detail
    tasks = tuple(TaskInfo(name=t.name, category=t.category, difficulty=t.difficulty) for t in b.tasks)
    recommended = next((s.name for s in b.task_sets if s.recommended), None)
    facts = BenchmarkFacts(
        key=b.source_ref,
        name=b.name,
        supports_harness=b.supports_harness,
        requires_harness=b.requires_harness,
        requires_judge_model=b.requires_judge_model,
        requires_judge_api_key=b.requires_judge_api_key,
        task_sets=tuple(s.name for s in b.task_sets),
        recommended_task_set=recommended,
        tasks=tasks,
        required_secret_names=tuple(b.required_secret_names),
        default_harness=b.default_harness,
    )
    # the leaderboard's cost per task sums a task's attempts: divide by the run's attempts per
    # task (its deepest pass@k, which is the attempt count for a ranked run) to price one attempt
    costs: dict[str, float] = {}
    cost_runs: dict[str, str] = {}
    for entry in detail.leaderboard_entries():
        attempts = (entry.pass_at_k[-1].k if entry.pass_at_k else None) or 1
        key = agent_key(entry.harness, entry.model)
        if entry.cost_per_task is not None and key not in costs:
            costs[key] = entry.cost_per_task / max(attempts, 1)
            cost_runs[key] = entry.run.id if entry.run is not None and entry.run.id else key
    return BenchmarkState(
        ref=ref,
        id=b.id,
        key=b.source_ref,
        name=b.name,
        sync_status=b.sync_status,
        sync_error=b.sync_error,
        task_count=b.task_count,
        task_set_counts={s.name: s.task_count for s in b.task_sets},
        category_counts={c.name: c.task_count for c in b.categories},
        task_names=frozenset(t.name for t in b.tasks),
        default_harness=b.default_harness,
        required_secret_names=tuple(b.required_secret_names),
        facts=facts,
        cost_per_task=costs,
        cost_runs=cost_runs,
        leaderboard_digest=hashlib.sha256(canonical_json(detail.leaderboard).encode()).hexdigest()[:16],
    )


def marker_of(detail: RunDetail) -> Marker | None:
    """The ownership marker in a run's submitted environment (or, failing that, an agent's)."""
    config: Any = detail.configuration.config
    env = config.get("env_config") if isinstance(config, dict) else None
    marker = read_marker(env if isinstance(env, dict) else None)
    if marker is None:
        for agent in detail.agents:
            marker = read_marker(agent.environment_variables)
            if marker is not None:
                break
    return marker


def observed_run(item: RunItem, marker: Marker | None) -> ObservedRun:
    return ObservedRun(
        id=item.id,
        name=item.name or item.id,
        status=item.status or "pending",
        benchmark_id=item.benchmark_id,
        benchmark_name=item.benchmark_name,
        created_at=item.created_at,
        marker=marker,
        ingested=item.ingested_results or 0,
        expected=item.expected_results or 0,
        best_pass_at_1=item.best_pass_at_1,
        platform_url=item.platform_url,
    )


async def fetch_markers(client: OsmosisClient, run_ids: Iterable[str], state: State) -> None:
    """Read the marker of every run not yet in the cache, concurrently within a bound."""
    missing = [r for r in run_ids if r not in state.markers]
    gate = asyncio.Semaphore(DETAIL_CONCURRENCY)

    async def one(run_id: str) -> None:
        async with gate:
            try:
                detail = await client.get_run(run_id)
            except NotFound:
                return
            state.markers[run_id] = marker_of(detail)

    await asyncio.gather(*(one(r) for r in missing))


async def observe(
    client: OsmosisClient,
    desired: Desired,
    state: State,
    *,
    owner: str,
    outputs_root: Path,
) -> Observed:
    """Read the platform for every benchmark the specs (or the state file's owned runs) touch."""
    refs = sorted(
        {d.spec.config.experiment.benchmark for d in desired.runs} | {b.benchmark.ref for b in desired.benchmarks}
    )

    async def detail(ref: str) -> tuple[str, BenchmarkDetail | None]:
        try:
            return ref, await client.get_benchmark(ref)
        except NotFound:
            return ref, None

    details = await asyncio.gather(*(detail(r) for r in refs))
    benchmarks = {ref: benchmark_state(ref, d) for ref, d in details if d is not None}
    for ref, b in benchmarks.items():
        state.benchmark_ids[ref] = b.id
    # owned runs of deleted specs still live on their benchmark: list it too, so orphans show
    benchmark_ids = sorted(
        {b.id for b in benchmarks.values()} | {r.benchmark_id for r in state.specs.values() if r.benchmark_id}
    )

    listings, secrets = await asyncio.gather(
        asyncio.gather(*(client.list_runs(benchmark_id=bid) for bid in benchmark_ids)),
        client.list_secrets(scope="all"),
    )
    items: dict[str, RunItem] = {}
    for listing in listings:
        for item in listing:
            items.setdefault(item.id, item)
    await fetch_markers(client, items, state)
    runs = tuple(observed_run(item, state.markers.get(item.id)) for item in items.values())

    downloaded: dict[str, frozenset[str]] = {}
    for run in runs:
        if run.marker is not None and run.marker.owner == owner and run.terminal:
            done = types_on_disk(outputs_root / run_dir_name(run.name, run.id), run.id)
            if done:
                downloaded[run.id] = done
    return Observed(
        owner=owner,
        runs=runs,
        benchmarks=benchmarks,
        secrets=frozenset(s.name for s in secrets),
        downloaded=downloaded,
        rendered=dict(state.rendered),
    )
