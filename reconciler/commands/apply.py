from __future__ import annotations

import sys
from pathlib import Path

import click

from ._common import platform_options, target_option
from ._params import SECONDS


@click.command("apply")
@click.argument("plan_file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--auto-approve", is_flag=True, help="Apply without asking (for CI, after the plan was reviewed).")
@click.option("--prune", is_flag=True, help="Stop owned runs whose spec was deleted.")
@click.option("--allow-protected", is_flag=True, help="Allow stopping or replacing runs of protected specs.")
@click.option("--allow-empty", is_flag=True, help="Accept a repository with no run specs even though it owns runs.")
@target_option
@click.option(
    "--lock-timeout",
    type=SECONDS,
    default=0.0,
    show_default=True,
    help="Seconds to wait for another reconciler's lock.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(
    plan_file: Path | None,
    auto_approve: bool,
    prune: bool,
    allow_protected: bool,
    allow_empty: bool,
    targets: tuple[str, ...],
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
    are looked up again right before each submit. Exit 1 when any action fails.
    """
    from ..engine.lock import project_lock
    from ..engine.operations import apply_plan, make_policy, read_plan_file
    from ..errors import PartialFailure, UsageError
    from ..render.apply_report import render_report, render_report_json
    from ..render.plan_text import render_text
    from ..settings import load_project
    from ._common import run_async

    project = load_project()
    saved = None
    if plan_file is not None:
        if targets or prune or allow_protected:
            raise UsageError(
                "a saved plan already fixes --target, --prune and --allow-protected; re-run `reconciler plan --out` to change them"
            )
        policy, doc = read_plan_file(plan_file)
        saved = (plan_file, doc)
    else:
        policy = make_policy(project, targets, prune, allow_protected)

    interactive = sys.stdin.isatty()
    quiet = fmt == "json"

    def show(result: object) -> None:
        if not quiet:
            from ..engine.operations import PlanResult

            assert isinstance(result, PlanResult)
            for name in result.adopted:
                click.echo(f"adopted {name}: its submit was interrupted after the platform accepted it")
            click.echo(
                render_text(
                    result.plan, style=click.style if sys.stdout.isatty() else None, show_noop=False, next_step=False
                ),
                nl=False,
            )

    def confirm(plan: object) -> bool:
        if auto_approve or saved is not None:
            return True
        if not interactive:
            raise UsageError(
                "no terminal to confirm the plan",
                hint="review `reconciler plan`, then run `reconciler apply --auto-approve` (or apply a saved plan file)",
            )
        answer: str = click.prompt("Apply these changes? Only 'yes' is accepted", default="", show_default=False)
        if answer.strip() != "yes":
            click.echo("Apply cancelled; nothing was changed.")
            return False
        return True

    from ..engine.rendering import renderer_for
    from ..outputs.download import downloader_for

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
            )
        )
    if fmt == "json":
        click.echo(render_report_json(result), nl=False)
    elif result.report is not None:
        click.echo(render_report(result.report), nl=False)
    if result.report is not None and result.report.failed:
        raise PartialFailure(f"{len(result.report.failed)} of {len(result.report.results)} actions failed (see above)")
