"""A checkout that is behind never undoes a newer change: two clones of one repository (one
owner) against one `reconciler platform serve`, the CLI as a subprocess, git with a real origin.

Each submit carries the commit its checkout stood on; a stop of a run from a commit the checkout
is behind (fetched from origin to tell) is refused, since that run's config is newer than the
checkout's specs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.served_platform import ServedPlatform, serve_platform
from tests.git_cli import git

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
LIVE = {"pending", "queued", "running"}
SPEC = "specs/runs/tb-smoke.toml"


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=1.0) as served:  # runs stay live
        yield served


class Clone:
    def __init__(self, root: Path, platform: ServedPlatform, workspace: str) -> None:
        self.root, self.platform, self.workspace = root, platform, workspace
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "GITHUB_REPOSITORY")}
        self.env = env | {
            "OSMOSIS_PLATFORM_URL": platform.url,
            "OSMOSIS_TOKEN": platform.token,
            "RECONCILER_CACHE_DIR": str(root.parent / f"cache-{root.name}"),  # a machine of its own
        }

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "reconciler.cli", *args],
            cwd=self.root, env=self.env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
        )  # fmt: skip

    def apply(self) -> subprocess.CompletedProcess[str]:
        return self.cli("apply", "--auto-approve", "--target", "tb-smoke")

    def edit_and_push(self, old: str, new: str, branch: str = "main") -> None:
        spec = self.root / SPEC
        spec.write_text(spec.read_text().replace(old, new))
        git(self.root, "commit", "-qam", f"tb-smoke: {new}")
        git(self.root, "push", "-q", "origin", f"HEAD:{branch}")

    def statuses(self) -> dict[str, str]:
        """run name -> status, of every tb-smoke run."""
        runs = self.platform.runs(self.workspace)
        return {str(r["name"]): str(r["status"]) for r in runs if str(r["spec"] or "").startswith("tb-smoke@")}


@pytest.fixture
def clones(tmp_path: Path, platform: ServedPlatform) -> tuple[Clone, Clone]:
    workspace = f"stale-{uuid.uuid4().hex[:8]}"
    seed = tmp_path / "seed"
    (seed / "specs/runs").mkdir(parents=True)
    shutil.copy(REPO / SPEC, seed / SPEC)
    (seed / "reconciler.toml").write_text(f'workspace = "{workspace}"\nowner = "acme/evals"\n')
    (seed / ".gitignore").write_text(".reconciler/\n.osmosis/\n")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", "origin.git")
    git(tmp_path, "init", "-q", "-b", "main", "seed")
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "specs")
    git(seed, "push", "-q", str(tmp_path / "origin.git"), "main")
    for name in ("laptop", "ci"):
        git(tmp_path, "clone", "-q", str(tmp_path / "origin.git"), name)
    return Clone(tmp_path / "laptop", platform, workspace), Clone(tmp_path / "ci", platform, workspace)


def test_a_checkout_that_is_behind_never_stops_the_run_of_a_newer_config(clones: tuple[Clone, Clone]) -> None:
    laptop, ci = clones
    assert ci.apply().returncode == 0
    ci.edit_and_push("max_retries = 0", "max_retries = 1")
    assert ci.apply().returncode == 0  # replaces the first run with one of the newer config
    newer = next(name for name, status in ci.statuses().items() if status in LIVE)

    # still on the first commit: to it, the newer run "runs a config this spec no longer has"
    plan = laptop.cli("plan", "--target", "tb-smoke", "--detailed-exitcode")
    assert plan.returncode == 3, plan.stdout + plan.stderr  # blocked, as apply would be: never "stop"
    assert "! blocked  tb-smoke" in plan.stdout and "which this checkout is behind" in plan.stdout
    done = laptop.apply()
    assert done.returncode == 3, done.stdout + done.stderr
    assert "git pull" in done.stdout
    assert ci.statuses()[newer] in LIVE

    git(laptop.root, "pull", "-q", "origin", "main")
    assert laptop.cli("plan", "--target", "tb-smoke", "--detailed-exitcode").returncode == 0  # a wait: in step


def test_a_checkout_that_has_the_commit_still_reverts_a_config(clones: tuple[Clone, Clone]) -> None:
    """Back to the first config on purpose: the revert's checkout has the newer run's commit."""
    _, ci = clones
    assert ci.apply().returncode == 0
    ci.edit_and_push("max_retries = 0", "max_retries = 1")
    assert ci.apply().returncode == 0
    newer = next(name for name, status in ci.statuses().items() if status in LIVE)
    ci.edit_and_push("max_retries = 1", "max_retries = 0")
    done = ci.apply()
    assert done.returncode == 0, done.stdout + done.stderr
    assert ci.statuses()[newer] not in LIVE


def test_a_run_from_a_commit_on_another_line_of_history_is_still_stopped(clones: tuple[Clone, Clone]) -> None:
    """A branch's commit that main moved past without merging (a squash, a rebase, an abandoned
    branch): main is not behind it, so its specs decide, as before."""
    laptop, ci = clones
    git(laptop.root, "switch", "-q", "-c", "experiment")
    laptop.edit_and_push("max_retries = 0", "max_retries = 1", branch="experiment")
    assert laptop.apply().returncode == 0  # a run of the branch's config, from the branch's commit
    branch_run = next(name for name, status in ci.statuses().items() if status in LIVE)
    ci.edit_and_push("max_retries = 0", "max_retries = 2")  # main moves on without the branch
    done = ci.apply()  # replaces the branch's run: main's commit is not behind the branch's
    assert done.returncode == 0, done.stdout + done.stderr
    assert ci.statuses()[branch_run] not in LIVE
