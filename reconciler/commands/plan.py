from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import EXIT_CODES_HELP
from ._common import platform_options, target_option

if TYPE_CHECKING:
    from ..core.plan import Plan
    from ..errors import ExitCode
    from ..github.event import GitHubContext
    from ..settings import Project
    from ..vcs.review import Review


@click.command("plan", epilog=EXIT_CODES_HELP)
@target_option
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save the plan as JSON for `reconciler apply PLAN.json`.",
)
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 0 when nothing changes, 2 when changes are pending, 3 when any action is blocked, 1 on error.",
)
@click.option("--prune", is_flag=True, help="Plan to stop owned runs whose spec was deleted.")
@click.option("--allow-protected", is_flag=True, help="Plan to stop or replace runs of protected specs.")
@click.option(
    "--replace",
    "replace",
    multiple=True,
    metavar="SPEC_ID",
    help="Plan to submit this spec's current config again on purpose (repeatable; paid), as `apply --replace` does.",
)
@click.option("--show-noop", is_flag=True, help="List specs that are already in sync too.")
@click.option(
    "--base",
    "base_ref",
    metavar="REF",
    help="Review the spec changes since the merge base with REF (e.g. origin/main): a field diff per changed spec."
    " Default with --github-comment: the pull request's base branch.",
)
@click.option(
    "--github-comment",
    is_flag=True,
    help="In GitHub Actions: post or update the one plan comment on the pull request, write the full plan"
    " to the job summary and set step outputs (has_changes, paid_attempts, estimated_cost, exitcode).",
)
@click.option(
    "--github-output",
    is_flag=True,
    help="In GitHub Actions: set the step outputs (has_changes, paid_attempts, estimated_cost, exitcode)"
    " without a comment, for push, schedule and dispatch runs (--github-comment sets them too).",
)
@platform_options
def command(
    targets: tuple[str, ...],
    fmt: str,
    out: Path | None,
    detailed_exitcode: bool,
    prune: bool,
    allow_protected: bool,
    replace: tuple[str, ...],
    show_noop: bool,
    base_ref: str | None,
    github_comment: bool,
    github_output: bool,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Show what `apply` would do: submit, replace, stop, download, render.

    Reads every spec, observes the platform (runs on the benchmarks the specs
    use, their ownership markers, secret records), and prints each action with
    its reason. Paid actions show tasks × agents × attempts and an estimated
    cost where the platform has a cost history. Nothing is changed.

    With --base REF, each spec added, edited, deleted or renamed since the
    merge base with REF is shown with its field-level diff next to its
    planned action. With --github-comment (in a pull_request workflow; needs
    GITHUB_REPOSITORY, GITHUB_EVENT_PATH and GITHUB_TOKEN), the plan goes to
    one sticky pull-request comment, cut to fit with a pointer to the full
    plan in the job summary; invalid specs become annotations and the comment
    says validation failed.
    """
    from ..engine.operations import make_plan
    from ..errors import ExitCode, ReconcilerError
    from ..render.plan_text import fresh_local_note, plan_document, render_text, write_json
    from ..settings import LOCAL_PLATFORM, load_project, resolve_platform
    from ..workflow_commands import in_actions
    from ._common import run_async

    project = load_project()
    if github_output and not github_comment and not os.environ.get("GITHUB_OUTPUT", "").strip():
        from ..errors import UsageError

        # before any work, as --github-comment names what it misses
        raise UsageError("--github-output needs GITHUB_OUTPUT, which GitHub Actions sets in every step")
    github = None
    if github_comment:
        from ..github.event import context_from_env

        github = context_from_env()  # fails now, naming the missing variable, before any work
    if github is not None or in_actions():
        _validate_or_exit(project, github)
    if github is not None and _fork_without_token(project, github, platform):
        return
    if base_ref is not None:
        review = _review(project, base_ref, explicit=True)
    else:
        review = _pull_request_review(project, github) if github is not None else None
    if github is not None and _platform_moved(project, github, platform, review):
        return

    try:
        result = run_async(
            make_plan(
                project,
                targets=targets,
                prune=prune,
                allow_protected=allow_protected,
                replace=replace,
                platform=platform,
                workspace=workspace,
                check_boards=True,
            )
        )
    except ReconcilerError as exc:
        if github is not None:
            _publish_failure(github, exc)
        raise
    plan = result.plan
    exitcode = _exitcode(plan) if detailed_exitcode else ExitCode.OK
    if out is not None:
        from ..engine.operations import write_plan_file

        write_plan_file(out, result, project)

    review_md = None
    if review is not None:
        from ..render.review import render_review_markdown

        review_md = render_review_markdown(review, plan)
    if fmt == "json":
        if review is None:
            write_json(plan, sys.stdout)
        else:
            import json

            doc = {**plan_document(plan), "review": review.document()}
            click.echo(json.dumps(doc, indent=2, sort_keys=True))
    elif fmt == "markdown":
        from ..render.plan_markdown import render_markdown  # jinja2: only this format pays for it

        click.echo(render_markdown(plan, repo_root=project.root, show_noop=show_noop, review=review_md), nl=False)
    else:
        style = click.style if sys.stdout.isatty() else None
        click.echo(
            render_text(
                plan,
                style=style,
                show_noop=show_noop,
                apply_command=apply_command(targets, prune=prune, allow_protected=allow_protected, replace=replace),
            ),
            nl=False,
        )
        if not result.observed.listed and resolve_platform(project, platform) == LOCAL_PLATFORM:
            click.echo(fresh_local_note(plan), nl=False)
        if review is not None:
            from ..render.review import render_review_text

            click.echo(render_review_text(review, plan), nl=False)
        if out is not None:
            click.echo(f"Saved the plan to {out}; apply exactly this with `reconciler apply {out}`.")

    if github is not None:
        from ..github.publish import publish_plan
        from ..render.plan_markdown import render_for_reviewers

        base = review.merge_base if review is not None else None
        base_templates = _templates_at(project, base)
        drawn = {
            noop: render_for_reviewers(
                plan,
                repo_root=project.root,
                base_templates=base_templates,
                base=base,
                show_noop=noop,
                review=review_md,
            )
            for noop in {show_noop, True}
        }
        sticky = publish_plan(
            github,
            plan,
            comment_markdown=drawn[show_noop],
            summary_markdown=drawn[True],
            review=review,
            exitcode=int(exitcode),
        )
        click.echo(sticky.describe(github.pull_request.number), err=True)
    elif github_output:
        from ..errors import UsageError
        from ..github.actions import set_outputs
        from ..github.publish import plan_outputs

        if not set_outputs(plan_outputs(plan, int(exitcode))):
            raise UsageError("--github-output needs GITHUB_OUTPUT, which GitHub Actions sets in every step")
    if exitcode != ExitCode.OK:
        from ..errors import CommandExit

        raise CommandExit(exitcode)


def _templates_at(project: Project, base: str | None) -> dict[str, str] | None:
    """The base commit's `templates/` (what a pull request's comment is drawn with), or None when
    there is no base or git cannot read it (the packaged templates draw it then)."""
    if base is None:
        return None
    from ..render.sandbox import MAX_TEMPLATE_BYTES
    from ..vcs.commit import GitError
    from ..vcs.review import files_at

    try:
        return files_at(project.root, base, "templates", limit=MAX_TEMPLATE_BYTES)
    except GitError:
        return None


def _exitcode(plan: Plan) -> ExitCode:
    """Blocked wins over pending: a pipeline must not turn green while a spec cannot be applied."""
    from ..errors import ExitCode

    if plan.blocked:
        return ExitCode.BLOCKED
    return ExitCode.CHANGES_PENDING if plan.has_changes else ExitCode.OK


def apply_command(
    targets: tuple[str, ...], *, prune: bool, allow_protected: bool, replace: tuple[str, ...] = ()
) -> str:
    """The `apply` that carries out this plan: the same flags, or apply would plan something else."""
    import shlex

    words = ["reconciler", "apply"]
    words += ["--prune"] if prune else []
    words += ["--allow-protected"] if allow_protected else []
    for target in targets:
        words += ["--target", target]
    for spec_id in replace:
        words += ["--replace", spec_id]
    return shlex.join(words)


def _fork_without_token(project: Project, github: GitHubContext, platform: str | None) -> bool:
    """A fork's pull request against a real platform gets no OSMOSIS_TOKEN from GitHub: say so
    (warning, job summary) and exit 0 with the specs validated, instead of failing a check the
    contributor cannot fix."""
    from ..github.publish import FORK_WITHOUT_TOKEN, fork_without_secrets, publish_fork_without_token
    from ..settings import LOCAL_PLATFORM, resolve_platform
    from ..workflow_commands import annotation

    if not fork_without_secrets(github) or os.environ.get("OSMOSIS_TOKEN", "").strip():
        return False
    if resolve_platform(project, platform) == LOCAL_PLATFORM:
        return False
    publish_fork_without_token(github)
    click.echo(annotation("warning", FORK_WITHOUT_TOKEN, title="reconciler plan"), err=True)
    return True


def _platform_moved(project: Project, github: GitHubContext, platform: str | None, review: Review | None) -> bool:
    """A pull request that points `platform` in reconciler.toml somewhere its base does not would
    have this job send OSMOSIS_TOKEN there (a fork's, under pull_request_target). The token goes
    only to the base's platform: say so (comment, summary, warning) and exit 0 without a plan,
    which runs against the new platform once the change is merged. A platform from --platform or
    OSMOSIS_PLATFORM_URL (the workflow's own) and the local platform (no token) are not asked."""
    from ..errors import ConfigError
    from ..github.publish import publish_failure
    from ..osmosis.urls import same_platform
    from ..settings import LOCAL_PLATFORM
    from ..specs.models import SETTINGS_FILE
    from ..vcs.commit import GitError
    from ..vcs.review import file_at
    from ..workflow_commands import annotation

    if platform or os.environ.get("OSMOSIS_PLATFORM_URL", "").strip():
        return False
    mine = (project.settings.platform or "").strip()
    if not mine or mine == LOCAL_PLATFORM or not os.environ.get("OSMOSIS_TOKEN", "").strip():
        return False  # no token goes anywhere
    base = github.pull_request.base_sha or (review.merge_base if review is not None else None)
    try:
        text = file_at(project.root, base, SETTINGS_FILE, limit=1024 * 1024) if base else None
        known = base is not None
    except GitError:
        known = False
    if not known:
        # the token may not go where the pull request says before the base's word is read
        message = (
            f"the base branch's {SETTINGS_FILE} could not be read (its commit is not in this checkout), so"
            " reconciler cannot tell whether this pull request moved `platform`, and sends OSMOSIS_TOKEN nowhere."
            " Check out with fetch-depth: 0 (as the scaffolded plan.yml does)"
        )
        publish_failure(
            github, f"### reconciler plan: not computed\n\nThe plan was not computed: {message}.\n", create=True
        )
        raise ConfigError(message)
    theirs = _platform_in(text)
    if theirs is not None and same_platform(theirs, mine):
        return False
    message = (
        f"this pull request changes `platform` in {SETTINGS_FILE} from {theirs or 'unset'} to {mine}, and"
        " reconciler sends OSMOSIS_TOKEN only to the platform of the base branch, so the plan was not computed."
        " It runs against the new platform once the change is merged (apply)."
    )
    body = f"### reconciler plan: not computed\n\nThe plan was not computed: {message}\n"
    publish_failure(github, body, create=True, exitcode=0)
    click.echo(annotation("warning", message, title="reconciler plan"), err=True)
    return True


def _platform_in(text: str | None) -> str | None:
    """`platform` of a reconciler.toml's text; None when absent or unreadable."""
    import tomli

    if text is None:
        return None
    try:
        value = tomli.loads(text).get("platform")
    except tomli.TOMLDecodeError:
        return None
    return value.strip() if isinstance(value, str) and value.strip() else None


def _validate_or_exit(project: Project, github: GitHubContext | None) -> None:
    """In Actions: invalid specs become annotations (and, with a PR, the comment says so); exit 1."""
    from ..errors import SpecError
    from ..render.diagnostics import render_text
    from ..specs.loader import discover

    specs = discover([project.existing_specs_path()])
    result = project.load_specs(specs)
    if not result.errors:
        return
    click.echo(render_text(result, github_annotations=True), nl=False)
    if github is not None:
        from ..github.comments import validation_failed_body
        from ..github.publish import publish_failure

        sticky = publish_failure(github, validation_failed_body(result.diagnostics), create=True)
        click.echo(sticky.describe(github.pull_request.number), err=True)
    raise SpecError("specs are invalid; nothing was planned")


def _review(project: Project, base: str | None, *, explicit: bool) -> Review | None:
    """The spec changes since the merge base with `base`; from the PR event, a failure only warns."""
    if base is None:
        return None
    from ..errors import ReconcilerError
    from ..vcs.review import review_changes

    try:
        return review_changes(project.root, base, project.settings.specs_dir)
    except ReconcilerError as exc:
        if explicit:
            raise
        from ..workflow_commands import annotation

        click.echo(annotation("warning", f"no spec review against {base}: {exc.message}"))
        return None


def _pull_request_review(project: Project, github: GitHubContext) -> Review | None:
    """Against origin/<base> when the checkout has it, else against the event's base commit (fetched if missing),
    so reviewers see the field diff even in a shallow checkout of the pull request alone."""
    from ..errors import ReconcilerError
    from ..vcs.review import fetch_base_commit, review_changes

    sha = github.pull_request.base_sha
    if sha is None:
        return _review(project, github.base_ref, explicit=False)
    if github.base_ref is not None:
        try:
            return review_changes(project.root, github.base_ref, project.settings.specs_dir)
        except ReconcilerError:
            pass  # no origin/<base>, or too shallow to meet HEAD: the base commit below answers
    try:
        fetch_base_commit(project.root, sha)
    except ReconcilerError as exc:
        from ..workflow_commands import annotation

        click.echo(annotation("warning", f"no spec review against the base commit {sha[:12]}: {exc.message}"))
        return None
    return _review(project, sha, explicit=False)


def _publish_failure(github: GitHubContext, exc: Exception) -> None:
    from ..errors import BoardRefused, ReconcilerError
    from ..github.comments import plan_failed_body
    from ..github.publish import publish_failure

    message = exc.message if isinstance(exc, ReconcilerError) else str(exc)
    # a board the pull request itself breaks is said on it, as invalid specs are; other failures
    # (the platform unreachable, say) only update a plan comment that is already there
    try:
        sticky = publish_failure(github, plan_failed_body(message), create=isinstance(exc, BoardRefused))
    except ReconcilerError as comment_error:  # the plan's own error is the one to report
        click.echo(f"warning: could not update the plan comment: {comment_error.message}", err=True)
    else:
        click.echo(sticky.describe(github.pull_request.number), err=True)
