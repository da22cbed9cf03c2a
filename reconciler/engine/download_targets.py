"""`reconciler download`: which runs, which types, and one report for all of them.

Targets, in order:
- no argument: every run spec's current run (the newest owned run carrying the spec's
  fingerprint), with the spec's `[reconcile].download` types; a spec with no current run, or
  whose run is still pending or queued, is skipped with a note (not an error);
- an argument that is a spec id: that spec's current run, the same way, except that no run
  or a pending one is an error;
- any other argument: a run name or id, as the platform resolves it.
A spec's run is downloaded only once the platform's marker on it agrees (`RepoSession.ours_now`):
the state file or this machine's cache naming it is not enough.
`--type` replaces the spec's types (and the default summary, results for runs by name).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from ..core.identity import claim_problem
from ..core.world import NO_OUTPUTS_YET
from ..errors import ReconcilerError, UsageError
from ..safe_paths import writable_path
from ..settings import resolve_platform
from ..wiring import connect
from .downloads import DEFAULT_TYPES, DownloadReport, ProgressSink, download_run
from .session import RepoSession, git_identity, open_session

if TYPE_CHECKING:
    from ..core.world import Observed, ObservedRun
    from ..osmosis.client import OsmosisClient
    from ..settings import Project


@dataclass(frozen=True)
class Target:
    label: str  # what the user typed, or the spec id
    run: str | None  # a run name or id; None when there is nothing to download
    types: tuple[str, ...]
    spec_id: str | None = None
    note: str | None = None  # why nothing is downloaded for it
    error: bool = False  # the note is an error (an explicit target that cannot be served)


class Skipped(BaseModel):
    model_config = ConfigDict(frozen=True)

    target: str
    reason: str


class Failed(BaseModel):
    model_config = ConfigDict(frozen=True)

    target: str
    error: str


class BatchReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_version: int = 1
    status: Literal["success", "partial"]
    runs: tuple[DownloadReport, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    errors: tuple[Failed, ...] = ()


def current_run(observed: Observed, spec_id: str, fingerprint: str) -> ObservedRun | None:
    mine = [
        r
        for r in observed.runs
        if r.marker is not None
        and r.marker.owner == observed.owner
        and r.marker.spec_id == spec_id
        and r.marker.fingerprint == fingerprint
    ]
    return max(mine, key=lambda r: (r.created_at or "", r.id), default=None)


async def resolve_targets(session: RepoSession, args: Sequence[str], types: tuple[str, ...] | None) -> list[Target]:
    specs = {d.spec.id: d for d in session.desired.runs}
    if args and not any(a in specs for a in args):
        return [Target(label=a, run=a, types=types or DEFAULT_TYPES) for a in args]
    observed = await session.observe()
    chosen = list(args) if args else sorted(specs)
    current = {
        label: current_run(observed, specs[label].spec.id, specs[label].fingerprint)
        for label in chosen
        if label in specs
    }
    # the state file or this machine's cache may name a run as a spec's: the platform decides
    confirmed = await session.ours_now(observed, [r.id for r in current.values() if r is not None])
    targets = []
    for label in chosen:
        desired = specs.get(label)
        if desired is None:
            targets.append(Target(label=label, run=label, types=types or DEFAULT_TYPES))
            continue
        wanted = types or desired.spec.reconcile.download_types()
        run = current[label]
        explicit = bool(args)
        if not wanted:  # `download = []`: this spec's outputs stay on the platform unless --type asks
            note = "its [reconcile] download list is empty; pass --type to fetch outputs anyway"
            targets.append(Target(label=label, run=None, types=(), spec_id=label, note=note))
            continue
        why = None if run is None else claim_problem(confirmed.get(run.id), run.marker, session.owner)
        if run is not None and why is not None:
            note = f"{run.name} {why}; not downloaded. Run `reconciler plan` again"
            targets.append(Target(label=label, run=None, types=wanted, spec_id=label, note=note, error=True))
        elif run is None:
            note = "no run of its current config yet (see `reconciler plan`)"
            targets.append(Target(label=label, run=None, types=wanted, spec_id=label, note=note, error=explicit))
        elif run.status in NO_OUTPUTS_YET:
            note = f"{run.name} is {run.status}: Outputs are not yet available for pending or queued benchmark runs."
            targets.append(Target(label=label, run=None, types=wanted, spec_id=label, note=note, error=explicit))
        else:
            targets.append(Target(label=label, run=run.id, types=wanted, spec_id=label))
    return targets


async def download_targets(
    client: OsmosisClient,
    outputs_root: Path,
    targets: Sequence[Target],
    *,
    output: Path | None,
    overwrite: bool,
    jobs: int,
    progress: Callable[[], ProgressSink | None] = lambda: None,
    on_report: Callable[[Target, DownloadReport | None, str | None], None] = lambda t, r, e: None,
) -> BatchReport:
    """Download each target in turn (files in parallel within each); one failure never stops the rest."""
    served = [t for t in targets if t.run is not None]
    single = len(served) == 1
    reports: list[DownloadReport] = []
    skipped: list[Skipped] = []
    errors: list[Failed] = []
    for target in targets:
        if target.run is None:
            reason = target.note or "nothing to download"
            if target.error:
                errors.append(Failed(target=target.label, error=reason))
            else:
                skipped.append(Skipped(target=target.label, reason=reason))
            on_report(target, None, reason)
            continue
        try:
            report = await download_run(
                client,
                run=target.run,
                types=target.types,
                output_root=output if output is not None and not single else outputs_root,
                output_dir=output if single else None,
                chosen_root=output is not None,
                overwrite=overwrite,
                jobs=jobs,
                progress=progress(),
            )
        except ReconcilerError as exc:
            errors.append(Failed(target=target.label, error=exc.message))
            on_report(target, None, exc.message)
            continue
        reports.append(report)
        on_report(target, report, None)
    ok = not errors and all(r.status == "success" for r in reports)
    return BatchReport(
        status="success" if ok else "partial", runs=tuple(reports), skipped=tuple(skipped), errors=tuple(errors)
    )


# --- the whole command ------------------------------------------------------------------------


@asynccontextmanager
async def _client_only(project: Project, platform: str | None, workspace: str | None) -> AsyncIterator[OsmosisClient]:
    """A client for a folder with no specs (downloads by run name), scoped like open_session."""
    chosen = workspace or os.environ.get("OSMOSIS_WORKSPACE") or project.settings.workspace
    identity = None if chosen else git_identity(project.root)
    client = connect(
        resolve_platform(project, platform),
        root=project.root,
        token=os.environ.get("OSMOSIS_TOKEN"),
        workspace=chosen,
        git_identity=identity,
    )
    async with client:
        yield client


def refuse_output_in_own_place(project: Project, output: Path) -> None:
    """`--output` inside the repository may not be, lie in or hold the project's own files (the
    rule of `plan --out`, Project.own_place): an artifact named `x.toml` downloaded into specs/
    would become a spec, a file in .git/ could run on the next git command."""
    clash = project.own_place(output)
    if clash is not None:
        raise UsageError(
            f"--output {output} overlaps {clash.what} ({clash.room}); reconciler never downloads into this"
            " project's own files",
            hint=f"pass --output a folder of its own, such as downloads/, or leave it out for {project.settings.outputs_dir}/",
        )


async def download_command(
    project: Project,
    args: Sequence[str],
    types: tuple[str, ...] | None,
    *,
    output: Path | None,
    overwrite: bool,
    jobs: int,
    platform: str | None,
    workspace: str | None,
    progress: Callable[[], ProgressSink | None] = lambda: None,
    on_report: Callable[[Target, DownloadReport | None, str | None], None] = lambda t, r, e: None,
) -> BatchReport:
    """Resolve the targets (with the specs when the repository has a specs folder) and download them."""
    if output is not None:
        refuse_output_in_own_place(project, output)
    outputs_root = writable_path(project.root, project.settings.outputs_dir, directory=True)
    if not project.specs_path.is_dir():
        if not args:
            raise UsageError(
                f"no run specs under {project.settings.specs_dir}/ to take runs from",
                hint="name the runs to download: reconciler download RUN [RUN ...]",
            )
        async with _client_only(project, platform, workspace) as client:
            targets = [Target(label=a, run=a, types=types or DEFAULT_TYPES) for a in args]
            return await download_targets(
                client,
                outputs_root,
                targets,
                output=output,
                overwrite=overwrite,
                jobs=jobs,
                progress=progress,
                on_report=on_report,
            )
    async with open_session(project, platform_flag=platform, workspace_flag=workspace) as session:
        targets = await resolve_targets(session, args, types)
        return await download_targets(
            session.client,
            writable_path(session.project.root, session.project.settings.outputs_dir, directory=True),
            targets,
            output=output,
            overwrite=overwrite,
            jobs=jobs,
            progress=progress,
            on_report=on_report,
        )
