"""git as a subprocess in a test repository, as a developer named `dev` would run it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "dev",
    "GIT_AUTHOR_EMAIL": "dev@example.com",
    "GIT_COMMITTER_NAME": "dev",
    "GIT_COMMITTER_EMAIL": "dev@example.com",
}


def git(root: Path, *args: str) -> str:
    """`git -C root ARGS`: its output, stripped; raises when git fails."""
    done = subprocess.run(
        ["git", "-C", str(root), *args], env=os.environ | IDENTITY, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def commit_all(root: Path, message: str = "specs") -> str:
    """`git init -b main` in `root` if it is no repository yet, then commit everything there; the commit."""
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")
