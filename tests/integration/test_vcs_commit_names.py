"""Committing generated files whose names git would quote: non-ASCII letters, spaces, quotes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reconciler.vcs.commit import changed_paths, commit_paths, ignored_paths

NAMES = ["leaderboards/résultats.md", "leaderboards/two words.md", 'leaderboards/"quoted".md', "leaderboards/表.svg"]


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README.md").write_text("x\n")
    git(tmp_path, "add", "README.md")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    (tmp_path / "leaderboards").mkdir()
    return tmp_path


def test_names_git_would_quote_are_found_and_committed(repo: Path) -> None:
    for name in NAMES:
        (repo / name).write_text("board\n")
    assert changed_paths(repo, NAMES) == sorted(NAMES)
    done = commit_paths(repo, NAMES, "m", author_name="r", author_email="r@x")
    assert done.sha is not None and sorted(done.paths) == sorted(NAMES)
    committed = [n for n in git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0") if n]
    assert sorted(committed) == sorted(["README.md", *NAMES])


@pytest.mark.parametrize("staged", [True, False])
def test_a_renamed_board_is_found_under_its_new_name_only(repo: Path, staged: bool) -> None:
    (repo / "leaderboards" / "board.md").write_text("board\n")
    git(repo, "add", "leaderboards/board.md")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "board")
    new = "leaderboards/résultats.md"
    if staged:
        git(repo, "mv", "leaderboards/board.md", new)  # "R " in the index
    else:
        (repo / "leaderboards" / "board.md").rename(repo / new)
        git(repo, "add", "-N", new)  # " R" in the work tree
    # both names asked about, as when a board moves: git pairs them as one rename
    assert changed_paths(repo, ["leaderboards/board.md", new]) == [new]


def test_an_ignored_name_git_would_quote_is_reported_as_ignored(repo: Path) -> None:
    (repo / ".gitignore").write_text("leaderboards/résultats.md\n")
    (repo / "leaderboards" / "résultats.md").write_text("board\n")
    assert ignored_paths(repo, ["leaderboards/résultats.md"]) == ["leaderboards/résultats.md"]


@pytest.mark.parametrize("name", ["*", "leaderboards/*.md", "leaderboards/[ab].md", ":(glob)**", ":/README.md"])
def test_a_name_git_would_read_as_a_pattern_commits_that_file_alone(repo: Path, name: str) -> None:
    """Another file the pattern would match (an untracked note, an edit of the user's) stays out."""
    (repo / "README.md").write_text("the user's uncommitted edit\n")
    for other in ("leaderboards/a.md", "notes.txt", ".env"):
        (repo / other).write_text("not reconciler's\n")
    target = repo / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("board\n")
    assert changed_paths(repo, [name]) == [name]
    done = commit_paths(repo, [name], "m", author_name="r", author_email="r@x")
    assert done.paths == (name,)
    committed = [n for n in git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").split("\0") if n]
    assert sorted(committed) == sorted(["README.md", name])
    assert git(repo, "show", "HEAD:README.md") == "x\n"
