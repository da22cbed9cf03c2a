from __future__ import annotations

import click

from ._common import platform_options, target_option
from ._params import SECONDS


@click.command("reconcile")
@click.option(
    "--wait", "wait_", is_flag=True, help="Follow owned runs until they end before downloading and rendering."
)
@click.option(
    "--timeout", type=float, default=3600.0, show_default=True, help="With --wait: give up after this many seconds."
)
@click.option(
    "--commit", "commit_", is_flag=True, help="Commit the changed generated files (leaderboards, charts, state file)."
)
@click.option("--push", is_flag=True, help="Push the commit; a rejected push is retried by rebasing and re-rendering.")
@target_option
@click.option(
    "--prune", is_flag=True, default=None, help="Stop owned runs whose spec was deleted (default: [apply] prune)."
)
@click.option("--allow-empty", is_flag=True, help="Accept a repository with no run specs even though it owns runs.")
@click.option(
    "--lock-timeout",
    type=SECONDS,
    default=60.0,
    show_default=True,
    help="Seconds to wait for another reconciler's lock.",
)
@platform_options
def command(
    wait_: bool,
    timeout: float,
    commit_: bool,
    push: bool,
    targets: tuple[str, ...],
    prune: bool | None,
    allow_empty: bool,
    lock_timeout: float,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Converge, download, render and (optionally) commit: the scheduled job.

    Applies the plan as if --auto-approve (stopping orphans only when
    reconciler.toml sets [apply] prune = true), downloads what each spec's
    [reconcile] download list asks for, renders every leaderboard, and with
    --commit commits exactly the generated files that changed. With --target,
    only those specs (for sharding the job by benchmark). Silent when nothing
    changed; exit 1 when any step failed.
    """

    from ..engine.lock import project_lock
    from ..engine.reconcile import reconcile
    from ..errors import PartialFailure, UsageError
    from ..settings import load_project
    from ._common import run_async

    if push and not commit_:
        raise UsageError("--push needs --commit")
    project = load_project()
    with project_lock(project, timeout=lock_timeout):
        result = run_async(
            reconcile(
                project,
                wait=wait_,
                timeout=timeout,
                targets=targets,
                prune=prune,
                allow_empty=allow_empty,
                platform=platform,
                workspace=workspace,
                log=click.echo,
            )
        )
        if commit_:
            from ..vcs.commit import commit_paths, push_with_retry
            from ..vcs.messages import commit_message

            author = project.settings.commit

            def commit() -> object:
                return commit_paths(
                    project.root,
                    result.generated,
                    commit_message(result),
                    author_name=author.author_name,
                    author_email=author.author_email,
                )

            done = commit()
            for path in getattr(done, "ignored", ()):
                click.echo(f"not committed: {path} is ignored by .gitignore", err=True)
            sha = getattr(done, "sha", None)
            click.echo(f"committed {sha[:10]}: {', '.join(done.paths)}" if sha else "nothing to commit")  # type: ignore[attr-defined]
            if push and sha:

                def rerender() -> object:
                    again = run_async(reconcile(project, targets=targets, platform=platform, workspace=workspace))
                    result.rendered, result.generated = again.rendered, again.generated
                    return commit()

                tries = push_with_retry(project.root, rerender=rerender)  # type: ignore[arg-type]
                click.echo(f"pushed (attempt {tries})")
    if result.failures:
        raise PartialFailure(f"{len(result.failures)} step(s) failed:\n  " + "\n  ".join(result.failures))
