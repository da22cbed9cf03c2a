"""A small GitHub REST client: issue comments, commit pulls and statuses, with Link-header paging and typed errors.

    GitHubError                  any failed call (exit 1); the message never holds the token
    ├── GitHubAuthError          401, or 403 that is not a rate limit: token missing, expired or lacking a permission
    ├── GitHubNotFound           404: no such repository or pull request (or the token cannot see it)
    ├── GitHubValidationError    422: GitHub refused the body (for example, too long)
    ├── GitHubRateLimited        429, or 403 with `x-ratelimit-remaining: 0` / `retry-after`
    ├── GitHubServerError        5xx
    └── GitHubConnectionError    no answer at all

Idempotent calls (GET, PATCH) are retried on 5xx, rate limits and connection errors, a bounded
number of times, honouring Retry-After; POST is never retried, so a comment is never posted twice.
Paging follows `Link: <...>; rel="next"` and refuses a next URL on another host than GITHUB_API_URL,
so the token is only ever sent there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from .. import __version__, json_text
from ..errors import ReconcilerError
from .event import DEFAULT_API_URL

IDEMPOTENT = frozenset({"GET", "PATCH", "PUT", "DELETE"})


class GitHubError(ReconcilerError):
    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class GitHubAuthError(GitHubError):
    pass


class GitHubNotFound(GitHubError):
    pass


class GitHubValidationError(GitHubError):
    pass


class GitHubRateLimited(GitHubError):
    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message, status=status, hint="wait for the rate limit to reset and re-run the job")
        self.retry_after = retry_after


class GitHubServerError(GitHubError):
    pass


class GitHubConnectionError(GitHubError):
    pass


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    html_url: str
    user_login: str | None = None
    user_type: str | None = None

    @classmethod
    def from_api(cls, data: Any) -> Comment:
        if not isinstance(data, dict) or not isinstance(data.get("id"), int):
            raise GitHubError("GitHub answered with something that is not an issue comment")
        user: dict[str, Any] = data["user"] if isinstance(data.get("user"), dict) else {}
        return cls(
            id=data["id"],
            body=data.get("body") or "",
            html_url=data.get("html_url") or "",
            user_login=user.get("login"),
            user_type=user.get("type"),
        )


@dataclass(frozen=True)
class PullRequestRef:
    number: int
    merged: bool
    html_url: str

    @classmethod
    def from_api(cls, data: Any) -> PullRequestRef:
        if not isinstance(data, dict) or not isinstance(data.get("number"), int):
            raise GitHubError("GitHub answered with something that is not a pull request")
        return cls(number=data["number"], merged=bool(data.get("merged_at")), html_url=data.get("html_url") or "")


@dataclass(frozen=True)
class CommitStatus:
    """One commit status; GitHub keeps every one set, and shows the newest per context."""

    state: str  # pending | success | failure | error
    context: str
    description: str
    target_url: str | None = None

    @classmethod
    def from_api(cls, data: Any) -> CommitStatus:
        if not isinstance(data, dict) or not isinstance(data.get("state"), str):
            raise GitHubError("GitHub answered with something that is not a commit status")
        return cls(
            state=data["state"],
            context=data.get("context") or "default",
            description=data.get("description") or "",
            target_url=data.get("target_url") or None,
        )


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is not None:
        try:
            return max(0.0, float(value))
        except ValueError:
            return None
    if response.headers.get("x-ratelimit-remaining") == "0" and response.headers.get("x-ratelimit-reset"):
        try:
            return max(0.0, float(response.headers["x-ratelimit-reset"]) - time.time())
        except ValueError:
            return None
    return None


def _body(response: httpx.Response) -> Any:
    """The answer's JSON; an answer that is not JSON (a proxy's HTML page, a cut-off body) is a
    GitHubError naming the request, never an internal error."""
    try:
        return json_text.loads(response.content)
    except ValueError:
        request = response.request
        raise GitHubError(
            f"GitHub API {request.method} {request.url.path} answered with something that is not JSON",
            status=response.status_code,
        ) from None


def _github_message(response: httpx.Response) -> str:
    try:
        data = json_text.loads(response.content)
    except ValueError:
        return response.reason_phrase or ""
    if isinstance(data, dict):
        text = str(data.get("message") or "")
        errors = data.get("errors")
        if isinstance(errors, list) and errors:
            details = [e.get("message") or e.get("code") for e in errors if isinstance(e, dict)]
            text += " (" + "; ".join(str(d) for d in details if d) + ")"
        return text
    return ""


class GitHubClient:
    """`with GitHubClient(token) as gh: gh.list_issue_comments("o/r", 7)`. Pass `transport` in tests."""

    def __init__(
        self,
        token: str,
        api_url: str = DEFAULT_API_URL,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        max_wait: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._token = token
        self.api_url = api_url.rstrip("/") + "/"
        self._origin = urlsplit(self.api_url)[:2]
        self.retries = retries
        self.max_wait = max_wait
        self._sleep = sleep
        self._http = httpx.Client(
            base_url=self.api_url,
            transport=transport,
            timeout=timeout,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": f"reconciler/{__version__}",
            },
            follow_redirects=False,
        )

    def __repr__(self) -> str:
        return f"GitHubClient(api_url={self.api_url!r})"

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text

    def _url(self, path_or_url: str) -> str:
        url = urljoin(self.api_url, path_or_url.lstrip("/")) if "://" not in path_or_url else path_or_url
        if urlsplit(url)[:2] != self._origin:
            raise GitHubError(f"refusing to send the GitHub token to {urlsplit(url).netloc} (not GITHUB_API_URL)")
        return url

    def request(self, method: str, path_or_url: str, *, json: Any = None, params: Any = None) -> httpx.Response:
        url = self._url(path_or_url)
        shown = urlsplit(url).path
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._http.request(method, url, json=json, params=params)
            except httpx.HTTPError as exc:
                error: GitHubError = GitHubConnectionError(
                    self._redact(f"GitHub API {method} {shown}: no answer ({type(exc).__name__}: {exc})")
                )
                wait = None
            else:
                if response.status_code < 400:
                    return response
                error = self._error(method, shown, response)
                wait = error.retry_after if isinstance(error, GitHubRateLimited) else None
                if not isinstance(error, GitHubRateLimited | GitHubServerError):
                    raise error
            if method.upper() not in IDEMPOTENT or attempt > self.retries:
                raise error
            delay = min(self.max_wait, wait if wait is not None else 0.5 * 2 ** (attempt - 1))
            if wait is not None and wait > self.max_wait:
                raise error
            self._sleep(delay)

    def _error(self, method: str, path: str, response: httpx.Response) -> GitHubError:
        status = response.status_code
        text = self._redact(f"GitHub API {method} {path} answered {status}: {_github_message(response)}".rstrip(": "))
        limited = response.headers.get("x-ratelimit-remaining") == "0" or "retry-after" in response.headers
        if status == 429 or (status == 403 and limited):
            return GitHubRateLimited(text, status=status, retry_after=_retry_after(response))
        if status in (401, 403):
            return GitHubAuthError(
                text,
                status=status,
                hint="the workflow needs `permissions: pull-requests: write` and GITHUB_TOKEN in the step's env",
            )
        if status == 404:
            return GitHubNotFound(text, status=status, hint="check GITHUB_REPOSITORY and the pull request number")
        if status == 422:
            return GitHubValidationError(text, status=status)
        if status >= 500:
            return GitHubServerError(text, status=status)
        return GitHubError(text, status=status)

    def paginate(self, path: str, params: dict[str, Any] | None = None) -> Iterator[Any]:
        """Each item of a list endpoint, page after page, following the Link header."""
        url: str | None = path
        query: dict[str, Any] | None = {"per_page": 100, **(params or {})}
        while url is not None:
            response = self.request("GET", url, params=query)
            items = _body(response)
            if not isinstance(items, list):
                raise GitHubError(f"GitHub API GET {urlsplit(url).path} did not answer with a list")
            yield from items
            url = response.links.get("next", {}).get("url")
            query = None  # the next URL carries its own query

    # --- issue comments (pull requests are issues here) -----------------------------------

    def token_login(self) -> str | None:
        """The login this token writes comments as, when it is a person's token; None for an
        installation token (GITHUB_TOKEN, a GitHub App), which writes as a bot and may not read
        /user. Asked once per client."""
        if not hasattr(self, "_login"):
            try:
                found = _body(self.request("GET", "user"))
            except GitHubAuthError:  # 403 "Resource not accessible by integration"
                found = None
            except GitHubNotFound:
                found = None
            login = found.get("login") if isinstance(found, dict) else None
            self._login: str | None = login if isinstance(login, str) else None
        return self._login

    def list_issue_comments(self, repo: str, number: int) -> Iterator[Comment]:
        for item in self.paginate(f"repos/{repo}/issues/{number}/comments"):
            yield Comment.from_api(item)

    def create_issue_comment(self, repo: str, number: int, body: str) -> Comment:
        response = self.request("POST", f"repos/{repo}/issues/{number}/comments", json={"body": body})
        return Comment.from_api(_body(response))

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        response = self.request("PATCH", f"repos/{repo}/issues/comments/{comment_id}", json={"body": body})
        return Comment.from_api(_body(response))

    # --- where a commit came from, and its statuses ----------------------------------------

    def pulls_for_commit(self, repo: str, sha: str) -> list[PullRequestRef]:
        """The pull requests associated with a commit (for a merge commit: the one it merged)."""
        return [PullRequestRef.from_api(item) for item in self.paginate(f"repos/{repo}/commits/{sha}/pulls")]

    def list_commit_statuses(self, repo: str, sha: str) -> Iterator[CommitStatus]:
        """The commit's statuses, newest first (GitHub's order)."""
        for item in self.paginate(f"repos/{repo}/commits/{sha}/statuses"):
            yield CommitStatus.from_api(item)

    def create_commit_status(self, repo: str, sha: str, status: CommitStatus) -> CommitStatus:
        body: dict[str, Any] = {"state": status.state, "context": status.context, "description": status.description}
        if status.target_url:
            body["target_url"] = status.target_url
        response = self.request("POST", f"repos/{repo}/statuses/{sha}", json=body)
        return CommitStatus.from_api(_body(response))
