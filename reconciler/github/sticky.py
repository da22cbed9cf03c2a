"""One plan comment per pull request, found again by a hidden marker and updated in place.

The comment's body starts with a marker such as `<!-- reconciler:plan -->` (an HTML comment,
invisible when rendered). Every run pages through all of the pull request's comments, oldest
first, and takes the first of OURS whose body starts with the marker; a comment that merely
quotes it does not count. Anyone can type the marker, so whose a comment is decides (`is_ours`):
written by the token's own login, or, for an installation token such as GITHUB_TOKEN (which
writes as a bot and has no /user), by a bot account. Then:

    no marked comment, something to say       create it
    no marked comment, nothing to say         stay silent (no comment on a no-change PR)
    a marked comment, same body               leave it (no edit, no notification)
    a marked comment, new body                update it in place (never a second comment)
    more marked comments (a race)             the first is kept up to date, each other one is
                                              rewritten to point at it, without the marker
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from .comments import PLAN_MARKER
from .rest import Comment, GitHubAuthError


class CommentsPort(Protocol):
    """What the sticky comment needs from GitHub (`rest.GitHubClient` has it; tests may fake it)."""

    def token_login(self) -> str | None: ...

    def list_issue_comments(self, repo: str, number: int) -> Iterator[Comment]: ...

    def create_issue_comment(self, repo: str, number: int, body: str) -> Comment: ...

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> Comment: ...


@dataclass(frozen=True)
class StickyResult:
    action: Literal["created", "updated", "unchanged", "skipped", "read-only"]
    comment: Comment | None

    def describe(self, number: int) -> str:
        url = f" {self.comment.html_url}" if self.comment and self.comment.html_url else ""
        return {
            "created": f"posted the plan comment on pull request #{number}:{url}",
            "updated": f"updated the plan comment on pull request #{number}:{url}",
            "unchanged": f"the plan comment on pull request #{number} is already up to date:{url}",
            "skipped": f"no changes and no earlier plan comment on pull request #{number}; nothing posted",
            "read-only": f"warning: pull request #{number} comes from a fork, and GitHub gives its workflow a"
            " read-only token, so no comment was posted; the plan is in the job summary",
        }[self.action]


def is_sticky(comment: Comment, marker: str = PLAN_MARKER) -> bool:
    return comment.body.lstrip().startswith(marker)


def is_ours(comment: Comment, login: str | None) -> bool:
    """Written by the token's login; with an installation token (`login` None), by a bot account."""
    if login is not None:
        return comment.user_login == login
    return comment.user_type == "Bot"


def sticky_candidates(gh: CommentsPort, repo: str, number: int, marker: str = PLAN_MARKER) -> list[Comment]:
    """Our comments whose body starts with `marker`, oldest first, looking through every page."""
    login = gh.token_login()
    return [c for c in gh.list_issue_comments(repo, number) if is_sticky(c, marker) and is_ours(c, login)]


def upsert_sticky(
    gh: CommentsPort,
    repo: str,
    number: int,
    body: str,
    *,
    create: bool = True,
    marker: str = PLAN_MARKER,
) -> StickyResult:
    """Create the marked comment (only if `create`), or update the one already there."""
    if not body.lstrip().startswith(marker):
        raise ValueError("the sticky comment body must start with its marker")
    candidates = sticky_candidates(gh, repo, number, marker)
    if not candidates:
        if not create:
            return StickyResult("skipped", None)
        return StickyResult("created", gh.create_issue_comment(repo, number, body))
    result = _update_first(gh, repo, number, candidates, body)
    assert result.comment is not None
    _retire(gh, repo, [c for c in candidates if c.id != result.comment.id], result.comment)
    return result


def _update_first(gh: CommentsPort, repo: str, number: int, candidates: list[Comment], body: str) -> StickyResult:
    for existing in candidates:
        if existing.body == body:
            return StickyResult("unchanged", existing)
        try:
            return StickyResult("updated", gh.update_issue_comment(repo, existing.id, body))
        except GitHubAuthError:
            # another bot's marked comment (with an installation token, `is_ours` knows only that
            # a bot wrote it): try the next; none of them ours, ours is a new one. A token that
            # may not write at all fails creating it the same way.
            continue
    return StickyResult("created", gh.create_issue_comment(repo, number, body))


def retired_body(current: Comment) -> str:
    """What a duplicate of a sticky comment (plan or results) says instead: no marker, so it is
    never found again, and a pointer to the one that is kept up to date."""
    where = f"[this comment]({current.html_url})" if current.html_url else "the first comment of reconciler above"
    return f"**Out of date.** reconciler keeps {where} up to date instead of this one.\n"


def _retire(gh: CommentsPort, repo: str, others: list[Comment], current: Comment) -> None:
    """Two runs that both found no comment each create one (a run cancelled after it posted); only
    the first is updated from then on, so every other one of ours is rewritten to point at it
    rather than show an old plan for the life of the pull request."""
    for other in others:
        try:
            gh.update_issue_comment(repo, other.id, retired_body(current))
        except GitHubAuthError:
            continue  # another bot's comment: not ours to rewrite
