"""A pull request never sends OSMOSIS_TOKEN to a platform it names itself: `platform` in the pull
request's reconciler.toml must be the base branch's, or the plan is not computed (real git
repositories, `plan --github-comment` as a subprocess, a fake GitHub)."""

from __future__ import annotations

import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.served_platform import serve_platform
from tests.git_cli import commit_all, git
from tests.github_fake import FakeGitHub
from tests.integration.test_github_review_base import PR, RECONCILER, REPO, pull_request_env

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SPEC = "specs/runs/tb-smoke.toml"
TOKEN = "osmosis-secret-of-the-repository"


class Listener:
    """A TCP port that records every connection made to it (and answers nothing)."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.socket.getsockname()[1]}"
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.socket.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    heard = Listener()
    yield heard
    heard.socket.close()


def pull_request(tmp_path: Path, base_platform: str, pr_platform: str) -> Path:
    """main with `base_platform`; the pull request's branch `change-model` sets `pr_platform`. Its clone."""
    origin = tmp_path / "origin"
    (origin / "specs/runs").mkdir(parents=True)
    (origin / SPEC).write_text((ROOT / SPEC).read_text())
    (origin / "specs/benchmarks").mkdir()
    bench = "specs/benchmarks/terminal-bench-2-1.toml"
    (origin / bench).write_text((ROOT / bench).read_text())
    settings = 'workspace = "moved"\nowner = "acme/evals"\nplatform = "{}"\n'
    (origin / "reconciler.toml").write_text(settings.format(base_platform))
    (origin / ".gitignore").write_text(".osmosis/\n.reconciler/\n")
    commit_all(origin)
    git(origin, "checkout", "-q", "-b", "change-model")
    (origin / "reconciler.toml").write_text(settings.format(pr_platform))
    (origin / SPEC).write_text((origin / SPEC).read_text().replace("max_retries = 0", "max_retries = 1"))
    commit_all(origin, "a pull request")
    git(origin, "checkout", "-q", "main")
    git(tmp_path, "clone", "-q", "--branch", "change-model", origin.as_uri(), "work")
    return origin


def plan(tmp_path: Path, origin: Path, github: FakeGitHub) -> subprocess.CompletedProcess[str]:
    env = pull_request_env(tmp_path, origin, github) | {"OSMOSIS_TOKEN": TOKEN}
    env.pop("OSMOSIS_PLATFORM_URL", None)
    return subprocess.run(
        [RECONCILER, "plan", "--github-comment"],
        cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_pull_request_pointing_the_platform_elsewhere_sends_it_no_token(
    tmp_path: Path, github: FakeGitHub, listener: Listener
) -> None:
    origin = pull_request(tmp_path, "https://platform.osmosis.example", listener.url)
    done = plan(tmp_path, origin, github)
    assert done.returncode == 0, done.stdout + done.stderr
    assert listener.connections == 0
    [comment] = github.comments(REPO, PR)
    assert "not computed" in str(comment["body"]) and listener.url in str(comment["body"])
    assert "OSMOSIS_TOKEN only to the platform of the base branch" in done.stderr


def test_a_checkout_without_the_base_commit_sends_the_token_nowhere(
    tmp_path: Path, github: FakeGitHub, listener: Listener
) -> None:
    origin = pull_request(tmp_path, "https://platform.osmosis.example", listener.url)
    env = pull_request_env(tmp_path, origin, github) | {"OSMOSIS_TOKEN": TOKEN}
    shallow = tmp_path / "shallow"
    git(
        tmp_path,
        "clone",
        "-q",
        "--depth",
        "1",
        "--single-branch",
        "--branch",
        "change-model",
        origin.as_uri(),
        "shallow",
    )
    origin.rename(tmp_path / "gone")  # the base commit cannot be fetched either
    done = subprocess.run(
        [RECONCILER, "plan", "--github-comment"], cwd=shallow, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert listener.connections == 0
    assert "could not be read" in done.stderr and "fetch-depth: 0" in done.stderr


def test_a_pull_request_on_the_base_branchs_platform_is_planned(tmp_path: Path, github: FakeGitHub) -> None:
    with serve_platform(tmp_path / "platform") as served:
        origin = pull_request(tmp_path, served.url.upper(), served.url + "/")  # one platform, written two ways
        done = subprocess.run(
            [RECONCILER, "plan", "--github-comment"],
            cwd=tmp_path / "work",
            env=pull_request_env(tmp_path, origin, github) | {"OSMOSIS_TOKEN": served.token},
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [comment] = github.comments(REPO, PR)
    assert "paid submit(s)" in str(comment["body"]) and "not computed" not in str(comment["body"])
