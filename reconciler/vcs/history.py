"""Where the checkout stands in its history: the commit a run is submitted from, and whether a
run's commit is one this checkout has (a checkout that lacks it may be behind: engine/apply.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from .commit import GitError
from .review import fetch_base_commit, has_commit


def head_commit(root: Path) -> str | None:
    """The commit HEAD names in the repository holding `root`; None outside one, before its
    first commit, or without git. (`git rev-parse`, not GitPython: every apply that submits asks,
    and GitPython's import alone costs about 40 ms.)"""
    try:
        found = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "HEAD^{commit}"],
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except OSError:  # no git executable, or no such folder
        return None
    sha = found.stdout.strip()
    return sha if found.returncode == 0 and sha else None


def has_commit_in_history(root: Path, sha: str) -> bool | None:
    """Whether commit `sha` is HEAD or one of its ancestors in the repository holding `root`
    (fetched from origin first when this clone lacks it or is shallow: `fetch_base_commit`);
    None when git cannot say: no repository, or a commit neither here nor on origin (another
    clone's, never pushed)."""
    try:
        import git
    except ImportError:  # GitPython finds no git executable
        return None
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        try:
            fetch_base_commit(root, sha)
        except GitError:
            if not has_commit(repo, sha):
                return None
        try:
            repo.git.merge_base("--is-ancestor", sha, "HEAD")
        except git.GitCommandError as exc:
            return False if exc.status == 1 else None
        return True
    finally:
        repo.close()
