"""A repository anywhere under a dot-directory (~/.cache/x/repo, .worktrees/a) finds its specs:
only path parts below the specs folder hide a file."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from reconciler.specs.loader import discover
from tests.local_cli import cli

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture(params=[".hidden/repo", ".cache/x/repo", ".worktrees/a"])
def root(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    root = tmp_path / str(request.param)
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "hidden"\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_validate_finds_every_spec_of_a_repository_under_a_dot_directory(root: Path) -> None:
    done = cli(root, "validate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no spec files found" not in done.stdout + done.stderr
    assert "5 specs valid" in done.stdout


def test_plan_submits_the_specs_of_a_repository_under_a_dot_directory(root: Path) -> None:
    done = cli(root, "plan", "--detailed-exitcode", "--target", "tb-smoke")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "submit   tb-smoke" in done.stdout


def test_dot_parts_below_the_specs_folder_still_hide_a_file(tmp_path: Path) -> None:
    specs = tmp_path / ".hidden" / "repo" / "specs"
    for rel in ["runs/a.toml", "runs/.draft/b.toml", ".archive/c.toml", "runs/.d.toml"]:
        (specs / rel).parent.mkdir(parents=True, exist_ok=True)
        (specs / rel).write_text("")
    assert [p.relative_to(specs).as_posix() for p in discover([specs])] == ["runs/a.toml"]
