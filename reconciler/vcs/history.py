"""Where the checkout stands in its history: the commit a run is submitted from, and whether the
checkout is behind a run's commit (engine/apply.py: such a checkout must not undo that run)."""

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


def is_behind(root: Path, sha: str) -> bool | None:
    """Whether the checkout holding `root` is behind commit `sha`: HEAD is one of its ancestors
    (and not `sha` itself). The commit is fetched from origin first when this clone lacks it, and a
    shallow clone is deepened until the two meet (`fetch_base_commit`). False for a commit HEAD
    has (a revert, an older run) and for one on another line of history (a branch, a squashed or
    rebased commit); None when git cannot say: no repository, or a commit neither here nor on
    origin (another clone's, never pushed)."""
    try:
        import git
    except ImportError:  # GitPython finds no git executable
        return None
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        if not repo.head.is_valid():  # no commit yet: nothing it could be behind
            return None
        try:
            fetch_base_commit(root, sha)
        except GitError:
            if not has_commit(repo, sha):
                return None
        try:
            if repo.head.commit.hexsha == sha:
                return False
            repo.git.merge_base("--is-ancestor", "HEAD", sha)
        except git.GitCommandError as exc:
            return False if exc.status == 1 else None
        except ValueError:  # no HEAD commit
            return None
        return True
    finally:
        repo.close()
