"""Whose run is this, end to end: separate repositories and separate clones against one
`reconciler platform serve`, the CLI as a subprocess."""

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

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
LIVE = {"pending", "queued", "running"}


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    # speed 1: runs stay live for the whole test, so a wrongful stop would show
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=1.0) as served:
        yield served


def env_for(platform: ServedPlatform, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS", "GITHUB_REPOSITORY")}
    return env | {
        "OSMOSIS_PLATFORM_URL": platform.url,
        "OSMOSIS_TOKEN": platform.token,
        "RECONCILER_CACHE_DIR": str(cache),
    }


def make_repo(root: Path, workspace: str, origin: str) -> Path:
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "reconciler.toml").write_text(f'workspace = "{workspace}"\n[apply]\nmax_attempts_per_apply = 1000\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", origin], check=True)
    return root


def cli(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_two_repositories_sharing_a_workspace_never_touch_each_others_runs(
    platform: ServedPlatform, tmp_path: Path
) -> None:
    workspace = f"shared-{uuid.uuid4().hex[:8]}"
    env = env_for(platform, tmp_path / "cache")
    one = make_repo(tmp_path / "one", workspace, "https://github.com/acme/one.git")
    two = make_repo(tmp_path / "two", workspace, "git@github.com:acme/two.git")

    cli(one, env, "apply", "--auto-approve", "--target", "tb-smoke")
    cli(two, env, "apply", "--auto-approve", "--target", "tb-smoke")
    spec = two / "specs/runs/tb-smoke.toml"
    spec.write_text(spec.read_text().replace("max_retries = 0", "max_retries = 1"))
    cli(two, env, "apply", "--auto-approve", "--target", "tb-smoke")
    cli(one, env, "apply", "--auto-approve", "--target", "tb-smoke")

    runs = [r for r in platform.runs(workspace) if str(r["spec"]).startswith("tb-smoke@")]
    by_owner = {
        owner: sorted(str(r["status"]) for r in runs if r["owner"] == owner) for owner in ("acme/one", "acme/two")
    }
    # one's run was never stopped by two's replace; two replaced only its own
    assert len(by_owner["acme/one"]) == 1 and set(by_owner["acme/one"]) <= LIVE
    assert len(by_owner["acme/two"]) == 2 and "stopped" in by_owner["acme/two"]
    assert len(runs) == 3
