"""Leaderboards back into the repository: fetch, filter, order, render, write what changed."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..core.identity import canonical_json
from ..core.plan import Action, render_digest
from ..core.world import Observed
from ..errors import ReconcilerError
from ..files import write_if_changed
from ..render.leaderboard import order_rows, parse_rows, ranked_k, render_markdown, render_svg
from ..render.markers import MarkerError, replace_block
from ..safe_paths import writable_path
from ..settings import LOCAL_PLATFORM
from ..specs.models import BenchmarkSpec
from .apply import ActionResult
from .board_files import (
    chart_not_ours,
    check_outputs,
    compose,
    content_digest,
    kept,
    read_board_file,
    written_by_us,
)
from .render_inputs import templates_digest
from .session import RepoSession


@dataclass
class RenderOutcome:
    spec_id: str
    files: list[str] = field(default_factory=list)  # every file this spec renders
    changed: list[str] = field(default_factory=list)  # those whose bytes changed (or would, under --check)
    error: str | None = None
    # file -> whether, given its committed text (None: none), the file now differs from it only
    # in what reconciler writes: `reconcile --commit` commits no one else's edit (a WIP paragraph
    # beside a marker block) under its own name
    only_ours: dict[str, Callable[[str | None, str], bool]] = field(default_factory=dict, repr=False, compare=False)


async def render_spec(session: RepoSession, spec: BenchmarkSpec, observed: Observed, *, check: bool) -> RenderOutcome:
    outcome = RenderOutcome(spec.id)
    lb = spec.leaderboard
    if lb is None:
        return outcome
    check_outputs(session, spec)  # before anything is read or written
    root = session.project.root
    detail = await session.client.get_benchmark(spec.benchmark.ref)
    rows = order_rows(parse_rows(detail.leaderboard), lb.rank_by)  # rank the whole board, then filter
    k = ranked_k(rows)
    if lb.scope == "repo":
        claimed = {r.id for r in observed.runs if r.marker and r.marker.owner == session.owner}
        if session.shared_owner:  # the owner may be another repository's too: only our spec ids are ours
            spec_ids = {d.spec.id for d in session.desired.runs}
            claimed = {
                r.id
                for r in observed.runs
                if r.id in claimed and r.marker and (r.marker.spec_id in spec_ids or r.id in session.state.moved)
            }
        # a claim of the state file or this machine's cache alone never puts a run on our board
        ours = await session.ours_now(observed, [r.run.id for r in rows if r.run.id in claimed])
        rows = [r for r in rows if r.run.id in ours]
    b = detail
    name = lb.name or spec.benchmark.ref
    table = render_markdown(
        title=f"{b.name} leaderboard",
        benchmark_key=b.source_ref,
        spec_path=spec.path,
        rows=rows,
        rank_by=lb.rank_by,
        scope=lb.scope,
        repo_root=root,
        k=k,
        local=session.platform == LOCAL_PLATFORM,
    )
    explicit_block = lb.name is not None

    def markdown(existing: str | None) -> str:
        return compose(existing, table, name, lb.output, explicit_block, written_by_us(session, lb.output, existing))

    def markdown_only_ours(committed: str | None, now: str) -> bool:
        if now == table:
            return True  # the whole file is the table
        try:  # a marker block: the committed text with this table in its block is the file now
            return committed is not None and replace_block(committed, name, table, path=lb.output) == now
        except MarkerError:
            return False

    outputs: list[tuple[str, Callable[[str | None], str]]] = [(lb.output, markdown)]
    outcome.only_ours[lb.output] = markdown_only_ours
    if lb.chart:
        chart, svg = lb.chart, render_svg(title=b.name, rows=rows, repo_root=root)

        def drawing(existing: str | None) -> str:
            if not written_by_us(session, chart, existing):
                raise chart_not_ours(chart)
            return svg

        outputs.append((chart, drawing))
        outcome.only_ours[chart] = lambda _committed, now: now == svg
    # every file of the board is composed (and may be refused) before any is written: a chart
    # refused after its Markdown was written would leave the board half updated
    composed = []
    for rel, build in outputs:
        path = writable_path(root, rel)
        existing = read_board_file(path, rel)
        composed.append((rel, path, existing, build(existing)))
    for rel, path, existing, content in composed:
        outcome.files.append(rel)
        if existing != content:
            outcome.changed.append(rel)
            if not check:
                write_if_changed(path, content, below=root)
        if not check:
            session.state.generated[rel] = content_digest(content)
    if not check:
        standings = hashlib.sha256(canonical_json(detail.leaderboard).encode()).hexdigest()[:16]
        session.state.rendered[spec.id] = render_digest(standings, lb, templates_digest(root))
    return outcome


async def render_all(
    session: RepoSession, observed: Observed, *, check: bool = False, targets: frozenset[str] = frozenset()
) -> list[RenderOutcome]:
    outcomes = []
    for spec in sorted(session.desired.benchmarks, key=lambda b: b.id):
        if targets and spec.id not in targets:
            continue
        try:
            outcomes.append(await render_spec(session, spec, observed, check=check))
        except ReconcilerError as exc:
            outcomes.append(RenderOutcome(spec.id, error=exc.render().removeprefix("error: ")))
    return outcomes


def renderer_for(session: RepoSession, observed: Observed) -> Callable[[Action], Awaitable[ActionResult]]:
    """What `apply` runs for a RENDER action: render that benchmark spec's leaderboard files.

    On a fresh local platform the committed leaderboards are kept: rendering an empty world
    would replace a clone's real standings with "No eligible runs yet" although nobody asked
    for it. `reconciler render` still writes what the platform shows.
    """
    specs = {b.id: b for b in session.desired.benchmarks}

    async def render(action: Action) -> ActionResult:
        spec = specs[action.spec_id or ""]
        keeping = kept(session, observed, spec)
        if keeping is not None:
            return ActionResult(
                action=action,
                ok=True,
                message=f"kept {', '.join(keeping)}: the local platform has no runs yet (`reconciler render` rewrites them)",
            )
        try:
            outcome = await render_spec(session, spec, observed, check=False)
        except ReconcilerError as exc:
            return ActionResult(action=action, ok=False, message=exc.message)
        changed = ", ".join(outcome.changed) or "nothing changed"
        return ActionResult(action=action, ok=True, message=f"rendered {changed}")

    return render
