"""A clone whose next push is rejected: someone else pushed to the shared remote after it was cloned."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def cloned(seed: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(a bare remote `seed` is pushed to, a clone of it)."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git(seed, "remote", "add", "origin", str(remote))
    git(seed, "push", "-q", "origin", "main")
    ours = tmp_path / "ours"
    subprocess.run(["git", "clone", "-q", str(remote), str(ours)], check=True)
    return remote, ours


def clone_behind_origin(
    seed: Path, tmp_path: Path, *, their_subject: str, their_files: dict[str, str] | None = None
) -> tuple[Path, Path]:
    """(the bare remote, our clone): `seed` is pushed, cloned, then commits `their_subject` (writing
    `their_files`, else a CHANGELOG.md line) and pushes again."""
    remote, ours = cloned(seed, tmp_path)
    for name, text in (their_files or {"CHANGELOG.md": f"{their_subject}\n"}).items():
        (seed / name).parent.mkdir(parents=True, exist_ok=True)
        (seed / name).write_text(text)
        git(seed, "add", name)
    git(seed, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", their_subject)
    git(seed, "push", "-q", "origin", "main")
    return remote, ours
