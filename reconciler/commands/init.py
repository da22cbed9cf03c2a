from __future__ import annotations

from pathlib import Path

import click

# (packaged resource, destination). Resources under reconciler/scaffold/ have no leading dots,
# so package-data globs pick them up; templates are the packaged defaults of reconciler/render.
SCAFFOLD: tuple[tuple[str, str], ...] = (
    ("scaffold/reconciler.toml", "reconciler.toml"),
    ("scaffold/specs/benchmarks/terminal-bench-2-1.toml", "specs/benchmarks/terminal-bench-2-1.toml"),
    ("scaffold/specs/runs/tb-smoke.toml", "specs/runs/tb-smoke.toml"),
    ("render/templates/leaderboard.md.j2", "templates/leaderboard.md.j2"),
    ("render/templates/leaderboard.svg.j2", "templates/leaderboard.svg.j2"),
    ("render/templates/plan.md.j2", "templates/plan.md.j2"),
    ("scaffold/workflows/ci.yml", ".github/workflows/ci.yml"),
    ("scaffold/workflows/plan.yml", ".github/workflows/plan.yml"),
    ("scaffold/workflows/reconcile.yml", ".github/workflows/reconcile.yml"),
    ("scaffold/actions/reconcile/action.yml", ".github/actions/reconcile/action.yml"),
    ("scaffold/gitignore", ".gitignore"),
)
VERSION_PLACEHOLDER = "@RECONCILER_VERSION@"
# --sharded: the matrix variant takes the place of the single reconcile job
SHARDED = {"scaffold/workflows/reconcile.yml": "scaffold/workflows/reconcile-sharded.yml"}


def scaffold_files(*, sharded: bool = False) -> dict[str, str]:
    """Destination path -> content, with the workflows pinned to this version of reconciler."""
    from importlib.resources import files

    from .. import __version__

    package = files("reconciler")
    out = {}
    for resource, destination in SCAFFOLD:
        if sharded:
            resource = SHARDED.get(resource, resource)
        text = package.joinpath(resource).read_text(encoding="utf-8")
        out[destination] = text.replace(VERSION_PLACEHOLDER, __version__)
    return out


@click.command("init")
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--sharded",
    is_flag=True,
    help="Scaffold the reconcile workflow as a GitHub Actions matrix: one job per shard, one commit at the end.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def command(directory: Path, force: bool, sharded: bool, fmt: str) -> None:
    """Scaffold a GitOps repository for benchmark runs in DIRECTORY (default: here).

    Writes reconciler.toml (platform = "local": works with no account), a
    benchmark spec and a one-task smoke run spec, the default templates, the
    GitHub workflows (ci, plan on pull requests, reconcile on merge and every
    30 minutes) with a composite action, and a .gitignore for .osmosis/.
    With --sharded, reconcile.yml is the matrix variant: a job lists the
    shards, one job per shard reconciles it, and a last job commits once.
    Refuses to overwrite an existing file unless --force.
    """
    from ..errors import ReconcilerError
    from ..safe_paths import writable_path

    content = scaffold_files(sharded=sharded)
    # every destination is checked before the first write: a symlink anywhere below DIRECTORY stops it all
    targets = {rel: writable_path(directory, rel) for rel in content}
    existing = sorted(p for p in content if targets[p].exists())
    if existing and not force:
        listed = "\n  ".join(existing)
        raise ReconcilerError(
            f"{len(existing)} file(s) already exist in {directory}, nothing was written:\n  {listed}",
            hint="pass --force to overwrite them, or run `reconciler init` in an empty directory",
        )
    written = []
    for rel, text in content.items():
        path = targets[rel]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append((rel, "overwrote" if rel in existing else "created"))
    here = Path.cwd().resolve() == directory.resolve()
    steps = [] if here else [f"cd {directory}"]
    if not any((d / ".git").exists() for d in (directory.resolve(), *directory.resolve().parents)):
        steps.append("git init -b main && git add -A && git commit -m 'reconciler init'")
    steps += [
        "reconciler validate        # check the specs offline",
        "reconciler plan            # what apply would do, against the local platform",
        "reconciler apply           # submit the smoke run (simulated locally)",
        "reconciler reconcile       # converge, download results, render the leaderboards",
    ]
    if fmt == "json":
        from ..reports.documents import init_json

        click.echo(init_json(str(directory), written, [s.split("  #")[0].strip() for s in steps]), nl=False)
        return
    for rel, verb in written:
        click.echo(f"{verb} {rel}")
    click.echo("\nNext:\n" + "\n".join(f"  {s}" for s in steps))
    click.echo(
        "\nFor the real platform: set platform in reconciler.toml, export OSMOSIS_TOKEN, and add it as the"
        " repository secret OSMOSIS_TOKEN on GitHub; pull requests then get a plan comment."
    )
