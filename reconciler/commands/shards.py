from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._common import lock_timeout_option

if TYPE_CHECKING:
    from ..settings import Project


@click.command("shards")
@click.option(
    "--shards",
    "count",
    type=click.IntRange(min=1, max=256),
    default=None,
    help="Split into this many shards by spec id (default: `shards` in reconciler.toml, else one shard per benchmark).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help='json: the GitHub Actions matrix, {"include": [{"shard", "targets"}]}, on one line; targets holds'
    " the shard's spec ids one a line (an id may hold spaces, never a newline).",
)
@click.option(
    "--github-output",
    is_flag=True,
    help="Also set the step outputs `matrix` (the JSON) and `count` (the number of shards) in GITHUB_OUTPUT.",
)
@click.option(
    "--merge-state",
    "merge",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Instead: fold these state files of shard jobs into this repository's state file (repeatable).",
)
@lock_timeout_option()
def command(count: int | None, fmt: str, github_output: bool, merge: tuple[Path, ...], lock_timeout: float) -> None:
    """List the shards of the scheduled reconcile, for a GitHub Actions matrix.

    Each shard is a set of run spec ids for `reconciler reconcile --target ...`:
    one shard per benchmark, or N by a stable hash of the spec id (a spec keeps
    its shard as others come and go), N from --shards or `shards = N` in
    reconciler.toml, which every run of the workflow reads alike. Reads the specs only; never
    calls the platform. With --merge-state, the last job of the sharded workflow
    folds the state files its matrix jobs left into the checked-out one.
    """
    from ..core.shards import by_benchmark, by_spec_id, matrix_json
    from ..engine.session import load_desired
    from ..settings import load_project

    project = load_project()
    if merge:
        _merge(project, merge, lock_timeout)
        return
    count = count or project.settings.shards
    desired, _ = load_desired(project)
    specs = [(d.spec.id, d.spec.config.experiment.benchmark) for d in desired.runs]
    shards = by_spec_id([s for s, _ in specs], count) if count else by_benchmark(specs)
    if github_output:
        from ..errors import UsageError
        from ..github.actions import set_outputs

        if not set_outputs({"matrix": matrix_json(shards), "count": str(len(shards))}):
            raise UsageError("--github-output needs GITHUB_OUTPUT, which GitHub Actions sets in every step")
    if fmt == "json":
        click.echo(matrix_json(shards))
        return
    if not shards:
        click.echo("no run specs: nothing to shard")
    for shard in shards:
        click.echo(f"{shard.name}: {' '.join(shard.targets)}")


def _merge(project: Project, files: tuple[Path, ...], lock_timeout: float) -> None:
    from ..engine.lock import project_lock
    from ..engine.shard_state import merge_states
    from ..engine.state import load_state, save_state
    from ..errors import ConfigError
    from ..safe_paths import writable_path

    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise ConfigError(
            f"state file(s) not found, nothing was merged: {', '.join(missing)}",
            hint="pass the state files the shard jobs uploaded",
        )
    # the state file as apply writes it: under the repository's lock, never through a symlink
    target = writable_path(project.root, project.settings.state_file)
    with project_lock(project, timeout=lock_timeout):
        merged, changed = merge_states(load_state(target), [load_state(f) for f in sorted(files)])
        save_state(target, merged, below=project.root)
    listed = ", ".join(changed) or "none"
    click.echo(f"merged {len(files)} shard state file(s) into {target.name}; spec records changed: {listed}")
