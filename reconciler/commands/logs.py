from __future__ import annotations

import click

from ._common import platform_options
from ._params import POLL_INTERVAL


@click.command("logs")
@click.argument("ref", metavar="SPEC_ID|RUN")
@click.option("--follow", "-f", is_flag=True, help="Keep printing new entries until the run has ended (Ctrl-C stops).")
@click.option(
    "--limit", type=click.IntRange(min=1), default=50, show_default=True, help="How many of the newest entries to show."
)
@click.option("--cursor", metavar="CURSOR", help="Start further back: the cursor a previous page printed.")
@click.option(
    "--interval",
    type=POLL_INTERVAL,
    default=2.0,
    show_default=True,
    help="Seconds between polls.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(
    ref: str,
    follow: bool,
    limit: int,
    cursor: str | None,
    interval: float,
    fmt: str,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Show a run's lifecycle log: the newest entries, or follow it.

    SPEC_ID means that spec's newest run; anything else is a run name or id.
    Pages with the platform's cursor; a page with older entries ends with the
    `--cursor` to read further back. --follow prints new entries until the run
    is finished, failed or stopped.
    """
    from ..engine.connection import open_client
    from ..engine.logs import follow as follow_logs
    from ..engine.logs import newest
    from ..engine.runs_view import get_run_or_explain, resolve_refs
    from ..errors import UsageError
    from ..render.logs import log_line, render_tail, tail_json
    from ..settings import load_project
    from ._common import run_async

    if follow and (fmt == "json" or cursor):
        raise UsageError("--follow prints text from the newest entries; drop --format json and --cursor")
    project = load_project()

    async def go() -> None:
        (run,) = await resolve_refs(project, [ref], platform=platform, workspace=workspace)
        async with open_client(project, platform_flag=platform, workspace_flag=workspace) as conn:
            detail = await get_run_or_explain(conn.client, run)
            name = detail.benchmark_run.name or detail.benchmark_run.id
            if follow:
                async for entry in follow_logs(conn.client, detail.benchmark_run.id, backlog=limit, interval=interval):
                    click.echo(log_line(entry))
                final = await conn.client.get_run(detail.benchmark_run.id)
                click.echo(f"{name} is {final.benchmark_run.status}", err=True)
                return
            tail = await newest(conn.client, detail.benchmark_run.id, limit, cursor)
            render = tail_json if fmt == "json" else render_tail
            click.echo(render(name, tail.entries, tail.older_cursor), nl=False)

    run_async(go())
