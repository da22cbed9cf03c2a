from __future__ import annotations

import click

from ._common import platform_options


@click.command("benchmarks")
@click.argument("key", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(key: str | None, fmt: str, platform: str | None, workspace: str | None) -> None:
    """List the workspace's benchmarks, or show one by KEY (key, exact name or id).

    The list shows each benchmark's sync state, task count, harness and judge
    requirements and its recommended task set. With KEY: categories with their
    counts, every task with its difficulty, unavailable tasks, the default
    harness and the judge default: what `[tasks]` and `[[agents]]` need.
    """
    from ..engine.catalog import list_benchmarks, show_benchmark
    from ..engine.connection import open_client
    from ..reports.benchmarks import detail_json, list_json, render_detail, render_list
    from ..settings import load_project
    from ._common import run_async

    project = load_project()

    async def go() -> str:
        async with open_client(project, platform_flag=platform, workspace_flag=workspace) as conn:
            client = conn.client
            if key is None:
                found = await list_benchmarks(client)
                return list_json(found) if fmt == "json" else render_list(found)
            view = await show_benchmark(client, key)
            return detail_json(view) if fmt == "json" else render_detail(view)

    click.echo(run_async(go()), nl=False)
