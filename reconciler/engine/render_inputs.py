"""The templates a leaderboard is rendered with, as one digest: part of what the state file records per render."""

from __future__ import annotations

import hashlib
from importlib.resources import files
from pathlib import Path

from ..safe_paths import read_repo_file

LEADERBOARD_TEMPLATES = ("leaderboard.md.j2", "leaderboard.svg.j2")


def templates_digest(root: Path) -> str:
    """The sources the renderer picks: the repository's own templates/ first, else the packaged ones.

    Read here as bytes, not through the template environment: the digest only has to change
    when a template does, and must not depend on how templates are loaded or sandboxed.
    """
    packaged = files("reconciler.render") / "templates"
    h = hashlib.sha256()
    for name in LEADERBOARD_TEMPLATES:
        own = read_repo_file(root, f"templates/{name}")
        source = own if own is not None else packaged.joinpath(name).read_bytes()
        h.update(name.encode() + b"\0" + hashlib.sha256(source).digest())
    return h.hexdigest()[:16]
