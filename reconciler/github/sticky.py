"""One plan comment per pull request, found again by a hidden marker and updated in place.

The comment's body starts with a marker such as `<!-- reconciler:plan -->` (an HTML comment,
invisible when rendered). Every run pages through all of the pull request's comments, oldest
first, and takes the first whose body starts with the marker; a comment that merely quotes it
does not count. Then:

    no marked comment, something to say       create it
    no marked comment, nothing to say         stay silent (no comment on a no-change PR)
    a marked comment, same body               leave it (no edit, no notification)
    a marked comment, new body                update it in place (never a second comment)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

from .comments import PLAN_MARKER
from .rest import Comment


class CommentsPort(Protocol):
    """What the sticky comment needs from GitHub (`rest.GitHubClient` has it; tests may fake it)."""

    def list_issue_comments(self, repo: str, number: int) -> Iterator[Comment]: ...

    def create_issue_comment(self, repo: str, number: int, body: str) -> Comment: ...

    def update_issue_comment(self, repo: str, comment_id: int, body: str) -> Comment: ...


@dataclass(frozen=True)
class StickyResult:
    action: Literal["created", "updated", "unchanged", "skipped"]
    comment: Comment | None

    def describe(self, number: int) -> str:
        url = f" {self.comment.html_url}" if self.comment and self.comment.html_url else ""
        return {
            "created": f"posted the plan comment on pull request #{number}:{url}",
            "updated": f"updated the plan comment on pull request #{number}:{url}",
            "unchanged": f"the plan comment on pull request #{number} is already up to date:{url}",
            "skipped": f"no changes and no earlier plan comment on pull request #{number}; nothing posted",
        }[self.action]


def is_sticky(comment: Comment, marker: str = PLAN_MARKER) -> bool:
    return comment.body.lstrip().startswith(marker)


def find_sticky(gh: CommentsPort, repo: str, number: int, marker: str = PLAN_MARKER) -> Comment | None:
    """The oldest comment whose body starts with `marker`, looking through every page."""
    for comment in gh.list_issue_comments(repo, number):
        if is_sticky(comment, marker):
            return comment
    return None


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
    existing = find_sticky(gh, repo, number, marker)
    if existing is None:
        if not create:
            return StickyResult("skipped", None)
        return StickyResult("created", gh.create_issue_comment(repo, number, body))
    if existing.body == body:
        return StickyResult("unchanged", existing)
    return StickyResult("updated", gh.update_issue_comment(repo, existing.id, body))
