from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ._common import lock_timeout_option, platform_options, target_option

if TYPE_CHECKING:
    from ..engine.rendering import RenderOutcome


@click.command("render")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 when any leaderboard file would change (for CI).")
@target_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@lock_timeout_option()
@platform_options
def command(
    check: bool, targets: tuple[str, ...], fmt: str, lock_timeout: float, platform: str | None, workspace: str | None
) -> None:
    """Render each benchmark spec's leaderboard (Markdown, and SVG when `chart` is set).

    Writes the whole file, or only between `<!-- reconciler:leaderboard NAME -->`
    and its closing marker when the file has them. Files are rewritten only when
    their content changes; the same standings always give the same bytes. Holds
    the repository's lock, as apply does (not with --check, which writes nothing).
    """
    from ..engine.operations import render_leaderboards
    from ..errors import PartialFailure
    from ..settings import load_project
    from ._common import run_async

    project = load_project()

    def render() -> list[RenderOutcome]:
        return run_async(
            render_leaderboards(project, check=check, targets=targets, platform=platform, workspace=workspace)
        )

    if check:  # writes nothing
        outcomes = render()
    else:  # writes leaderboards and the state file: never beside an apply that writes them too
        from ..engine.lock import project_lock

        with project_lock(project, timeout=lock_timeout):
            outcomes = render()
    errors = [o for o in outcomes if o.error]
    changed = [f for o in outcomes for f in o.changed]
    if fmt == "json":
        from ..reports.documents import render_json

        click.echo(render_json(outcomes, check), nl=False)
    for o in outcomes if fmt == "text" else []:
        if o.error:
            click.echo(f"error: {o.spec_id}: {o.error}", err=True)
        for f in o.files:
            state = ("would change" if check else "updated") if f in o.changed else "unchanged"
            click.echo(f"{f}: {state}")
    if not outcomes and fmt == "text":
        click.echo("no benchmark specs with a [leaderboard] table")
    if errors:
        raise PartialFailure(f"{len(errors)} leaderboard(s) could not be rendered")
    if check and changed:
        raise PartialFailure(
            f"{len(changed)} file(s) are out of date", hint="run `reconciler render` and commit the result"
        )
