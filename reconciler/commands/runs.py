from __future__ import annotations

import click

from ._common import platform_options


@click.command("runs")
@click.argument("refs", nargs=-1, metavar="[SPEC_ID|RUN]...")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(refs: tuple[str, ...], fmt: str, platform: str | None, workspace: str | None) -> None:
    """List every run of the workspace, or score the runs named.

    Without arguments: each run's benchmark, status, progress, best pass@1
    and owner (a spec of this repository, another owner, or unmanaged).
    With SPEC_ID (its newest run) or a run name or id: each agent's rank,
    pass@1 with its 95% interval, deepest pass@k, and cost, time and tokens
    per task, as the platform's run page shows them. Changes nothing.
    """
    import asyncio

    from ..engine.connection import open_client
    from ..engine.runs_view import adopted_by, get_run_or_explain, list_workspace_runs, resolve_refs, run_report
    from ..reports.runs import list_json, render_list, render_report, reports_json
    from ..settings import load_project
    from ._common import run_async

    project = load_project()

    async def go() -> str:
        ids = await resolve_refs(project, refs, platform=platform, workspace=workspace)
        async with open_client(project, platform_flag=platform, workspace_flag=workspace) as conn:
            if not ids:
                rows = await list_workspace_runs(conn, project)
                return list_json(rows) if fmt == "json" else render_list(rows)
            details = await asyncio.gather(*(get_run_or_explain(conn.client, ref) for ref in ids))
            runs = [(d.benchmark_run.id, d.benchmark_run.name or d.benchmark_run.id) for d in details]
            adopted = await adopted_by(conn.client, project, runs)
            reports = [run_report(d, conn.owner, adopted.get(d.benchmark_run.id)) for d in details]
            return reports_json(reports) if fmt == "json" else "\n".join(render_report(r) for r in reports)

    click.echo(run_async(go()), nl=False)
