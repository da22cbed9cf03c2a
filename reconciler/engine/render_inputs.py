"""The templates a leaderboard is rendered with, as one digest: part of what the state file records per render."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..render.templates import environment

LEADERBOARD_TEMPLATES = ("leaderboard.md.j2", "leaderboard.svg.j2")


def templates_digest(root: Path) -> str:
    """The sources the renderer would load now: the repository's own templates/ first, else the packaged ones."""
    env = environment(root)
    assert env.loader is not None  # environment() always installs one
    h = hashlib.sha256()
    for name in LEADERBOARD_TEMPLATES:
        source = env.loader.get_source(env, name)[0]
        h.update(name.encode() + b"\0" + source.encode("utf-8") + b"\0")
    return h.hexdigest()[:16]
