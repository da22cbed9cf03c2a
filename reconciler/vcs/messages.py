"""Commit messages that say what changed."""

from __future__ import annotations

from typing import Any


def commit_message(result: Any) -> str:
    changed = [f for o in result.rendered for f in o.changed]
    boards = sorted({o.spec_id.rsplit("/", 1)[-1] for o in result.rendered if o.changed})
    subject = f"reconciler: update leaderboards ({', '.join(boards)})" if boards else "reconciler: update run state"
    body = []
    if result.applied is not None:
        for r in result.applied.results:
            if r.ok and r.run_name:
                body.append(f"- {r.action.kind.value} {r.action.spec_id}: {r.run_name}")
    body += [f"- rendered {f}" for f in changed]
    return subject + ("\n\n" + "\n".join(body) if body else "") + "\n"
