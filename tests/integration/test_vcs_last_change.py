"""Which merge asked for a spec's run: the newest first-parent commit that changed its file."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reconciler.vcs.commit import last_change


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def test_the_merge_commit_is_named_not_the_branch_commit_inside_it(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README.md").write_text("x\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    git(tmp_path, "checkout", "-qb", "topic")
    spec = tmp_path / "proj" / "specs" / "a.toml"  # a project in a folder of the repository
    spec.parent.mkdir(parents=True)
    spec.write_text("a = 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "add a")
    git(tmp_path, "checkout", "-q", "main")
    git(tmp_path, "merge", "-q", "--no-ff", "topic", "-m", "merge topic")
    merge = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "README.md").write_text("y\n")
    git(tmp_path, "commit", "-qam", "later, unrelated")
    assert last_change(tmp_path / "proj", str(spec), git(tmp_path, "rev-parse", "HEAD")) == merge


def test_outside_a_repository_there_is_no_answer_and_no_error(tmp_path: Path) -> None:
    assert last_change(tmp_path, str(tmp_path / "a.toml"), "HEAD") is None
