from __future__ import annotations

import click

from ._common import platform_options, target_option


@click.command("status")
@target_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(targets: tuple[str, ...], fmt: str, platform: str | None, workspace: str | None) -> None:
    """One row per spec and per unmanaged run on the specs' benchmarks.

    Shows the run, its status and progress, its best pass@1, and whether the
    spec is in sync with the platform. Changes nothing.
    """
    import json
    from dataclasses import asdict

    from ..engine.operations import make_plan, status_rows
    from ..render.status import render_status
    from ..settings import load_project
    from ._common import run_async

    project = load_project()
    result = run_async(make_plan(project, targets=targets, platform=platform, workspace=workspace, unmanaged=True))
    rows = status_rows(result, result.plan.owner)
    if fmt == "json":
        click.echo(json.dumps({"schema_version": 1, "rows": [asdict(r) for r in rows]}, indent=2, sort_keys=True))
    else:
        click.echo(render_status(rows), nl=False)
