from __future__ import annotations

import sys

import click

from ._common import platform_options, target_option
from ._params import POLL_INTERVAL, SECONDS


@click.command("wait")
@target_option
@click.option(
    "--timeout", type=SECONDS, default=3600.0, show_default=True, help="Give up (exit 1) after this many seconds."
)
@click.option(
    "--interval",
    type=POLL_INTERVAL,
    default=None,
    help="Seconds between polls (default 2, or 0.5 on the local platform).",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(
    targets: tuple[str, ...],
    timeout: float,
    interval: float | None,
    fmt: str,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Follow the specs' active runs until every one has ended.

    Progress bars on stderr when it is a terminal, a line per change otherwise,
    none with --format json.
    Exit 0 when all runs ended, 1 on timeout. With --format json, stdout gets
    one document with the specs' runs once they have ended.
    """
    from ..engine.waiting import wait_for_runs
    from ..settings import load_project
    from ._common import run_async
    from .progress import run_progress

    project = load_project()
    observed = run_async(
        wait_for_runs(
            project,
            targets=targets,
            timeout=timeout,
            interval=interval,
            platform=platform,
            workspace=workspace,
            progress=run_progress(sys.stderr, quiet=fmt == "json"),
        )
    )
    if fmt == "json":
        from ..reports.documents import wait_json

        click.echo(wait_json(observed), nl=False)
    else:
        from ..reports.documents import wait_text

        click.echo(wait_text(observed, targets), nl=False)
