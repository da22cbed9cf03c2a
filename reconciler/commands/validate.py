from __future__ import annotations

from pathlib import Path

import click


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(paths: tuple[Path, ...], fmt: str) -> None:
    """Check specs offline: TOML syntax, schema and every platform rule.

    PATHS are spec files or directories; with none, every spec under the
    configured specs dir (reconciler.toml `specs_dir`, default `specs/`).
    Reports every problem as `path:line:col: key: message` and exits 1 on
    any error; warnings do not fail. Under GitHub Actions it also prints
    annotation lines so problems show on the pull request diff.
    """

    from ..errors import CommandExit, ExitCode
    from ..render.diagnostics import render_json, render_text
    from ..settings import load_project
    from ..specs.loader import discover

    project = load_project()
    targets = list(paths) or [project.existing_specs_path()]
    files = discover(targets)
    result = project.load_specs(files)
    if fmt == "json":
        click.echo(render_json(result))
    else:
        from ..workflow_commands import in_actions

        github = in_actions()
        click.echo(render_text(result, github_annotations=github), nl=False)
    if result.errors:
        raise CommandExit(ExitCode.ERROR)
