from __future__ import annotations

import click

from ._common import platform_options


@click.command("import")
@click.argument("run", metavar="RUN")
@click.option("--id", "spec_id", metavar="SPEC_ID", help="The new spec's id (default: from the run's name).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(run: str, spec_id: str | None, fmt: str, platform: str | None, workspace: str | None) -> None:
    """Bring an existing run under a spec without paying for it again.

    Writes specs/runs/SPEC_ID.toml from RUN's own configuration (secret record
    names only, never values) with `[reconcile] adopt = "RUN"`. Review and
    merge it like any spec: `plan` then shows an `import` action, and the run
    is this spec's from then on, even though it carries no ownership marker.
    """
    import json

    from ..engine.connection import open_client
    from ..engine.importing import Imported, import_run
    from ..settings import load_project
    from ._common import run_async

    project = load_project()

    async def go() -> Imported:
        async with open_client(project, platform_flag=platform, workspace_flag=workspace) as conn:
            return await import_run(conn.client, project, run, spec_id, conn.owner)

    done = run_async(go())
    if fmt == "json":
        doc = {"schema_version": 1, "kind": "import", **done.__dict__}
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
        return
    click.echo(f"wrote {done.path}: spec {done.spec_id} adopts {done.run_name} ({done.status})")
    click.echo("Next: `reconciler plan` shows the import; commit the spec and open a pull request.")
