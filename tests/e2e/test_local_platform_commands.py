"""The workspace commands work against the embedded platform (`platform = "local"`), as a new user runs them
right after `reconciler init`, not only against `reconciler platform serve`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "GITHUB_")) and k != "CI"}
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def fresh(tmp_path: Path) -> Path:
    done = run(tmp_path, "init", "evals")
    assert done.returncode == 0, done.stderr
    return tmp_path / "evals"


@pytest.mark.parametrize(
    ("args", "shows"),
    [
        (("benchmarks",), "terminal-bench-2-1"),
        (("benchmarks", "terminal-bench-2-1"), "terminus-2"),
        (("runs",), ""),
        (("secrets",), "OPENAI_API_KEY"),
    ],
)
def test_workspace_commands_work_on_the_embedded_local_platform(fresh: Path, args: tuple[str, ...], shows: str) -> None:
    done = run(fresh, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    assert shows in done.stdout
    assert "not available" not in done.stderr


def test_downloads_never_write_through_a_symlinked_outputs_folder(fresh: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (fresh / ".osmosis").mkdir()
    (fresh / ".osmosis" / "benchmarks").symlink_to(outside)
    done = run(fresh, "reconcile", "--wait")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refusing to write .osmosis/benchmarks: .osmosis/benchmarks is a symlink" in done.stdout + done.stderr
    assert list(outside.iterdir()) == []
