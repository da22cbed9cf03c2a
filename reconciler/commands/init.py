from __future__ import annotations

import re
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
RECONCILE_WORKFLOW = ".github/workflows/reconcile.yml"


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


def decide(
    rel: str, scaffold: str, existing: str | None, *, force: bool, initialized: bool, sharded: bool
) -> tuple[str, str | None]:
    """What init does with one file: (verb, text to write or None).

    - missing: created; identical: unchanged; --force: overwrote.
    - `.gitignore`: its missing lines are added to the user's own (updated), never replaced.
    - `reconcile.yml` as this version scaffolds the other variant, unedited: switched (so
      `init --sharded` in an initialized project moves to the matrix, and back); as the
      previous version scaffolded either, unedited: updated (or switched) to this version's.
    - any other existing file: kept in a project that has reconciler.toml (init completes it),
      a conflict in a directory that has none (init refuses to half-scaffold someone's files).
    """
    if existing is None:
        return "created", scaffold
    if existing == scaffold:
        return "unchanged", None
    if force:
        return "overwrote", scaffold
    if rel == ".gitignore":
        have = set(existing.splitlines())
        missing = [line for line in scaffold.splitlines() if line not in have]
        if not missing:
            return "unchanged", None
        return "updated", existing + ("" if existing.endswith("\n") or not existing else "\n") + "\n".join(
            missing
        ) + "\n"
    if rel == RECONCILE_WORKFLOW and _other_variant(sharded).fullmatch(existing):
        return "switched", scaffold
    if rel == RECONCILE_WORKFLOW and (earlier := _earlier_variant(existing)) is not None:
        return ("updated" if earlier == sharded else "switched"), scaffold
    return ("kept", None) if initialized else ("conflict", None)


# reconcile.yml as the previous version scaffolded it (sharded or not): the shard jobs read
# `matrix.targets` there, which `reconciler shards` no longer fills, so init replaces it unedited
EARLIER = {False: "scaffold/previous/reconcile.yml", True: "scaffold/previous/reconcile-sharded.yml"}


def _earlier_variant(existing: str) -> bool | None:
    """Whether `existing` is an unedited reconcile.yml of the previous version: True for its
    sharded variant, False for its single job, None for neither."""
    from importlib.resources import files

    for sharded, resource in EARLIER.items():
        template = files("reconciler").joinpath(resource).read_text(encoding="utf-8")
        if _pinned_anywhere(template).fullmatch(existing):
            return sharded
    return None


def _pinned_anywhere(template: str) -> re.Pattern[str]:
    """The template with any pinned version in place of the placeholder."""
    return re.compile(re.escape(template).replace(re.escape(VERSION_PLACEHOLDER), r'[^"\s]+'))


def _other_variant(sharded: bool) -> re.Pattern[str]:
    """reconcile.yml as any version scaffolded the other variant, unedited (only the pinned version may differ)."""
    from importlib.resources import files

    resource = "scaffold/workflows/reconcile.yml"
    template = files("reconciler").joinpath(resource if sharded else SHARDED[resource]).read_text(encoding="utf-8")
    return _pinned_anywhere(template)


def _read(path: Path) -> str | None:
    """The file's text (bytes that are not UTF-8 kept as they are: surrogateescape), or None."""
    from ..errors import ReconcilerError

    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ReconcilerError(f"cannot read {path}: {exc.strerror or exc}; nothing was written") from None


@click.command("init")
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite files that already exist (.gitignore included).")
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

    Never overwrites a file unless --force: in a project that has
    reconciler.toml it adds what is missing and keeps the rest (an unedited
    reconcile.yml is switched to the variant asked for); elsewhere an existing
    file stops it, nothing written. An existing .gitignore gets the missing
    lines added.
    """
    from ..errors import ReconcilerError
    from ..files import write_atomic
    from ..safe_paths import writable_path

    content = scaffold_files(sharded=sharded)
    # every destination is checked before the first write: a symlink anywhere below DIRECTORY stops it all
    targets = {rel: writable_path(directory, rel) for rel in content}
    current = {rel: _read(path) for rel, path in targets.items()}
    initialized = current["reconciler.toml"] is not None
    decided = {
        rel: decide(rel, content[rel], current[rel], force=force, initialized=initialized, sharded=sharded)
        for rel in content
    }
    conflicts = sorted(rel for rel, (verb, _) in decided.items() if verb == "conflict")
    if conflicts:
        listed = "\n  ".join(conflicts)
        raise ReconcilerError(
            f"{len(conflicts)} file(s) already exist in {directory}, nothing was written:\n  {listed}",
            hint="pass --force to overwrite them, or run `reconciler init` in an empty directory",
        )
    written = []
    for rel, (verb, text) in decided.items():
        if text is not None:
            # from DIRECTORY down, never through a folder swapped for a link since the check
            write_atomic(targets[rel], text.encode("utf-8", errors="surrogateescape"), below=directory)
        written.append((rel, verb))
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
    if decided[RECONCILE_WORKFLOW][0] == "kept":
        variant = "the matrix variant (--sharded)" if sharded else "the single-job variant"
        click.echo(
            f"warning: {RECONCILE_WORKFLOW} was edited, so it was kept rather than switched to {variant};"
            " merge the change by hand, or pass --force to replace it",
            err=True,
        )
    click.echo("\nNext:\n" + "\n".join(f"  {s}" for s in steps))
    click.echo(
        "\nFor the real platform: set platform in reconciler.toml, export OSMOSIS_TOKEN, and add it as the"
        " repository secret OSMOSIS_TOKEN on GitHub; pull requests then get a plan comment."
    )
