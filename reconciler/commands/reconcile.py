from __future__ import annotations

import sys

import click

from ._common import lock_timeout_option, platform_options, target_option
from ._params import SECONDS


@click.command("reconcile")
@click.option(
    "--wait", "wait_", is_flag=True, help="Follow owned runs until they end before downloading and rendering."
)
@click.option(
    "--timeout", type=SECONDS, default=3600.0, show_default=True, help="With --wait: give up after this many seconds."
)
@click.option(
    "--commit", "commit_", is_flag=True, help="Commit the changed generated files (leaderboards, charts, state file)."
)
@click.option(
    "--push",
    is_flag=True,
    help="Push the commit (and any reconciler commit an earlier push left unsent); a rejected push is retried"
    " by rebasing and re-rendering.",
)
@target_option
@click.option(
    "--prune", is_flag=True, default=None, help="Stop owned runs whose spec was deleted (default: [apply] prune)."
)
@click.option(
    "--replace",
    "replace",
    multiple=True,
    metavar="SPEC_ID",
    help="Submit this spec's current config again on purpose (repeatable; paid).",
)
@click.option("--allow-empty", is_flag=True, help="Accept a repository with no run specs even though it owns runs.")
@lock_timeout_option(60.0)
@click.option(
    "--github-results",
    is_flag=True,
    help="Report each spec's latest run: the job summary, and a results comment and commit status on the"
    " pull request whose merge submitted it (GitHub Actions; needs GITHUB_TOKEN).",
)
@click.option(
    "--render-only",
    is_flag=True,
    help="No submits, stops or downloads: render, report and commit (the last job of the sharded workflow).",
)
@click.option("-v", "--verbose", is_flag=True, help="Also list the generated files that did not change.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(
    wait_: bool,
    timeout: float,
    commit_: bool,
    push: bool,
    targets: tuple[str, ...],
    prune: bool | None,
    replace: tuple[str, ...],
    allow_empty: bool,
    lock_timeout: float,
    github_results: bool,
    render_only: bool,
    fmt: str,
    platform: str | None,
    workspace: str | None,
    verbose: bool,
) -> None:
    """Converge, download, render and (optionally) commit: the scheduled job.

    Applies the plan as if --auto-approve (stopping orphans only when
    reconciler.toml sets [apply] prune = true), downloads what each spec's
    [reconcile] download list asks for, renders every leaderboard, and with
    --commit commits exactly the generated files that changed. With --target,
    only those specs (for sharding the job by benchmark). Silent when nothing
    changed (-v lists unchanged files too); exit 1 when any step failed. With
    --format json, stdout gets one document: the plan, each action's result,
    the leaderboards and the commit.
    """

    from ..engine.lock import project_lock
    from ..engine.reconcile import reconcile
    from ..errors import PartialFailure, UsageError, blocked_error
    from ..github.results import publish_results, results_context_from_env, submitting_commit
    from ..settings import load_project
    from ._common import run_async
    from .progress import run_progress

    if push and not commit_:
        raise UsageError("--push needs --commit")
    results_ctx = results_context_from_env() if github_results else None
    project = load_project()
    author = project.settings.commit
    if commit_:
        from ..vcs.commit import ensure_committable

        ensure_committable(project.root, push=push)

    def refuse_others_now(places: frozenset[str]) -> None:
        # before any run is submitted: refused at push time, the commit crediting them would be lost with a CI runner
        from ..vcs.commit import OwnCommits, ensure_pushable

        ensure_pushable(project.root, OwnCommits(author.author_name, author.author_email, places))

    text = fmt == "text"
    say = click.echo if text else None
    commit_doc: dict[str, object] | None = None
    with project_lock(project, timeout=lock_timeout):
        result = run_async(
            reconcile(
                project,
                wait=wait_,
                timeout=timeout,
                targets=targets,
                prune=prune,
                replace=replace,
                allow_empty=allow_empty,
                platform=platform,
                workspace=workspace,
                log=say,
                results=github_results,
                submitted_by=submitting_commit(),
                render_only=render_only,
                verbose=verbose,
                progress=run_progress(sys.stderr, quiet=not text),
                before_apply=refuse_others_now if push else None,
            )
        )
        if commit_:
            from ..vcs.commit import CommitResult, OwnCommits, commit_paths, committed_text, head_sha, push_with_retry
            from ..vcs.messages import commit_message

            def commit() -> CommitResult:
                paths, held = result.committable(lambda rel: committed_text(project.root, rel), project.root)
                for path in held:
                    click.echo(
                        f"not committed: {path}, whose board has a file with edits besides reconciler's leaderboard;"
                        " commit those edits yourself, and the next reconcile commits the board",
                        err=True,
                    )
                return commit_paths(
                    project.root,
                    paths,
                    commit_message(result, held),
                    author_name=author.author_name,
                    author_email=author.author_email,
                )

            done = commit()
            for path in done.ignored:
                click.echo(f"not committed: {path} is ignored by .gitignore", err=True)
            sha, paths = done.sha, list(done.paths)
            commit_doc = {"sha": sha, "paths": paths, "pushed_attempts": None}
            if text:
                click.echo(f"committed {sha[:10]}: {', '.join(paths)}" if sha else "nothing to commit")
            if push:

                def rerender(since: str, upto: str) -> CommitResult:
                    from ..engine.shard_state import reapply_own_changes

                    # the state file as the other job pushed it, plus what this job's commits
                    # recorded (a conflicting rebase resets to theirs: the runs this job submitted stay ours)
                    reapply_own_changes(project, since, upto)
                    # render only: the commits the rebase brought in are applied by their own job
                    # (with their own commit for the results comment), never silently by this retry
                    again = run_async(
                        reconcile(project, targets=targets, platform=platform, workspace=workspace, render_only=True)
                    )
                    result.rendered, result.generated = again.rendered, again.generated
                    return commit()

                # with nothing new committed, a commit an earlier run could not push is pushed now
                # an earlier run's commit may hold a board this run did not render (its spec since removed)
                own = OwnCommits(author.author_name, author.author_email, result.places)
                tries = push_with_retry(project.root, own=own, rerender=rerender)
                if tries:
                    commit_doc["pushed_attempts"] = tries
                    # what was pushed: a rebased commit, the re-rendered one, or theirs when nothing was left to commit
                    pushed = head_sha(project.root)
                    commit_doc["sha"] = pushed
                    if text:
                        click.echo(f"pushed (attempt {tries}): {pushed[:10]}")
    if results_ctx is not None:
        for line in publish_results(results_ctx, result.results, verbose=verbose):
            if text:
                click.echo(line)
    if not text:
        from ..reports.documents import reconcile_json

        click.echo(reconcile_json(result, commit_doc), nl=False)
    if result.failures:
        raise PartialFailure(f"{len(result.failures)} step(s) failed:\n  " + "\n  ".join(result.failures))
    if result.plan.plan.blocked and not render_only:  # the shard jobs already said so
        raise blocked_error(result.plan.plan.blocked)
