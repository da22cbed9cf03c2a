"""`reconciler plan --github-comment`: the job summary, step outputs and the sticky PR comment.

plan computed     summary <- the full plan; outputs; the comment is created or updated when
                  there is something to say (changes, blocked or orphaned runs, spec edits),
                  else an earlier comment is updated to "no changes" and none is created
specs invalid     summary and comment <- the validation errors; outputs say exitcode 1
plan failed       summary <- the error; an earlier comment is updated to say so
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

import httpx

from ..core.plan import ActionKind, Plan
from ..core.review import Review
from .actions import append_summary, set_outputs
from .comments import no_changes_body, paid_actions, with_marker
from .event import GitHubContext
from .rest import GitHubAuthError, GitHubClient, GitHubError
from .sticky import StickyResult, upsert_sticky


def plan_outputs(plan: Plan | None, exitcode: int) -> dict[str, str]:
    """The step outputs: has_changes (true/false), paid_attempts, estimated_cost (USD, '' if unknown), exitcode."""
    cost = plan.estimated_cost_usd if plan is not None else None
    return {
        "has_changes": "true" if plan is not None and plan.has_changes else "false",
        "paid_attempts": str(plan.paid_attempts if plan is not None else 0),
        "estimated_cost": "" if cost is None else f"{cost:.2f}",
        "exitcode": str(exitcode),
    }


def worth_a_comment(plan: Plan, review: Review | None) -> bool:
    """Changes to apply, runs that are blocked or orphaned, or spec edits a reviewer should see."""
    if plan.has_changes:
        return True
    if any(a.kind in (ActionKind.BLOCKED, ActionKind.ORPHAN) for a in plan.actions):
        return True
    return review is not None and any(c.fields or c.status != "edited" for c in review.changes)


SECRET_VARIABLES = ("OSMOSIS_TOKEN", "GITHUB_TOKEN")
REDACTED = "***"
_SHORTEST_SECRET = 8  # shorter values would blank out ordinary words; real tokens are far longer


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every occurrence of each secret value replaced by `***` (longest first, so a
    secret that contains another is removed whole)."""
    for value in sorted({v for v in secrets if len(v) >= _SHORTEST_SECRET}, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    return text


def _secrets(ctx: GitHubContext | None, env: Mapping[str, str] | None) -> list[str]:
    """The tokens this process holds: none of them may reach a comment or a job summary."""
    found = [source.get(name, "") for source in (os.environ, env or {}) for name in SECRET_VARIABLES]
    return [*found, ctx.token] if ctx is not None else found


def _post(
    ctx: GitHubContext,
    body: str,
    *,
    create: bool,
    transport: httpx.BaseTransport | None,
    env: Mapping[str, str] | None,
    keep: str = "",
) -> StickyResult:
    # repository templates shape the body: whatever they printed, no token leaves this process
    body = redact(body, _secrets(ctx, env))
    marked = with_marker(body, head_sha=ctx.pull_request.head_sha, run_url=ctx.run_url, keep=keep)
    with GitHubClient(ctx.token, ctx.api_url, transport=transport) as gh:
        try:
            return upsert_sticky(gh, ctx.repository, ctx.pull_request.number, marked, create=create)
        except GitHubAuthError:
            # a fork's pull request runs with a read-only token whatever the workflow asks for: the
            # plan is in the job summary, and the check says what the plan says, not "403"
            # (pull_request_target runs with a token that can write: a 403 there is a real problem)
            if fork_without_secrets(ctx, env):
                return StickyResult("read-only", None)
            raise


def fork_without_secrets(ctx: GitHubContext, env: Mapping[str, str] | None = None) -> bool:
    """A fork's `pull_request` run: GitHub gives it a read-only token and no repository secrets.
    (`pull_request_target` runs in the base repository, with both.)"""
    event = (os.environ if env is None else env).get("GITHUB_EVENT_NAME", "")
    return ctx.pull_request.from_fork and event == "pull_request"


FORK_WITHOUT_TOKEN = (
    "this pull request comes from a fork, and GitHub gives a fork's workflow no repository secrets, so"
    " OSMOSIS_TOKEN is empty and the plan was not computed; the specs are valid. The plan runs once the"
    " change is merged (apply), or run `reconciler plan` on a checkout of this branch with a token."
)


def publish_fork_without_token(ctx: GitHubContext, env: Mapping[str, str] | None = None) -> None:
    """The job summary, in place of a plan the job cannot compute (the command warns too)."""
    append_summary(f"### reconciler plan: not computed\n\n{FORK_WITHOUT_TOKEN}\n", env)


def publish_plan(
    ctx: GitHubContext,
    plan: Plan,
    *,
    comment_markdown: str,
    summary_markdown: str,
    review: Review | None,
    exitcode: int,
    env: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> StickyResult:
    append_summary(redact(summary_markdown, _secrets(ctx, env)), env)
    speak = worth_a_comment(plan, review)
    try:
        result = _post(
            ctx,
            comment_markdown if speak else no_changes_body(),
            create=speak,
            transport=transport,
            env=env,
            keep=paid_actions(plan) if speak else "",
        )
    except GitHubError:
        set_outputs(plan_outputs(plan, 1), env)
        raise
    set_outputs(plan_outputs(plan, exitcode), env)
    return result


def publish_failure(
    ctx: GitHubContext,
    markdown: str,
    *,
    create: bool,
    exitcode: int = 1,
    env: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> StickyResult:
    """Say on the PR (and in the summary) why there is no plan. The step fails (`exitcode` 1),
    unless the job computed none on purpose (0: a platform the pull request names)."""
    append_summary(redact(markdown, _secrets(ctx, env)), env)
    set_outputs(plan_outputs(None, exitcode), env)
    return _post(ctx, markdown, create=create, transport=transport, env=env)
