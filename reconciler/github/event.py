"""Where a run is, read from the variables GitHub Actions sets and from the event payload.

GitHub writes the triggering webhook payload to the file named by GITHUB_EVENT_PATH; for
`pull_request` (and `pull_request_target`) events the PR number and base branch are in
`pull_request.number`, `pull_request.base.ref` and `pull_request.base.sha`; an `issue_comment` on a pull request
carries the number in `issue.number`. The token comes from GITHUB_TOKEN and is never
part of any message, repr or output.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import json_text
from ..errors import ConfigError
from ..files import read_regular

DEFAULT_API_URL = "https://api.github.com"
_COMMIT = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")  # only a full object id goes on a git command line
DEFAULT_SERVER_URL = "https://github.com"


class GitHubEnvError(ConfigError):
    """A variable that `--github-comment` needs is missing or malformed."""


@dataclass(frozen=True)
class PullRequestEvent:
    number: int
    base_ref: str | None
    head_sha: str | None
    base_sha: str | None = None  # the base branch's commit the event was made for: reviewable with no origin/<base>
    # the head branch lives in another repository: GitHub gives such a run a read-only token
    from_fork: bool = False


@dataclass(frozen=True)
class GitHubContext:
    repository: str  # owner/repo
    pull_request: PullRequestEvent
    token: str = field(repr=False)
    api_url: str = DEFAULT_API_URL
    server_url: str = DEFAULT_SERVER_URL
    run_id: str | None = None

    @property
    def run_url(self) -> str | None:
        """The workflow run page, whose summary holds the full plan."""
        if not self.run_id:
            return None
        return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"

    @property
    def base_ref(self) -> str | None:
        """The ref to review against: the remote-tracking branch of the pull request's base."""
        return f"origin/{self.pull_request.base_ref}" if self.pull_request.base_ref else None


def _need(env: Mapping[str, str], name: str, why: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise GitHubEnvError(
            f"{name} is not set; --github-comment needs it ({why})",
            hint="run inside GitHub Actions (see .github/workflows/plan.yml), or set it by hand to test",
        )
    return value


MAX_EVENT_BYTES = 64 * 1024 * 1024  # GitHub's event payloads are a few MiB at most


def read_event(path: Path) -> dict[str, Any]:
    try:
        data = json_text.loads(read_regular(path, MAX_EVENT_BYTES))
    except FileNotFoundError:
        raise GitHubEnvError(f"GITHUB_EVENT_PATH points at {path}, which does not exist") from None
    except (OSError, ValueError) as exc:
        raise GitHubEnvError(f"GITHUB_EVENT_PATH {path} is not a JSON event payload ({exc})") from None
    if not isinstance(data, dict):
        raise GitHubEnvError(f"GITHUB_EVENT_PATH {path} is not a JSON object")
    return data


def _table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _pr_number(value: object) -> bool:
    """A pull request number as GitHub gives it: a positive integer (JSON's `true` is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**31


def _branch_name(value: object) -> bool:
    """A branch name git could hold: printable text that encodes (a lone surrogate does not)."""
    if not isinstance(value, str) or not value or not value.isprintable():
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def pull_request_of(event: Mapping[str, Any]) -> PullRequestEvent | None:
    """The pull request an event is about, or None (a push, a schedule, an issue comment on an issue)."""
    pr = event.get("pull_request")
    if isinstance(pr, dict) and _pr_number(pr.get("number")):
        base = _table(pr.get("base"))
        head = _table(pr.get("head"))
        base_ref = base.get("ref") if _branch_name(base.get("ref")) else None
        head_sha = head.get("sha") if isinstance(head.get("sha"), str) else None
        base_sha = base.get("sha") if isinstance(base.get("sha"), str) and _COMMIT.match(base["sha"]) else None
        head_repo, base_repo = _table(head.get("repo")).get("full_name"), _table(base.get("repo")).get("full_name")
        # a deleted fork's head repo is null: still not this repository
        from_fork = bool(base_repo) and head_repo != base_repo
        return PullRequestEvent(pr["number"], base_ref, head_sha, base_sha, from_fork)
    issue = event.get("issue")
    if isinstance(issue, dict) and _pr_number(issue.get("number")) and issue.get("pull_request"):
        return PullRequestEvent(issue["number"], None, None)
    return None


def pull_request_from_env(env: Mapping[str, str] | None = None) -> PullRequestEvent | None:
    """The pull request of this Actions run, if any; never raises (for `plan --base` defaults)."""
    env = os.environ if env is None else env
    path = env.get("GITHUB_EVENT_PATH", "").strip()
    if not path:
        return None
    try:
        return pull_request_of(read_event(Path(path)))
    except GitHubEnvError:
        return None


def context_from_env(env: Mapping[str, str] | None = None) -> GitHubContext:
    """Everything `--github-comment` needs; a missing variable is named in the error."""
    env = os.environ if env is None else env
    repository = _need(env, "GITHUB_REPOSITORY", "the owner/repo whose pull request gets the comment")
    if repository.count("/") != 1 or not all(repository.split("/")):
        raise GitHubEnvError(f"GITHUB_REPOSITORY must be owner/repo, not {repository!r}")
    event_path = _need(env, "GITHUB_EVENT_PATH", "the event payload that names the pull request")
    pr = pull_request_of(read_event(Path(event_path)))
    if pr is None:
        name = env.get("GITHUB_EVENT_NAME") or "this event"
        raise GitHubEnvError(
            f"{name} is not about a pull request (no pull_request.number in GITHUB_EVENT_PATH)",
            hint="use --github-comment only in workflows triggered by pull_request",
        )
    token = _need(env, "GITHUB_TOKEN", "to write the comment; pass `GITHUB_TOKEN: ${{ github.token }}` in env")
    return GitHubContext(
        repository=repository,
        pull_request=pr,
        token=token,
        api_url=env.get("GITHUB_API_URL", "").strip() or DEFAULT_API_URL,
        server_url=env.get("GITHUB_SERVER_URL", "").strip() or DEFAULT_SERVER_URL,
        run_id=env.get("GITHUB_RUN_ID", "").strip() or None,
    )
