"""Commit messages that say what changed."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ..specs.visible import visible

# every commit reconciler makes says so first: a push tells its own unpushed commits by it (vcs.commit.OwnCommits)
SUBJECT_PREFIX = "reconciler: "


def commit_message(result: Any, held: Collection[str] = ()) -> str:
    """The commit's subject and body; `held`: board files not in this commit (commands.reconcile).

    Ids, run names and paths are shown through `visible`, as in a plan: one from a spec or run
    older than the id rules (or from the platform) could otherwise hold a newline and forge the
    subject or a body line, or a bidi override that makes the log show another name."""
    changed = [visible(f) for o in result.rendered for f in o.changed if f not in held]
    boards = sorted({visible(o.spec_id.rsplit("/", 1)[-1]) for o in result.rendered if set(o.changed) - set(held)})
    subject = SUBJECT_PREFIX + (f"update leaderboards ({', '.join(boards)})" if boards else "update run state")
    body = []
    if result.applied is not None:
        for r in result.applied.results:
            if r.ok and r.run_name:
                body.append(f"- {r.action.kind.value} {visible(str(r.action.spec_id))}: {visible(r.run_name)}")
    body += [f"- rendered {f}" for f in changed]
    return subject + ("\n\n" + "\n".join(body) if body else "") + "\n"
