"""`reconciler reconcile`: the scheduled job in one call.

apply within policy (as if --auto-approve; --prune only when reconciler.toml allows it) ->
optionally wait for owned runs -> download what each spec asks for -> render leaderboards ->
save the state file. Committing and pushing are the command's last steps (vcs). With
render_only (the last job of the sharded workflow) only render, report and save.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..core.plan import ActionKind
from ..core.run_results import RunReport
from ..settings import LOCAL_PLATFORM, Project
from .apply import Applier, ApplyReport
from .board_files import check_renders, generated_places
from .operations import PlanResult, _plan_in, make_policy, refuse_sudden_empty
from .progress import RunProgress
from .rendering import RenderOutcome, render_all
from .replace import with_replace
from .results import collect_results, stamp_submissions
from .session import open_session
from .waiting import wait_in


@dataclass
class ReconcileResult:
    plan: PlanResult
    applied: ApplyReport | None
    downloads: ApplyReport | None
    rendered: list[RenderOutcome] = field(default_factory=list)
    state_file: str = ""
    generated: list[str] = field(default_factory=list)  # every generated file, changed or not
    results: list[RunReport] = field(default_factory=list)  # with results=True: each spec's latest run
    # every file a commit of reconciler's may touch, not only this run's (board_files.generated_places)
    places: frozenset[str] = frozenset()

    def committable(self, committed: Callable[[str], str | None], root: Path) -> tuple[list[str], list[str]]:
        """(files `--commit` may commit, board files it holds back): a board file whose change
        from its committed text (`committed(rel)`) is not only reconciler's is held back."""
        held: set[str] = set()
        for o in self.rendered:
            for rel, check in o.only_ours.items():
                try:
                    now = (root / rel).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                before = committed(rel)
                # read_text reads CRLF as LF, as the renderer does; git show keeps what is stored
                before = before.replace("\r\n", "\n") if before is not None else None
                if not check(before, now):
                    held.update(o.files)  # the whole board: never a new chart beside an old table
        return [rel for rel in self.generated if rel not in held], sorted(held)

    @property
    def failures(self) -> list[str]:
        out = []
        for report in (self.applied, self.downloads):
            if report is not None:
                out += [
                    f"{r.action.kind.value} {r.action.spec_id or r.action.run_name}: {r.message}" for r in report.failed
                ]
        out += [f"render {o.spec_id}: {o.error}" for o in self.rendered if o.error]
        return out


async def reconcile(
    project: Project,
    *,
    wait: bool = False,
    targets: Sequence[str] = (),
    prune: bool | None = None,
    replace: Sequence[str] = (),
    timeout: float = 3600.0,
    allow_empty: bool = False,
    platform: str | None = None,
    workspace: str | None = None,
    log: Callable[[str], None] | None = None,
    results: bool = False,
    submitted_by: str | None = None,
    render_only: bool = False,
    verbose: bool = False,
    progress: RunProgress | None = None,
    before_apply: Callable[[frozenset[str]], None] | None = None,
) -> ReconcileResult:
    """One pass of the scheduled job; `log` hears every change (and, when verbose, every unchanged file).
    `before_apply` hears the project's generated places (board_files.generated_places) before
    anything is planned or applied, and may raise to stop the pass there."""
    from .downloads import downloader_for

    say: Callable[[str], None] = log if log is not None else (lambda _msg: None)
    prune = project.settings.apply.prune if prune is None else prune
    policy = make_policy(project, targets, prune, False)
    async with open_session(project, platform_flag=platform, workspace_flag=workspace, early_reads=True) as session:
        if before_apply is not None:
            before_apply(generated_places(session))
        # --replace asks for one new submit: the plan after applying must not ask again
        first = await _plan_in(session, with_replace(project, policy, replace) if replace else policy)
        refuse_sudden_empty(session, first.observed, allow_empty)
        before = dict(session.state.specs)
        for name in first.adopted:
            say(f"adopted {name}: its submit was interrupted after the platform accepted it")
        for action in first.plan.actions:
            if action.kind is ActionKind.BLOCKED:  # left as it is, and never silently
                say(f"blocked  {action.spec_id or action.run_name}: {action.reason}")
        applied = None
        # leaderboards render once, at the end, after the downloads
        converge = first.plan.model_copy(
            update={"actions": tuple(a for a in first.plan.actions if a.kind is not ActionKind.RENDER)}
        )
        if not render_only and converge.has_changes:
            # every board renders at the end: one sure to be refused stops the pass before it submits
            check_renders(session, [b.id for b in session.desired.benchmarks])
            applied = await Applier(
                session,
                first.observed,
                parallelism=project.settings.apply.parallelism,
                downloader=downloader_for(session),
            ).run(converge)
            for r in applied.results:
                say(
                    f"{'ok  ' if r.ok else 'FAIL'} {r.action.kind.value:<8} {r.action.spec_id or r.action.run_name}: {r.message}"
                )
        if wait:
            interval = 0.5 if session.platform == LOCAL_PLATFORM else 5.0
            await wait_in(session, targets, timeout, interval, progress)
        second = await _plan_in(session, policy)
        downloads = None
        fetch = second.plan.model_copy(
            update={"actions": tuple(a for a in second.plan.actions if a.kind is ActionKind.DOWNLOAD)}
        )
        if not render_only and fetch.actions:
            downloads = await Applier(session, second.observed, downloader=downloader_for(session)).run(fetch)
            for r in downloads.results:
                say(f"{'ok  ' if r.ok else 'FAIL'} download {r.action.spec_id}: {r.message}")
        rendered = await render_all(session, second.observed)  # leaderboards show the platform: always all of them
        for o in rendered:
            for f in (f for f in o.files if verbose or f in o.changed):
                say(f"{'updated  ' if f in o.changed else 'unchanged'} {f}")
        # a job no merge started (schedule, dispatch) that reports results credits the merges
        stamp_submissions(session, before, submitted_by, credit_changes=results, replaced=frozenset(replace))
        reports = await collect_results(session, second.observed, targets) if results else []
        session.save_state()
        generated = sorted({f for o in rendered for f in o.files} | {project.settings.state_file})
        return ReconcileResult(
            first, applied, downloads, rendered, project.settings.state_file, generated, reports,
            places=generated_places(session) | set(generated),
        )  # fmt: skip
