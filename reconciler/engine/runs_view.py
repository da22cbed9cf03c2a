"""Any run of the workspace, scored per agent as the platform's run page does.

Arguments name a spec id (its newest run owned by this repository) or a run name or id.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from ..errors import UsageError
from ..osmosis.client import OsmosisClient
from ..osmosis.errors import NotFound
from ..osmosis.models import PassAtK, RunDetail, RunItem
from ..settings import Project
from ..specs.loader import discover, load_specs
from ..specs.models import RunSpec
from .connection import Connection
from .observe import Ownership, marker_of
from .state import State


class _View(BaseModel):
    model_config = ConfigDict(frozen=True)


class Interval(_View):
    value: float | None
    ci_low: float | None
    ci_high: float | None
    method: str | None


class AgentScore(_View):
    """One agent of a run: rank, pass@1 with its 95% interval, the deepest pass@k, per-task cost/time/tokens."""

    index: int | None
    harness: str | None
    model: str | None
    status: str | None
    rank: int | None
    n_tasks: int | None
    pass_at_1: Interval | None
    deepest_k: int | None
    pass_at_k: Interval | None
    cost_per_task_usd: float | None
    seconds_per_task: float | None
    tokens_per_task: float | None


class RunSummary(_View):
    """One row of `reconciler runs`."""

    id: str
    name: str
    benchmark: str | None
    status: str
    ingested: int
    expected: int
    agents: int | None
    best_pass_at_1: float | None
    created_at: str | None
    owner: str  # "spec <id>", "unmanaged" or "other owner <owner>"
    platform_url: str | None


class RunReport(RunSummary):
    """`reconciler runs RUN`: the run with every agent scored."""

    started_at: str | None
    completed_at: str | None
    duration_seconds: float | None
    passed: int | None
    failed: int | None
    errored: int | None
    cancelled: int | None
    total_cost_usd: float | None
    total_tokens: int | None
    agent_scores: tuple[AgentScore, ...]


def _run_specs(project: Project) -> list[RunSpec]:
    """The run specs that load; a broken spec elsewhere does not stop looking at runs."""
    return load_specs(discover([project.specs_path]), project.root, project.settings.specs_dir).run_specs


def spec_ids(project: Project) -> set[str]:
    return {s.id for s in _run_specs(project)}


async def adopted_by(client: OsmosisClient, project: Project, runs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Run id -> the spec whose `adopt` names it and whose config it matches exactly (core/adopt.py)."""
    from ..core import adopt

    wanted = {s.reconcile.adopt: s for s in _run_specs(project) if s.reconcile.adopt}
    out = {}
    for run_id, name in runs:
        spec = wanted.get(run_id) or wanted.get(name)
        if spec is None:
            continue
        detail = await client.get_run(run_id)
        payload = adopt.comparable_payload(detail.configuration.config)
        mine = adopt.comparable_payload(spec.config.to_payload())
        if marker_of(detail) is None and not adopt.differences(payload, mine):
            out[run_id] = spec.id
    return out


def owner_label(marker_owner: str | None, marker_spec: str | None, owner: str) -> str:
    """Whose a run is, by its marker: another owner's is named by owner alone (this machine may
    remember no more of it than that)."""
    if marker_owner is not None and marker_owner != owner:
        return f"other owner {marker_owner}"
    if marker_owner is None or marker_spec is None:
        return "unmanaged"
    return f"spec {marker_spec}"


def _interval(value: object) -> Interval | None:
    if value is None:
        return None
    from ..osmosis.models import Interval as WireInterval

    assert isinstance(value, WireInterval)
    return Interval(value=value.value, ci_low=value.ci_low, ci_high=value.ci_high, method=value.method)


def _deepest(pass_at_k: Sequence[PassAtK]) -> PassAtK | None:
    with_k = [p for p in pass_at_k if p.k is not None]
    return max(with_k, key=lambda p: p.k or 0) if with_k else None


def _seconds_between(start: str | None, end: str | None) -> float | None:
    from datetime import datetime

    if not start or not end:
        return None
    try:
        return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return None


def agent_scores(detail: RunDetail) -> tuple[AgentScore, ...]:
    metrics = {m.benchmark_run_agent_id: m for m in detail.agent_metrics if m.benchmark_run_agent_id}
    out = []
    for agent in sorted(detail.agents, key=lambda a: a.agent_index or 0):
        metric = metrics.get(agent.id) if agent.id else None
        deepest = _deepest(metric.pass_at_k) if metric else None
        n_tasks = metric.n_tasks if metric else None
        cost = agent.aggregates.reported_cost_usd
        out.append(
            AgentScore(
                index=agent.agent_index,
                harness=agent.harness,
                model=agent.model_label,
                status=agent.status,
                rank=metric.rank if metric else None,
                n_tasks=n_tasks,
                pass_at_1=_interval(metric.pass_at_1) if metric else None,
                deepest_k=deepest.k if deepest else None,
                pass_at_k=_interval(deepest) if deepest else None,
                cost_per_task_usd=cost / n_tasks if cost is not None and n_tasks else None,
                seconds_per_task=agent.aggregates.mean_duration_seconds,
                tokens_per_task=agent.aggregates.tokens_per_task,
            )
        )
    return tuple(out)


def run_report(detail: RunDetail, owner: str, adopted_by_spec: str | None = None) -> RunReport:
    run, totals = detail.benchmark_run, detail.totals
    marker = marker_of(detail)
    tokens = (
        (totals.total_input_tokens or 0) + (totals.total_output_tokens or 0)
        if totals.total_input_tokens is not None or totals.total_output_tokens is not None
        else None
    )
    if adopted_by_spec:
        label = f"spec {adopted_by_spec}"
    else:
        label = owner_label(marker.owner if marker else None, marker.spec_id if marker else None, owner)
    return RunReport(
        **summary(run, label).model_dump(),
        started_at=run.started_at,
        completed_at=run.completed_at,
        duration_seconds=_seconds_between(run.started_at, run.completed_at),
        passed=totals.passed,
        failed=totals.failed,
        errored=totals.errored,
        cancelled=totals.cancelled,
        total_cost_usd=totals.total_cost_usd,
        total_tokens=tokens,
        agent_scores=agent_scores(detail),
    )


async def list_workspace_runs(connection: Connection, project: Project) -> list[RunSummary]:
    """Every run of the workspace, newest first, each with who owns it.

    A run's marker never changes once the run exists, so this machine's cache answers for
    every run it has read before (by `plan` or here) and only the others are read; what they
    tell is kept for the next look. Nothing acts on these answers: they label rows."""
    client, owner = connection.client, connection.owner
    machine = connection.machine_cache()
    # no state file: a look-around command does not need one; the cache's benchmark ids are
    # handed back as they were, since `remember` keeps the ones the state names
    owners = Ownership(client, State(benchmark_ids=dict(machine.benchmarks)), machine, owner)
    items = await client.list_runs()
    await owners.read([i.id for i in items if owners.needs_reading(i.id, trust_cached=True)])
    owners.remember()
    adopted = await adopted_by(client, project, [(i.id, i.name or i.id) for i in items])
    return [
        summary(
            item,
            f"spec {adopted[item.id]}" if item.id in adopted else owner_label(*owners.marker_owner(item.id), owner),
        )
        for item in items
    ]


def summary(item: RunItem, label: str) -> RunSummary:
    """A run's row; `label` names its owner (`owner_label`, or the spec that adopted it)."""
    return RunSummary(
        id=item.id,
        name=item.name or item.id,
        benchmark=item.benchmark_name,
        status=item.status or "pending",
        ingested=item.ingested_results or 0,
        expected=item.expected_results or 0,
        agents=item.agent_count,
        best_pass_at_1=item.best_pass_at_1,
        created_at=item.created_at,
        owner=label,
        platform_url=item.platform_url,
    )


async def get_run_or_explain(client: OsmosisClient, ref: str) -> RunDetail:
    try:
        return await client.get_run(ref)
    except NotFound:
        raise UsageError(
            f"no run or spec named {ref!r} in this workspace",
            hint="`reconciler runs` lists every run; `reconciler status` lists the specs",
        ) from None


async def resolve_refs(
    project: Project, refs: Sequence[str], *, platform: str | None, workspace: str | None
) -> list[str]:
    """Spec ids become the id of their newest owned run; anything else is taken as a run name or id."""
    specs = spec_ids(project)
    if not any(ref in specs for ref in refs):
        return list(refs)
    from .session import open_session

    async with open_session(project, platform_flag=platform, workspace_flag=workspace) as session:
        observed = await session.observe()
    out = []
    for ref in refs:
        if ref not in specs:
            out.append(ref)
            continue
        owned = [
            r
            for r in observed.runs
            if r.marker is not None and r.marker.owner == observed.owner and r.marker.spec_id == ref
        ]
        if not owned:
            raise UsageError(
                f"spec {ref} has no run on the platform yet", hint="`reconciler plan` shows what apply would submit"
            )
        out.append(max(owned, key=lambda r: (r.created_at or "", r.id)).id)
    return out
