"""The messages a new user meets in the first hour, read from the real command in a child process."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
RECONCILER = str(Path(sys.executable).with_name("reconciler"))
ROOT = Path(__file__).resolve().parents[2]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_", "CI"))}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RECONCILER, *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=300)


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    """A directory with no reconciler.toml, no specs/ and no git repository above it."""
    work = tmp_path / "nothing-here"
    work.mkdir()
    return work


@pytest.mark.parametrize("command", ["validate", "plan", "apply", "status", "wait", "render", "reconcile"])
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


@pytest.mark.parametrize(
    ("typed", "meant"), [("aply", "apply"), ("plann", "plan"), ("stat", "status"), ("rendr", "render")]
)
def test_a_mistyped_command_gets_did_you_mean(tmp_path: Path, typed: str, meant: str) -> None:
    done = run(tmp_path, typed)
    assert done.returncode == 64  # a usage error
    assert done.stderr.splitlines()[-1] == f"Error: No such command '{typed}'. Did you mean '{meant}'?"


def test_a_command_like_nothing_known_gets_no_suggestion(tmp_path: Path) -> None:
    done = run(tmp_path, "frobnicate")
    assert done.returncode == 64  # a usage error
    assert done.stderr.splitlines()[-1] == "Error: No such command 'frobnicate'."


def example_copy(tmp_path: Path) -> Path:
    """This repository's example specs, templates and committed leaderboards, as a fresh clone has them."""
    copy = tmp_path / "clone"
    copy.mkdir()
    shutil.copy(ROOT / "reconciler.toml", copy)
    for folder in ("specs", "templates", "leaderboards"):
        shutil.copytree(ROOT / folder, copy / folder)
    return copy


def read_until(fd: int, wanted: bytes, limit_s: float = 120.0) -> bytes:
    """Terminal output until `wanted` appears (or the child closes the terminal)."""
    seen = b""
    deadline = time.monotonic() + limit_s
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    return seen


def end_child(pid: int, fd: int) -> int:
    """The child's wait status; a child still running after 30 s is killed so the test cannot hang.

    The terminal closes a moment before the process has exited, longer on a busy machine."""
    deadline = time.monotonic() + 30.0
    done, status = os.waitpid(pid, os.WNOHANG)
    while done == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
        done, status = os.waitpid(pid, os.WNOHANG)
    if done == 0:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    os.close(fd)
    return status


def test_one_ctrl_c_at_the_apply_prompt_leaves_at_once_and_changes_nothing(tmp_path: Path) -> None:
    clone = example_copy(tmp_path)
    pid, fd = pty.fork()
    if pid == 0:  # the child: apply on a real terminal, as a user runs it
        os.chdir(clone)
        os.execve(RECONCILER, [RECONCILER, "apply"], clean_env())
    try:
        before = read_until(fd, b"Only 'yes' is accepted")
        assert b"Only 'yes' is accepted" in before
        os.write(fd, b"\x03")  # Ctrl-C: the terminal sends SIGINT to the foreground process
        after = read_until(fd, b"\n__never__", limit_s=30)
    finally:
        status = end_child(pid, fd)
    assert os.waitstatus_to_exitcode(status) == 130
    assert b"Apply cancelled; nothing was changed." in after
    assert b"Traceback" not in after
    plan = run(clone, "plan")
    assert "Plan: 3 submit, 2 render." in plan.stdout


def test_an_answer_other_than_yes_cancels_with_exit_0(tmp_path: Path) -> None:
    clone = example_copy(tmp_path)
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(clone)
        os.execve(RECONCILER, [RECONCILER, "apply"], clean_env())
    try:
        read_until(fd, b"Only 'yes' is accepted")
        os.write(fd, b"no\r")
        after = read_until(fd, b"\n__never__", limit_s=30)
    finally:
        status = end_child(pid, fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"Apply cancelled; nothing was changed." in after
    assert "Plan: 3 submit, 2 render." in run(clone, "plan").stdout


@pytest.fixture(scope="module")
def converged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example after `reconcile --wait`: every run finished, downloaded and rendered."""
    clone = example_copy(tmp_path_factory.mktemp("converged"))
    done = run(clone, "reconcile", "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    return clone


def test_reconcile_with_nothing_to_change_prints_nothing(converged: Path) -> None:
    done = run(converged, "reconcile")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_reconcile_verbose_lists_the_generated_files_that_did_not_change(converged: Path) -> None:
    done = run(converged, "reconcile", "--verbose")
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        "unchanged leaderboards/hle.md",
        "unchanged leaderboards/terminal-bench-2-1.md",
        "unchanged leaderboards/terminal-bench-2-1.svg",
    ]


def test_plan_lists_specs_in_sync_only_with_show_noop(converged: Path) -> None:
    plain = run(converged, "plan").stdout
    shown = run(converged, "plan", "--show-noop").stdout
    assert plain == "Plan: 3 noop.\nNo changes: the platform matches the specs.\n"
    assert shown.splitlines()[:3] == [
        f"  = noop     {spec} [{run_name}] — finished, in sync"
        for spec, run_name in (
            ("hle-parity", "daring-finch-1"),
            ("tb-compare", "bold-falcon-2"),
            ("tb-smoke", "daring-lemur-3"),
        )
    ]
    assert shown.endswith(plain)


FRESH_NOTE = (
    "Note: the local platform is fresh (no runs yet), so its leaderboards are empty; apply leaves the"
    " leaderboard files already in the repository as they are (`reconciler render` rewrites them)."
)


def test_the_plan_of_a_fresh_clone_says_the_local_platform_has_no_runs(tmp_path: Path) -> None:
    done = run(example_copy(tmp_path), "plan")
    assert done.returncode == 0
    assert done.stdout.splitlines()[-1] == FRESH_NOTE


def test_apply_on_a_fresh_clone_keeps_the_committed_leaderboards(tmp_path: Path) -> None:
    clone = example_copy(tmp_path)
    done = run(clone, "apply", "--auto-approve")
    assert done.returncode == 0, done.stderr
    assert FRESH_NOTE in done.stdout.splitlines()
    assert (
        "ok   render   benchmarks/hle: kept leaderboards/hle.md: the local platform has no runs yet"
        " (`reconciler render` rewrites them)"
    ) in done.stdout.splitlines()
    for board in ("hle.md", "terminal-bench-2-1.md", "terminal-bench-2-1.svg"):
        assert (clone / "leaderboards" / board).read_bytes() == (ROOT / "leaderboards" / board).read_bytes(), board


def test_render_on_a_fresh_clone_still_writes_what_the_platform_shows(tmp_path: Path) -> None:
    clone = example_copy(tmp_path)
    done = run(clone, "render")
    assert done.returncode == 0, done.stderr
    assert "No eligible runs yet" in (clone / "leaderboards/hle.md").read_text()


def test_apply_on_a_fresh_local_platform_still_writes_leaderboards_the_repository_lacks(tmp_path: Path) -> None:
    assert run(tmp_path, "init", "evals").returncode == 0
    done = run(tmp_path / "evals", "apply", "--auto-approve")
    assert done.returncode == 0, done.stderr
    assert "No eligible runs yet" in (tmp_path / "evals/leaderboards/terminal-bench-2-1.md").read_text()
