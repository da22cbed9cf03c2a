from __future__ import annotations

import select
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import click

from ._common import lock_timeout_option, platform_options, target_option

if TYPE_CHECKING:
    from ..core.plan import Plan
    from ..engine.operations import PlanResult


@click.command("apply")
@click.argument("plan_file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--auto-approve", is_flag=True, help="Apply without asking (for CI, after the plan was reviewed).")
@click.option("--prune", is_flag=True, help="Stop owned runs whose spec was deleted.")
@click.option("--allow-protected", is_flag=True, help="Allow stopping or replacing runs of protected specs.")
@click.option("--allow-empty", is_flag=True, help="Accept a repository with no run specs even though it owns runs.")
@target_option
@click.option(
    "--replace",
    "replace",
    multiple=True,
    metavar="SPEC_ID",
    help="Submit this spec's current config again on purpose, stopping its active run first (repeatable; paid).",
)
@lock_timeout_option()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(
    plan_file: Path | None,
    auto_approve: bool,
    prune: bool,
    allow_protected: bool,
    allow_empty: bool,
    targets: tuple[str, ...],
    replace: tuple[str, ...],
    lock_timeout: float,
    fmt: str,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Carry out the plan: submit, replace, stop and download runs.

    Plans afresh under a repository lock, shows the plan and asks for `yes`
    unless --auto-approve. With PLAN_FILE (from `reconciler plan --out`),
    applies exactly that plan and refuses it as stale when the specs or the
    platform changed since. A spec's config is never submitted twice: markers
    are looked up again right before each submit, except for the specs named
    with --replace, whose config is submitted again on purpose (the plan says
    "replace requested" and what it costs). Exit 1 when any action fails.
    """
    from ..engine.lock import project_lock
    from ..engine.operations import apply_plan, make_policy, read_plan_file
    from ..errors import CommandExit, ExitCode, PartialFailure, UsageError, blocked_error
    from ..render.plan_text import fresh_local_note, render_text
    from ..reports.apply_report import render_report, render_report_json
    from ..settings import LOCAL_PLATFORM, load_project, resolve_platform
    from ._common import run_async

    project = load_project()
    saved = None
    if plan_file is not None:
        if targets or prune or allow_protected or replace:
            raise UsageError(
                "a saved plan already fixes --target, --prune, --allow-protected and --replace;"
                " re-run `reconciler plan --out` to change them"
            )
        policy, doc = read_plan_file(plan_file)
        # a spending cap lowered since the plan was saved still holds: the plan then comes out
        # different (blocked) and is refused as stale
        cap = project.settings.apply.max_attempts_per_apply
        if cap is not None and (policy.max_attempts_per_apply is None or cap < policy.max_attempts_per_apply):
            policy = policy.model_copy(update={"max_attempts_per_apply": cap})
        saved = (plan_file, doc)
    else:
        policy = make_policy(project, targets, prune, allow_protected)
        if replace:
            from ..engine.replace import with_replace

            policy = with_replace(project, policy, replace)

    interactive = sys.stdin.isatty()
    quiet = fmt == "json"

    def show(result: PlanResult) -> None:
        if not quiet:
            for name in result.adopted:
                click.echo(f"adopted {name}: its submit was interrupted after the platform accepted it")
            click.echo(
                render_text(
                    result.plan, style=click.style if sys.stdout.isatty() else None, show_noop=False, next_step=False
                ),
                nl=False,
            )
            if not result.observed.listed and resolve_platform(project, platform) == LOCAL_PLATFORM:
                click.echo(fresh_local_note(result.plan), nl=False)

    declined: list[bool] = []

    def confirm(plan: Plan) -> bool:
        if auto_approve or saved is not None:
            return True
        if not interactive:
            raise UsageError(
                "no terminal to confirm the plan",
                hint="review `reconciler plan`, then run `reconciler apply --auto-approve` (or apply a saved plan file)",
            )
        answer = _ask("Apply these changes? Only 'yes' is accepted")
        if answer is None:
            click.echo("\nApply cancelled; nothing was changed.")
            raise CommandExit(ExitCode.INTERRUPTED)
        if answer.strip() != "yes":
            click.echo("Apply cancelled; nothing was changed.")
            declined.append(True)
            return False
        return True

    from ..engine.downloads import downloader_for
    from ..engine.rendering import renderer_for
    from ..github.results import submitting_commit

    with project_lock(project, timeout=lock_timeout):
        result = run_async(
            apply_plan(
                project,
                policy=policy,
                saved=saved,
                confirm=confirm,
                allow_empty=allow_empty,
                platform=platform,
                workspace=workspace,
                show=show,
                downloader_factory=downloader_for,
                renderer_factory=renderer_for,
                submitted_by=submitting_commit(),
            )
        )
    if fmt == "json":
        click.echo(render_report_json(result), nl=False)
    elif result.report is not None:
        click.echo(render_report(result.report), nl=False)
    if result.report is not None and result.report.failed:
        raise PartialFailure(f"{len(result.report.failed)} of {len(result.report.results)} actions failed (see above)")
    if result.plan.plan.blocked and not declined:
        raise blocked_error(result.plan.plan.blocked)


def _ask(question: str) -> str | None:
    """The answer typed at the prompt ("" at end of input), or None when the user pressed Ctrl-C.

    The prompt runs inside asyncio.run, whose SIGINT handler only cancels the main task, so a
    handler of our own is installed while the prompt waits. The read polls instead of blocking:
    the kernel may hand SIGINT to any thread of the process, and a Python handler runs only when
    the main thread next executes Python, which a blocking readline would never do.
    """

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        click.echo(f"{question}: ", nl=False)
        while True:
            ready, _, _ = select.select([sys.stdin], [], [], 0.1)
            if ready:
                return sys.stdin.readline().rstrip("\n")
    except KeyboardInterrupt:
        return None
    finally:
        signal.signal(signal.SIGINT, previous)
