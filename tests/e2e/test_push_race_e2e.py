"""Two jobs at one merge race to push the state file: the push job that submitted the new run, and
another job at the same commit that only found the run. One shared origin, one served platform."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.engine.machine_cache import CACHE_DIR_ENV
from tests.e2e.remote_race import cloned
from tests.e2e.served_platform import ServedPlatform, serve_platform
from tests.git_cli import commit_all, git

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
SPEC = "specs/runs/tb-smoke.toml"


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[ServedPlatform]:
    with serve_platform(tmp_path / "platform") as served:  # 1 simulated second a second: runs stay running
        yield served


def make_repo(root: Path) -> Path:
    (root / "specs/runs").mkdir(parents=True)
    (root / "specs/benchmarks").mkdir()
    shutil.copy(REPO / SPEC, root / SPEC)
    shutil.copy(REPO / "specs/benchmarks/terminal-bench-2-1.toml", root / "specs/benchmarks")
    (root / "reconciler.toml").write_text('workspace = "race"\nowner = "acme/evals"\n')
    (root / ".gitignore").write_text(".osmosis/\n.reconciler/lock\n")
    commit_all(root)
    return root


def reconcile(root: Path, platform: ServedPlatform, push_of: str | None = None) -> subprocess.CompletedProcess[str]:
    """`reconcile --commit --push` in `root`: as the push job of commit `push_of`, else as a scheduled job."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "GITHUB_")) and k != "CI"}
    env |= {"OSMOSIS_PLATFORM_URL": platform.url, "OSMOSIS_TOKEN": platform.token}
    env[CACHE_DIR_ENV] = str(root.parent / f"{root.name}-cache")  # each job on a machine of its own
    if push_of is not None:
        env |= {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push", "GITHUB_SHA": push_of}
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "reconcile", "--commit", "--push"],
        cwd=root, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def pushed_record(remote: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(git(remote, "show", "main:.reconciler/state.json"))["specs"]["tb-smoke"]
    return record


def second_merge(tmp_path: Path, platform: ServedPlatform) -> tuple[Path, str, str]:
    """(origin, the second merge's commit, the run the first merge's job submitted): that run is
    credited to the first merge; the second changes the spec, and no job has run for it yet."""
    seed = make_repo(tmp_path / "seed")
    remote, _ = cloned(seed, tmp_path / "first")
    done = reconcile(seed, platform, push_of=git(seed, "rev-parse", "HEAD"))
    assert done.returncode == 0, done.stdout + done.stderr
    git(seed, "pull", "-q", "--rebase", "origin", "main")
    (seed / SPEC).write_text((seed / SPEC).read_text().replace("attempts_per_task = 1", "attempts_per_task = 2"))
    git(seed, "commit", "-qam", "two attempts")
    git(seed, "push", "-q", "origin", "main")
    return remote, git(seed, "rev-parse", "HEAD"), pushed_record(remote)["run_id"]


def test_a_job_that_only_found_the_new_run_keeps_the_credit_the_submitting_job_pushed(
    tmp_path: Path, platform: ServedPlatform
) -> None:
    remote, merge, first_run = second_merge(tmp_path, platform)
    push_job, other_job = tmp_path / "push-job", tmp_path / "other-job"
    for clone in (push_job, other_job):  # both at the second merge
        subprocess.run(["git", "clone", "-q", str(remote), str(clone)], check=True)
    submitted = reconcile(push_job, platform, push_of=merge)  # replaces the first run, credited to the merge
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    credited = pushed_record(remote)
    assert credited["commit"] == merge and credited["replaced"]["run_id"] == first_run

    found = reconcile(other_job, platform)  # finds the new run, rebuilds its record (no commit), loses the race
    assert found.returncode == 0, found.stdout + found.stderr
    assert "pushed (attempt 2)" in found.stdout
    assert pushed_record(remote) == credited
