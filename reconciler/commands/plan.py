from __future__ import annotations

import sys
from pathlib import Path

import click

from ._common import platform_options, target_option


@click.command("plan")
@target_option
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the plan as JSON for `reconciler apply PLAN.json`.",
)
@click.option(
    "--detailed-exitcode", is_flag=True, help="Exit 0 when nothing changes, 2 when changes are pending, 1 on error."
)
@click.option("--prune", is_flag=True, help="Plan to stop owned runs whose spec was deleted.")
@click.option("--allow-protected", is_flag=True, help="Plan to stop or replace runs of protected specs.")
@click.option("--show-noop", is_flag=True, help="List specs that are already in sync too.")
@platform_options
def command(
    targets: tuple[str, ...],
    fmt: str,
    out: Path | None,
    detailed_exitcode: bool,
    prune: bool,
    allow_protected: bool,
    show_noop: bool,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Show what `apply` would do: submit, replace, stop, download, render.

    Reads every spec, observes the platform (runs on the benchmarks the specs
    use, their ownership markers, secret records), and prints each action with
    its reason. Paid actions show tasks × agents × attempts and an estimated
    cost where the platform has a cost history. Nothing is changed.
    """
    from ..engine.operations import make_plan
    from ..errors import ExitCode
    from ..render.plan_markdown import render_markdown
    from ..render.plan_text import render_json, render_text
    from ..settings import load_project
    from ._common import run_async

    project = load_project()
    result = run_async(
        make_plan(
            project,
            targets=targets,
            prune=prune,
            allow_protected=allow_protected,
            platform=platform,
            workspace=workspace,
        )
    )
    plan = result.plan
    if out is not None:
        from ..engine.operations import write_plan_file

        write_plan_file(out, result)
    if fmt == "json":
        click.echo(render_json(plan), nl=False)
    elif fmt == "markdown":
        click.echo(render_markdown(plan, repo_root=project.root, show_noop=show_noop), nl=False)
    else:
        style = click.style if sys.stdout.isatty() else None
        click.echo(render_text(plan, style=style, show_noop=show_noop or len(plan.actions) <= 20), nl=False)
        if out is not None:
            click.echo(f"Saved the plan to {out}; apply exactly this with `reconciler apply {out}`.")
    if detailed_exitcode and plan.has_changes:
        raise SystemExit(ExitCode.CHANGES_PENDING)
