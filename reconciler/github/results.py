"""`reconcile --github-results`: results back on the pull request whose merge submitted the runs.

    every reported run          -> a section of the job summary (GITHUB_STEP_SUMMARY)
    runs of one merge commit    -> GET /repos/{o}/{r}/commits/{sha}/pulls names the pull request;
                                   once any of them ended, one sticky comment (marker
                                   `<!-- reconciler:results -->`) created or updated in place,
                                   and a `reconciler/results` commit status on the merge commit
    runs of no pull request     -> the job summary only (schedule, dispatch, a direct push)

Nothing is posted twice: the comment body holds nothing that changes between jobs (no run URL,
no clock), so an unchanged body is left alone, and a status equal to the newest one of its
context is not set again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

from ..core.run_results import RunReport
from .actions import append_summary
from .comments import COMMENT_LIMIT, cut_to_fit
from .event import DEFAULT_API_URL, DEFAULT_SERVER_URL, GitHubEnvError
from .rest import CommitStatus, GitHubClient, GitHubNotFound, GitHubValidationError, PullRequestRef
from .results_comment import (
    RESULTS_CONTEXT,
    RESULTS_HEADING,
    RESULTS_MARKER,
    commit_status,
    results_body,
    summary_markdown,
)
from .sticky import upsert_sticky

FOOTER = "\n\n<sub>posted by `reconciler reconcile --github-results`; updated in place as runs end</sub>\n"


@dataclass(frozen=True)
class ResultsContext:
    repository: str
    token: str
    api_url: str = DEFAULT_API_URL
    server_url: str = DEFAULT_SERVER_URL
    ref: str = "HEAD"  # the branch the leaderboards are committed to


def results_context_from_env(env: Mapping[str, str] | None = None) -> ResultsContext:
    env = os.environ if env is None else env
    repository = env.get("GITHUB_REPOSITORY", "").strip()
    token = env.get("GITHUB_TOKEN", "").strip()
    if repository.count("/") != 1 or not all(repository.split("/")):
        raise GitHubEnvError(
            "GITHUB_REPOSITORY is not set to owner/repo; --github-results needs it",
            hint="run inside GitHub Actions, or set it by hand to test",
        )
    if not token:
        raise GitHubEnvError(
            "GITHUB_TOKEN is not set; --github-results needs it to comment and set commit statuses",
            hint="pass `GITHUB_TOKEN: ${{ github.token }}` in the step's env",
        )
    ref = env.get("GITHUB_REF_NAME", "").strip() if env.get("GITHUB_REF_TYPE") == "branch" else ""
    return ResultsContext(
        repository=repository,
        token=token,
        api_url=env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL,
        server_url=env.get("GITHUB_SERVER_URL", "").strip() or DEFAULT_SERVER_URL,
        ref=ref or "HEAD",
    )


def submitting_commit(env: Mapping[str, str] | None = None) -> str | None:
    """GITHUB_SHA when this job runs for a push (a merge landing), else None: a scheduled or
    dispatched job's GITHUB_SHA is merely the branch head, which no pull request asked for."""
    env = os.environ if env is None else env
    if env.get("GITHUB_ACTIONS") != "true" or env.get("GITHUB_EVENT_NAME") != "push":
        return None
    return env.get("GITHUB_SHA", "").strip() or None


def marked(body: str) -> str:
    room = COMMENT_LIMIT - len(RESULTS_MARKER) - 1 - len(FOOTER)
    shown = cut_to_fit(body.rstrip("\n") + "\n", room, what="results").rstrip("\n")
    return f"{RESULTS_MARKER}\n{shown}{FOOTER}"


def by_commit(reports: Sequence[RunReport]) -> dict[str, list[RunReport]]:
    groups: dict[str, list[RunReport]] = {}
    for r in reports:
        if r.commit:
            groups.setdefault(r.commit, []).append(r)
    return groups


def _pull_request(pulls: Sequence[PullRequestRef]) -> PullRequestRef | None:
    merged = [p for p in pulls if p.merged]
    return next(iter(merged or pulls), None)


def _pulls(gh: GitHubClient, repo: str, sha: str) -> list[PullRequestRef]:
    """The commit's pull requests; none when GitHub does not know the commit (never pushed, or rewritten)."""
    try:
        return gh.pulls_for_commit(repo, sha)
    except (GitHubNotFound, GitHubValidationError):
        return []


def _newest(gh: GitHubClient, repo: str, sha: str) -> CommitStatus | None:
    for status in gh.list_commit_statuses(repo, sha):
        if status.context == RESULTS_CONTEXT:
            return status
    return None


def publish_results(
    ctx: ResultsContext,
    reports: Sequence[RunReport],
    *,
    env: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
    verbose: bool = False,
) -> list[str]:
    """Summary, comments and statuses for `reports`; returns one line per thing done, for the log
    (and, when verbose, per thing left alone: an up-to-date comment, a commit of no pull request)."""
    links = {"server_url": ctx.server_url, "repository": ctx.repository, "ref": ctx.ref}
    append_summary(summary_markdown(reports, **links), env)
    said: list[str] = []
    with GitHubClient(ctx.token, ctx.api_url, transport=transport) as gh:
        # one comment per pull request: a rebase merge lands one pull request as several
        # commits, and a comment per commit made each job rewrite the one comment in turn
        by_pull: dict[int, tuple[PullRequestRef, list[tuple[str, list[RunReport]]]]] = {}
        for sha, runs in sorted(by_commit(reports).items()):
            pr = _pull_request(_pulls(gh, ctx.repository, sha))
            if pr is None:
                if verbose:
                    said.append(f"commit {sha[:12]} belongs to no pull request; its runs are in the job summary only")
                continue
            by_pull.setdefault(pr.number, (pr, []))[1].append((sha, runs))
        for pr, commits in by_pull.values():
            target = pr.html_url or None
            if any(r.terminal for _, runs in commits for r in runs):
                bodies = [results_body(runs, commit=sha, **links) for sha, runs in commits]
                # one heading: the later commits' sections follow the first's
                body = marked("\n\n".join([bodies[0], *(b.removeprefix(RESULTS_HEADING) for b in bodies[1:])]))
                result = upsert_sticky(gh, ctx.repository, pr.number, body, marker=RESULTS_MARKER)
                target = result.comment.html_url if result.comment and result.comment.html_url else target
                if result.action != "unchanged" or verbose:
                    said.append(
                        {
                            "created": f"posted the results comment on pull request #{pr.number}",
                            "updated": f"updated the results comment on pull request #{pr.number}",
                        }.get(result.action, f"the results comment on pull request #{pr.number} is already up to date")
                    )
            for sha, runs in commits:
                status = commit_status(runs, target)
                newest = _newest(gh, ctx.repository, sha)
                if newest is not None and (newest.state, newest.description) == (status.state, status.description):
                    continue
                gh.create_commit_status(ctx.repository, sha, status)
                said.append(f"set {RESULTS_CONTEXT} = {status.state} on {sha[:12]}: {status.description}")
    return said
