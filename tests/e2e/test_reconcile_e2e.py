"""`reconciler reconcile` end to end in temp git repositories on the embedded local platform."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "GITHUB_"))}
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def make_repo(root: Path) -> Path:
    """A copy of this repository's desired state, committed, as a user's clone would have it."""
    root.mkdir(parents=True)
    shutil.copytree(REPO / "specs", root / "specs")
    shutil.copy(REPO / "reconciler.toml", root / "reconciler.toml")
    (root / ".gitignore").write_text(".osmosis/\n.reconciler/lock\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "specs")
    return root


def ranked_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if re.match(r"^\| \d+", line)]


def test_reconcile_wait_converges_downloads_and_writes_a_ranked_leaderboard(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    started = time.monotonic()
    done = cli(root, "reconcile", "--wait")
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    assert elapsed < 60
    board = (root / "leaderboards/terminal-bench-2-1.md").read_text()
    assert len(ranked_rows(board)) >= 2
    assert (root / "leaderboards/terminal-bench-2-1.svg").read_text().startswith("<svg")
    run_dirs = sorted(p.name for p in (root / ".osmosis/benchmarks").iterdir())
    assert len(run_dirs) == 3
    assert all((root / ".osmosis/benchmarks" / d / "results.csv").is_file() for d in run_dirs)


def test_a_second_reconcile_commit_makes_no_commit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    first = cli(root, "reconcile", "--wait", "--commit")
    assert first.returncode == 0, first.stdout + first.stderr
    after_first = git(root, "rev-parse", "HEAD")
    message = git(root, "log", "-1", "--format=%s%n%b")
    assert message.startswith("reconciler: update leaderboards")
    committed = git(root, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert set(committed) == {
        ".reconciler/state.json",
        "leaderboards/hle.md",
        "leaderboards/terminal-bench-2-1.md",
        "leaderboards/terminal-bench-2-1.svg",
    }
    second = cli(root, "reconcile", "--commit")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "nothing to commit" in second.stdout
    assert git(root, "rev-parse", "HEAD") == after_first


def test_commit_leaves_unrelated_staged_changes_alone(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "notes.md").write_text("work in progress\n")
    git(root, "add", "notes.md")
    assert cli(root, "reconcile", "--wait", "--commit").returncode == 0
    assert "notes.md" not in git(root, "show", "--name-only", "--format=", "HEAD")
    assert git(root, "diff", "--cached", "--name-only") == "notes.md"


def test_a_rejected_push_is_retried_after_rebasing(tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    seed = make_repo(tmp_path / "seed")
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    git(seed, "remote", "add", "origin", str(remote))
    git(seed, "push", "-q", "origin", "main")
    ours = tmp_path / "ours"
    subprocess.run(["git", "clone", "-q", str(remote), str(ours)], check=True)
    # someone else pushes first, so our push is rejected as non-fast-forward
    (seed / "CHANGELOG.md").write_text("unrelated\n")
    git(seed, "add", "CHANGELOG.md")
    git(seed, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "unrelated")
    git(seed, "push", "-q", "origin", "main")
    done = cli(ours, "reconcile", "--wait", "--commit", "--push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pushed (attempt 2)" in done.stdout
    log = git(remote, "log", "--format=%s", "main").splitlines()
    assert log[0].startswith("reconciler: update leaderboards") and "unrelated" in log
