"""The messages a new user meets in the first hour, read from the real command in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
RECONCILER = str(Path(sys.executable).with_name("reconciler"))


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_", "CI"))}
    return subprocess.run([RECONCILER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    """A directory with no reconciler.toml, no specs/ and no git repository above it."""
    work = tmp_path / "nothing-here"
    work.mkdir()
    return work


@pytest.mark.parametrize("command", ["validate", "plan", "apply", "status", "reconcile"])
def test_without_reconciler_toml_a_command_names_the_file_and_init(empty_dir: Path, command: str) -> None:
    done = run(empty_dir, command)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"error: no reconciler.toml in {empty_dir} or any parent directory, and no specs/ folder",
        "hint: run `reconciler init` to create reconciler.toml and example specs here, "
        "or run reconciler inside a repository that has one",
    ]
    assert list(empty_dir.iterdir()) == []


def test_a_specs_dir_named_in_reconciler_toml_that_is_missing_is_named(empty_dir: Path) -> None:
    (empty_dir / "reconciler.toml").write_text('platform = "local"\nspecs_dir = "evals"\n')
    done = run(empty_dir, "plan")
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == (
        f"error: the specs folder evals/ named by reconciler.toml does not exist in {empty_dir}"
    )
    assert "specs_dir" in done.stderr.splitlines()[1]


def test_validate_of_named_files_still_works_without_reconciler_toml(empty_dir: Path) -> None:
    (empty_dir / "broken.toml").write_text("experiment = [\n")
    done = run(empty_dir, "validate", "broken.toml")
    assert done.returncode == 1
    assert done.stdout.startswith("broken.toml:")
    assert "reconciler.toml" not in done.stdout + done.stderr
