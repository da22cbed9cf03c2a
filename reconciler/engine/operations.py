"""The application's operations, one per command: open a session, observe, plan, act, report."""

from __future__ import annotations

import json
import stat
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import json_text
from ..core.plan import ActionKind, Plan, plan
from ..core.shards import OLD_WORKFLOW_TARGET
from ..core.world import Desired, Observed, ObservedRun, Policy
from ..errors import SpecError, StalePlanError, UsageError
from ..files import read_regular, write_atomic
from ..settings import Project
from .session import RepoSession, open_session

if TYPE_CHECKING:  # apply's and status's modules load when those run: `plan` should not pay for them
    from ..core.status import StatusRow
    from .apply import ApplyReport, Downloader, Renderer
    from .progress import Confirm
    from .rendering import RenderOutcome

PLAN_FILE_VERSION = 1


@dataclass(frozen=True)
class PlanResult:
    plan: Plan
    policy: Policy
    observed: Observed
    adopted: tuple[str, ...]


def make_policy(project: Project, targets: Sequence[str], prune: bool, allow_protected: bool) -> Policy:
    return Policy(
        prune=prune,
        allow_protected=allow_protected,
        max_attempts_per_apply=project.settings.apply.max_attempts_per_apply,
        targets=frozenset(targets),
    )


def check_targets(session: RepoSession, targets: Sequence[str]) -> None:
    if OLD_WORKFLOW_TARGET in targets:
        raise UsageError(
            "this shard job passes `matrix.targets`, which `reconciler shards` no longer fills: the shard's"
            " spec ids are in `matrix.ids`, one a line. Nothing was done",
            hint="run `reconciler init --sharded`, which replaces the previous version's unedited workflow; an edited"
            " one reads them with `mapfile -t` from `matrix.ids`, as `reconciler init --sharded` writes it",
        )
    known = {d.spec.id for d in session.desired.runs} | {b.id for b in session.desired.benchmarks}
    unknown = sorted(set(targets) - known)
    if unknown:
        raise UsageError(
            f"unknown --target {', '.join(unknown)}",
            hint=f"spec ids here: {', '.join(sorted(known)) or 'none'}",
        )


async def _plan_in(session: RepoSession, policy: Policy, *, unmanaged: bool = False) -> PlanResult:
    check_targets(session, sorted(policy.targets))
    observed = await session.observe(unmanaged=unmanaged)
    planned, observed = await guarded_plan(
        session.desired, observed, policy, lambda ids: session.history.newer_runs(session.client, ids)
    )
    return PlanResult(planned, policy, observed, session.adopted)


async def guarded_plan(
    desired: Desired,
    observed: Observed,
    policy: Policy,
    newer_runs: Callable[[set[str]], Awaitable[dict[str, str]]],
) -> tuple[Plan, Observed]:
    """The plan, with every stop of a run newer than this checkout refused (identity.stop_refusal;
    `newer_runs` says which of the runs asked about are: engine/stale_checkout.py), and the
    observed world that says so (`Observed.behind`).

    Only the runs a plan would stop are asked about, so a plan that stops nothing reads no run
    and runs no git. A refused stop frees budget another replace may take: the runs that plan
    would stop are asked about in turn, until no run is to be stopped that was not asked about
    (each round asks only new runs, so it ends)."""
    planned = plan(desired, observed, policy)
    asked: set[str] = set()
    behind: dict[str, str] = {}
    while new := set(stop_targets(planned)) - asked:
        asked |= new
        found = await newer_runs(new)
        if not found:
            break
        behind |= found
        observed = observed.model_copy(update={"behind": dict(behind)})
        planned = plan(desired, observed, policy)
    return planned, observed


def stop_targets(planned: Plan) -> list[str]:
    """The runs the plan would stop: a stop, a replace's old run, a pruned orphan."""
    stopping = (ActionKind.STOP, ActionKind.REPLACE)
    return [
        a.run_id
        for a in planned.actions
        if a.run_id is not None and (a.kind in stopping or (a.kind is ActionKind.ORPHAN and a.will_stop))
    ]


async def make_plan(
    project: Project,
    *,
    targets: Sequence[str] = (),
    prune: bool = False,
    allow_protected: bool = False,
    replace: Sequence[str] = (),
    platform: str | None = None,
    workspace: str | None = None,
    unmanaged: bool = False,
    check_boards: bool = False,
) -> PlanResult:
    """The plan for `project`; `unmanaged` keeps the runs that are not ours in `observed.runs`.
    With `check_boards`, a board the plan renders whose files apply would refuse is raised
    (board_files.check_renders): `plan` says then what `apply` would stop on."""
    policy = make_policy(project, targets, prune, allow_protected)
    if replace:
        from .replace import with_replace

        policy = with_replace(project, policy, replace)
    async with open_session(
        project, platform_flag=platform, workspace_flag=workspace, early_reads=not unmanaged
    ) as session:
        result = await _plan_in(session, policy, unmanaged=unmanaged)
        if check_boards:
            _check_boards(session, result, then="apply would stop here, before acting")
        return result


def _check_boards(session: RepoSession, result: PlanResult, *, then: str) -> None:
    """Raise BoardRefused for the first board the plan renders whose files apply would refuse."""
    from .board_files import check_renders

    renders = [a.spec_id for a in result.plan.actions if a.kind is ActionKind.RENDER and a.spec_id]
    check_renders(session, renders, then=then)


# --- saved plans --------------------------------------------------------------------------------


MAX_PLAN_FILE_BYTES = 256 * 1024 * 1024


def write_plan_file(path: Path, result: PlanResult, project: Project | None = None) -> None:
    """Save the plan at `path`, a place the user chose: never over one of the project's own
    files (reconciler.toml, the state file, a spec or a template), never as a folder, and only
    over a regular file: never over a symlink, a FIFO or a device."""
    if project is not None:
        _refuse_plan_over_project_file(path, project)
    _refuse_plan_over_special_file(path)
    doc = {
        "plan_file_version": PLAN_FILE_VERSION,
        "policy": result.policy.model_dump(mode="json"),
        "plan": result.plan.model_dump(mode="json"),
    }
    text = json.dumps(doc, indent=2, sort_keys=True, default=sorted) + "\n"
    try:
        write_atomic(path, text.encode("utf-8"))
    except OSError as exc:
        raise UsageError(
            f"cannot save the plan to {path}: {exc.strerror or exc}", hint="pass --out a file path you can write"
        ) from None


def _refuse_plan_over_project_file(path: Path, project: Project) -> None:
    if not path.name or path.is_dir():
        raise UsageError(f"--out {path} is a folder; pass a file path such as plan.json")
    clash = project.own_place(path)
    if clash is not None:
        raise UsageError(
            f"--out {path} is one of this project's own files ({clash.rel}), in {clash.what}; reconciler never saves"
            " a plan over it",
            hint="save the plan elsewhere, such as plan.json or a temporary folder",
        )


def _refuse_plan_over_special_file(path: Path) -> None:
    """A plan is saved by renaming a new file over `path`: over a symlink, a FIFO or a device
    (`--out /dev/null` run as root) that would replace the thing itself, not write to it."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return  # nothing there yet (or nothing reachable: the write says why)
    if stat.S_ISLNK(mode):
        raise UsageError(
            f"--out {path} is a symlink; reconciler never saves a plan over one (the link would be replaced)",
            hint="pass --out the file itself, or a new path such as plan.json",
        )
    if not stat.S_ISREG(mode):
        raise UsageError(
            f"--out {path} is not a regular file; reconciler never saves a plan over it",
            hint="pass --out a new path such as plan.json",
        )


def read_plan_file(path: Path) -> tuple[Policy, dict[str, Any]]:
    """The policy and plan `reconciler plan --out` saved; any other file is a usage error naming what is wrong."""
    from pydantic import ValidationError

    def refuse(why: str) -> UsageError:
        return UsageError(
            f"{path} is not a plan saved by `reconciler plan --out`: {why}",
            hint="save one with `reconciler plan --out FILE`",
        )

    try:  # a FIFO or /dev/zero named as the plan must not hang or fill memory
        doc = json_text.loads(read_regular(path, MAX_PLAN_FILE_BYTES).decode("utf-8"))
    except json.JSONDecodeError as exc:
        raise refuse(f"line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except (OSError, ValueError) as exc:
        raise refuse(str(exc)) from None
    if not isinstance(doc, dict):
        raise refuse("not a JSON object")
    if doc.get("plan_file_version") != PLAN_FILE_VERSION:
        raise refuse(f"plan_file_version is {doc.get('plan_file_version')!r}, not {PLAN_FILE_VERSION}")
    try:
        policy = Policy.model_validate(doc.get("policy"))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(["policy", *(str(p) for p in first["loc"])])
        raise refuse(f"{field}: {first['msg']}") from None
    saved = doc.get("plan")
    if not isinstance(saved, dict):
        raise refuse("plan is missing or not an object")
    actions = saved.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
        raise refuse("plan.actions is not a list of objects")
    return policy, saved


def _comparable(actions: Any) -> list[Any]:
    return [{k: v for k, v in a.items() if k != "reason"} for a in actions]


def ensure_fresh(saved: dict[str, Any], current: Plan, path: Path) -> None:
    if saved.get("desired_digest") != current.desired_digest:
        raise StalePlanError(
            f"{path} is stale: the specs changed since it was made", hint="run `reconciler plan --out` again"
        )
    if saved.get("observed_digest") != current.observed_digest or _comparable(saved.get("actions", [])) != _comparable(
        current.model_dump(mode="json")["actions"]
    ):
        raise StalePlanError(
            f"{path} is stale: the platform changed since it was made", hint="run `reconciler plan --out` again"
        )


# --- apply --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ApplyResult:
    plan: PlanResult
    report: ApplyReport | None  # None when there was nothing to do or the user declined


def refuse_sudden_empty(session: RepoSession, observed: Observed, allow_empty: bool) -> None:
    """A spec set that renders empty while we own runs is far likelier a broken checkout than intent."""
    if session.desired.runs or allow_empty:
        return
    owned = [r for r in observed.runs if r.marker and r.marker.owner == session.owner and r.active]
    if owned or session.state.specs:
        raise SpecError(
            f"no run specs found under {session.project.settings.specs_dir}/, but this repository owns"
            f" {len(owned)} active run(s) and its state file records {len(session.state.specs)} spec(s)",
            hint="refusing to treat that as 'delete everything'; if you did remove every spec, pass --allow-empty",
        )


async def apply_plan(
    project: Project,
    *,
    policy: Policy,
    saved: tuple[Path, dict[str, Any]] | None,
    confirm: Confirm,
    allow_empty: bool = False,
    platform: str | None = None,
    workspace: str | None = None,
    show: Callable[[PlanResult], None] | None = None,
    downloader_factory: Callable[[RepoSession], Downloader] | None = None,
    renderer_factory: Callable[[RepoSession, Observed], Renderer] | None = None,
    submitted_by: str | None = None,
) -> ApplyResult:
    """Plan afresh under the lock, check a saved plan still matches, confirm, then execute.

    `show` gets every fresh plan; `confirm` is asked only for a plan with changes. Without the
    factories, download and render actions are skipped with a message saying which command runs them.
    `submitted_by`: the commit recorded with each run this apply submits (see engine.results).
    """
    async with open_session(project, platform_flag=platform, workspace_flag=workspace, early_reads=True) as session:
        result = await _plan_in(session, policy)
        refuse_sudden_empty(session, result.observed, allow_empty)
        if saved is not None:
            ensure_fresh(saved[1], result.plan, saved[0])
        if show is not None:
            show(result)
        if not result.plan.has_changes:
            session.save_state()
            return ApplyResult(result, None)
        if renderer_factory is not None:  # a board sure to be refused stops the apply before a run is submitted
            _check_boards(session, result, then="nothing was applied")
        if not confirm(result.plan):
            return ApplyResult(result, None)
        from .apply import Applier

        applier = Applier(
            session,
            result.observed,
            parallelism=project.settings.apply.parallelism,
            downloader=downloader_factory(session) if downloader_factory else None,
            renderer=renderer_factory(session, result.observed) if renderer_factory else None,
        )
        before = dict(session.state.specs)
        report = await applier.run(result.plan)
        if submitted_by:
            from .results import stamp_submissions

            stamp_submissions(session, before, submitted_by)
            session.save_state()
        return ApplyResult(result, report)


# --- status and wait ----------------------------------------------------------------------------


def status_rows(result: PlanResult, owner: str) -> list[StatusRow]:
    from ..core.status import rows_for

    return rows_for(result.plan, result.observed, owner)


def waiting_on(result: PlanResult) -> list[ObservedRun]:
    """Owned runs of the specs' current configs that are still active."""
    wanted = {a.run_id for a in result.plan.actions if a.kind.value == "wait" and a.run_id}
    return [r for r in result.observed.runs if r.id in wanted and r.active]


async def render_leaderboards(
    project: Project,
    *,
    check: bool = False,
    targets: Sequence[str] = (),
    platform: str | None = None,
    workspace: str | None = None,
) -> list[RenderOutcome]:
    from .rendering import render_all

    async with open_session(project, platform_flag=platform, workspace_flag=workspace) as session:
        check_targets(session, targets)
        observed = await session.observe()
        outcomes = await render_all(session, observed, check=check, targets=frozenset(targets))
        if not check:
            session.save_state()
        return outcomes
