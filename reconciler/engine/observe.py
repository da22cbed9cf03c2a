"""Observed state: what the platform has for the benchmarks the specs use, read in pages.

Cost: one benchmark-detail request per benchmark, one run listing page per 50 runs, one
secrets listing, and one run-detail request per run this machine has never seen (a run's
environment never changes: a marker of ours is then kept in the state file when apply saves
it and in the per-machine cache at once, a run that is not ours in the per-machine cache
only), plus one for each of our runs that finished since the state file was last saved (the
agents it ran, for require_smoke).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.cost import agent_key
from ..core.identity import Marker, canonical_json, read_commit, read_marker
from ..core.world import BenchmarkState, Desired, Observed, ObservedRun, RunAgents, RunStatus
from ..osmosis.client import OsmosisClient
from ..osmosis.errors import NotFound
from ..osmosis.models import BenchmarkDetail, RunDetail, RunItem, RunScan
from ..outputs.layout import downloaded_types
from ..specs.rules import BenchmarkFacts, TaskInfo
from .machine_cache import MachineCache
from .state import State

# run-detail reads in flight: a cold plan of 10,000 runs at 20 ms latency took 21.3 s at 16,
# 13.4 s at 32 (tests/perf/bench_plan.py); the platform answers 429 with Retry-After if it must
DETAIL_CONCURRENCY = 32
LOOKUP_PAGE_LIMIT = 50


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


def _submitted_env(detail: RunDetail) -> dict[str, Any] | None:
    """The `env_config` of a run's submitted configuration, when it has one."""
    config: Any = detail.configuration.config
    env = config.get("env_config") if isinstance(config, dict) else None
    return env if isinstance(env, dict) else None


def commit_of(detail: RunDetail) -> str | None:
    """The commit a run was submitted from (identity.COMMIT_ENV), when it carries one."""
    return read_commit(_submitted_env(detail))


def marker_of(detail: RunDetail) -> Marker | None:
    """The ownership marker in a run's submitted environment (or, failing that, an agent's)."""
    marker = read_marker(_submitted_env(detail))
    if marker is None:
        for agent in detail.agents:
            marker = read_marker(agent.environment_variables)
            if marker is not None:
                break
    return marker


def observed_run(item: RunItem, marker: Marker | None, ran: RunAgents | None = None) -> ObservedRun:
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
        ran=ran,
    )


def agents_of(detail: RunDetail) -> RunAgents | None:
    """The agents a run's own submitted config names, and whether it selected tasks (a smoke run)."""
    config: Any = detail.configuration.config
    if not isinstance(config, dict) or not isinstance(config.get("agents"), list):
        return None
    agents: list[tuple[str | None, str]] = []
    for agent in config["agents"]:
        model = agent.get("model") if isinstance(agent, dict) else None
        if not isinstance(model, dict):
            return None
        if model.get("type") == "hosted":
            name = f"{model.get('base_model')}:{model.get('lora_model_name')}"
        else:
            name = str(model.get("model", ""))
        harness = agent.get("harness")
        agents.append((harness if isinstance(harness, str) else None, name))
    tasks = config.get("tasks_config")
    selection = isinstance(tasks, dict) and any(tasks.get(k) for k in ("task_set", "task_names", "categories"))
    return RunAgents(selection=selection, agents=tuple(agents))


class Ownership:
    """Whose runs are whose, as this process knows it.

    Positive markers (our runs) come from the committed state file, else the per-machine cache;
    runs known not to be ours come from the per-machine cache. Both shape a plan only: before a
    submit every run this process has not read itself is read (`marked_runs`), and a stop reads
    the run's marker again, so a hand-edited state file or cache can never make reconciler pay
    twice or stop another's run.
    `verified` holds the runs whose marker this process read from the platform itself;
    `unconfirmed` the runs whose marker came from the per-machine cache alone, which stay out
    of the committed state file until read (`committed_state`).
    """

    def __init__(
        self,
        client: OsmosisClient,
        state: State,
        machine: MachineCache,
        owner: str,
        *,
        legacy_owner: str | None = None,
    ) -> None:
        self.client = client
        self.state = state
        self.machine = machine
        self.owner = owner
        # the owner name earlier versions wrote for this repository (its workspace): runs marked
        # with it are not ours, but a submit of the same config would pay for it twice
        self.legacy_owner = legacy_owner
        self.verified: set[str] = set()
        self.unconfirmed: set[str] = set()
        self._lookups: dict[str | None, asyncio.Lock] = {}
        # a marker of another owner in the committed file is not a fact about our runs: ask again
        for run_id, marker in list(state.markers.items()):
            if marker.owner != owner:
                del state.markers[run_id]
        # what this machine read before (a plan never writes the state file); the state file wins
        for run_id, ref in machine.ours.items():
            if run_id in state.markers:  # the state file's marker wins: this one need not be read
                continue
            cached = Marker.from_ref(owner, ref)
            if cached is not None:
                state.markers[run_id] = cached
                self.unconfirmed.add(run_id)
        for run_id, raw in machine.agents.items():
            if run_id not in state.run_agents and run_id in state.markers:
                with contextlib.suppress(ValidationError):  # a garbled entry: read the run again
                    state.run_agents[run_id] = RunAgents.model_validate(raw)

    def remember(self) -> None:
        """Keep what this process learned for the next one on this machine (engine/machine_cache.py)."""
        self.machine.ours = {run_id: m.ref for run_id, m in self.state.markers.items() if m.owner == self.owner}
        self.machine.confirmed = (self.machine.confirmed | self.verified) & self.machine.ours.keys()
        self.machine.agents = {
            run_id: ran.model_dump(mode="json")
            for run_id, ran in self.state.run_agents.items()
            if run_id in self.machine.ours
        }
        self.machine.benchmarks = dict(self.state.benchmark_ids)
        self.machine.save()

    def ours(self, run_id: str) -> Marker | None:
        return self.state.markers.get(run_id)

    def claimed_only(self, run_id: str) -> bool:
        """Whether a run is ours only on the word of the state file (or this machine's cache from
        it): never read from the platform by this process, nor by this machine before."""
        return run_id in self.state.markers and run_id not in self.verified and run_id not in self.machine.confirmed

    def marker_owner(self, run_id: str) -> tuple[str | None, str | None]:
        """(owner, spec id) of a run's marker as known here, for a run that needs no reading:
        ours from the markers; another owner's (spec unknown) or none at all from this machine."""
        mine = self.state.markers.get(run_id)
        if mine is not None:
            return mine.owner, mine.spec_id
        return self.machine.foreign.get(run_id), None

    def committed_state(self) -> State:
        """The state to commit: what the state file said and what this process read, never a
        claim that only this machine's cache made."""
        if not self.unconfirmed:
            return self.state
        return self.state.model_copy(
            update={
                "markers": {k: v for k, v in self.state.markers.items() if k not in self.unconfirmed},
                "run_agents": {k: v for k, v in self.state.run_agents.items() if k not in self.unconfirmed},
            }
        )

    def needs_reading(self, run_id: str, *, trust_cached: bool) -> bool:
        """Whether to read a run's marker: for a plan (`trust_cached`), when neither the state
        file nor this machine's cache knows the run; before a submit, unless this process read it."""
        if run_id in self.verified:
            return False
        if not trust_cached:
            return True
        return not (run_id in self.state.markers or run_id in self.machine.not_ours)

    async def read(self, run_ids: Iterable[str]) -> None:
        """Read each run's detail from the platform, concurrently within a bound: its marker,
        and for our finished runs the agents they ran."""
        gate = asyncio.Semaphore(DETAIL_CONCURRENCY)

        async def one(run_id: str) -> None:
            async with gate:
                try:
                    detail = await self.client.get_run(run_id)
                except NotFound:
                    return
            self.learn(run_id, detail)

        await asyncio.gather(*(one(r) for r in dict.fromkeys(run_ids)))

    def learn(self, run_id: str, detail: RunDetail) -> None:
        """What a run's detail, just read from the platform, says of its owner: it replaces any
        claim of the state file or this machine's cache."""
        self.verified.add(run_id)
        self.unconfirmed.discard(run_id)
        marker = marker_of(detail)
        if marker is None or marker.owner != self.owner:
            self.machine.not_ours.add(run_id)
            if marker is None:
                self.machine.foreign.pop(run_id, None)
            else:
                self.machine.foreign[run_id] = marker.owner
            self.state.markers.pop(run_id, None)
            if marker is not None and marker.owner == self.legacy_owner:
                self.machine.legacy[run_id] = marker.ref
            return
        self.machine.not_ours.discard(run_id)
        self.machine.foreign.pop(run_id, None)
        self.state.markers[run_id] = marker
        if detail.benchmark_run.status == RunStatus.FINISHED and run_id not in self.state.run_agents:
            ran = agents_of(detail)
            if ran is not None:
                self.state.run_agents[run_id] = ran

    async def confirmed(self, run_ids: Iterable[str]) -> dict[str, Marker]:
        """run id -> our marker, for each of `run_ids` whose marker this process read from the
        platform (any not read yet is read now). What a download or a repository's leaderboard
        acts on: a claim of the state file or of this machine's cache alone only shapes a plan."""
        wanted = list(dict.fromkeys(run_ids))
        await self.read(r for r in wanted if r not in self.verified)
        return {r: m for r in wanted if r in self.verified and (m := self.state.markers.get(r)) is not None}

    async def marked_runs(self, benchmark_id: str | None, marker: Marker) -> list[RunItem]:
        """Every run on the benchmark carrying exactly `marker`, newest first, asked of the platform:
        any run not positively known as ours is read again, whatever the per-machine cache says."""
        # one look-up per benchmark at a time: the next one finds the runs already read
        async with self._lookups.setdefault(benchmark_id, asyncio.Lock()):
            return await self._marked_runs(benchmark_id, marker)

    async def _marked_runs(self, benchmark_id: str | None, marker: Marker) -> list[RunItem]:
        items: dict[str, RunItem] = {}
        offset: int | None = 0
        while offset is not None:
            page = await self.client.list_runs_page(offset=offset, limit=LOOKUP_PAGE_LIMIT, benchmark_id=benchmark_id)
            for item in page.items:
                items.setdefault(item.id, item)
            if not page.items:
                break
            offset = page.next_offset
        await self.read(r for r in items if self.needs_reading(r, trust_cached=False))
        return [item for item in items.values() if self.ours(item.id) == marker]


async def benchmark_detail(client: OsmosisClient, ref: str) -> BenchmarkDetail | None:
    """A benchmark by the ref a spec uses; None when the platform has no such benchmark."""
    try:
        return await client.get_benchmark(ref)
    except NotFound:
        return None


class RunFilter:
    """Which listed runs become models. A run that is not ours is counted, not modelled (a plan
    never acts on it), unless a spec's `adopt` names it or the caller lists unmanaged runs; a run
    whose owner this machine does not know yet is kept until its marker has been read."""

    def __init__(self, ownership: Ownership, adopt_refs: frozenset[str] = frozenset(), *, unmanaged: bool = False):
        state = ownership.state
        self._ownership = ownership
        self._markers = state.markers  # the live map: markers read later count at once
        self._recorded = {r.run_id for r in state.specs.values()} | set(state.adopted)
        self._adopt_refs = adopt_refs
        self._unmanaged = unmanaged

    def relevant(self, run_id: str, name: object) -> bool:
        """Ours, recorded in the state file, or named by a spec's `adopt`."""
        return (
            run_id in self._markers
            or run_id in self._recorded
            or run_id in self._adopt_refs
            or name in self._adopt_refs
        )

    def keep(self, raw: Mapping[str, Any]) -> bool:
        run_id = raw["id"]
        return (
            self._unmanaged
            or self.relevant(run_id, raw.get("name"))
            or self._ownership.needs_reading(run_id, trust_cached=True)
        )


class EarlyReads:
    """Reads a plan will make that need no spec, started while the spec files load.

    From the state file (or this machine's cache) alone: each benchmark it knows by ref, the run
    listing of each benchmark id it names (filtered as `RunFilter` filters when no spec adopts a
    run) and the secret names.
    `observe` awaits the ones that match what the specs ask for and reads the rest itself;
    `close` cancels what nobody awaited. Nothing here writes: a read that was not needed costs
    requests, never a change.
    """

    def __init__(self, ownership: Ownership) -> None:
        client, state = ownership.client, ownership.state
        keep = RunFilter(ownership).keep
        known = {**ownership.machine.benchmarks, **state.benchmark_ids}  # the state file wins
        ids = set(known.values()) | {r.benchmark_id for r in state.specs.values() if r.benchmark_id}
        self.benchmarks = {ref: asyncio.ensure_future(benchmark_detail(client, ref)) for ref in sorted(known)}
        self.scans = {bid: asyncio.ensure_future(client.scan_runs(benchmark_id=bid, keep=keep)) for bid in sorted(ids)}
        self.secrets = asyncio.ensure_future(client.list_secrets(scope="all"))

    async def close(self) -> None:
        pending: list[asyncio.Future[Any]] = [*self.benchmarks.values(), *self.scans.values(), self.secrets]
        for future in pending:
            future.cancel()
        # retrieve every outcome, so an unawaited failure is never reported as "never retrieved"
        await asyncio.gather(*pending, return_exceptions=True)
        # and let the listings go: the session lives on through the plan, and a listing of
        # 10,000 runs held here for nothing is 2.5 MiB at the peak of that plan
        self.benchmarks.clear()
        self.scans.clear()


async def observe(
    ownership: Ownership,
    desired: Desired,
    *,
    outputs_root: Path,
    unmanaged: bool = False,
    early: EarlyReads | None = None,
) -> Observed:
    """Read the platform for every benchmark the specs (or the state file's owned runs) touch.

    `unmanaged`: keep every listed run in `Observed.runs`; by default runs that are not ours are
    only counted (`Observed.others`), which is what a plan needs of them. `early`: the reads
    started before the specs were loaded; those that match are used instead of reading again."""
    client, state, owner = ownership.client, ownership.state, ownership.owner
    refs = sorted(
        {d.spec.config.experiment.benchmark for d in desired.runs} | {b.benchmark.ref for b in desired.benchmarks}
    )

    async def detail(ref: str) -> tuple[str, BenchmarkDetail | None]:
        found = early.benchmarks.get(ref) if early is not None else None
        return ref, await found if found is not None else await benchmark_detail(client, ref)

    details = await asyncio.gather(*(detail(r) for r in refs))
    benchmarks = {ref: benchmark_state(ref, d) for ref, d in details if d is not None}
    for ref, b in benchmarks.items():
        state.benchmark_ids[ref] = b.id
    # owned runs of deleted specs still live on their benchmark: list it too, so orphans show
    benchmark_ids = sorted(
        {b.id for b in benchmarks.values()} | {r.benchmark_id for r in state.specs.values() if r.benchmark_id}
    )

    adopt_refs = frozenset(d.spec.reconcile.adopt for d in desired.runs if d.spec.reconcile.adopt)
    runs_filter = RunFilter(ownership, adopt_refs, unmanaged=unmanaged)
    # listings read early were filtered without the specs: good only when the specs change nothing
    early_scans = early.scans if early is not None and not adopt_refs and not unmanaged else {}

    async def listing(bid: str) -> RunScan:
        found = early_scans.get(bid)
        return await found if found is not None else await client.scan_runs(benchmark_id=bid, keep=runs_filter.keep)

    scans, secrets = await asyncio.gather(
        asyncio.gather(*(listing(bid) for bid in benchmark_ids)),
        early.secrets if early is not None else client.list_secrets(scope="all"),
    )
    items: dict[str, RunItem] = {}
    for scan in scans:
        for item in scan.items:
            items.setdefault(item.id, item)
    # the ids of runs that are not ours, counted where they lie: a union of the listings would
    # copy up to every run of the workspace (one listing, the usual case, is its own union)
    others = scans[0].others if len(scans) == 1 else set().union(*(scan.others for scan in scans)) - items.keys()
    unknown = [r for r in items if ownership.needs_reading(r, trust_cached=True)]
    # a live run the state file alone calls ours decides a wait: an entry edited in for another's
    # run would otherwise hold the spec's submit back forever (read once per machine; a finished
    # run is read for its agents below, or trusted: every download and report confirms it first)
    unknown += [r for r, item in items.items() if item.is_active and ownership.claimed_only(r)]
    agents_missing = [
        r
        for r, item in items.items()
        if r in state.markers and item.status == RunStatus.FINISHED and r not in state.run_agents
    ]
    await ownership.read([*unknown, *agents_missing])
    ownership.remember()
    runs = tuple(
        observed_run(item, state.markers.get(item.id), state.run_agents.get(item.id))
        for item in items.values()
        if unmanaged or runs_filter.relevant(item.id, item.name)
    )

    downloaded = downloaded_types(
        outputs_root,
        ((r.name, r.id) for r in runs if r.marker is not None and r.marker.owner == owner and r.terminal),
    )
    return Observed(
        owner=owner,
        runs=runs,
        others=len(others) + len(items) - len(runs),
        benchmarks=benchmarks,
        secrets=frozenset(s.name for s in secrets),
        downloaded=downloaded,
        rendered=dict(state.rendered),
        moved=dict(state.moved),
        legacy_owner=ownership.legacy_owner,
        legacy=frozenset(
            tuple(ownership.machine.legacy[r].rpartition("@")[::2])
            for r in itertools.chain(others, items)
            if r in ownership.machine.legacy
        )
        if ownership.legacy_owner
        else frozenset(),
    )
