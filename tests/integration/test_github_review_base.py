"""`plan --github-comment` shows the field diff even when the checkout has no origin/<base>:
the event's `pull_request.base.sha` is reviewed against, fetched first when missing (real git repositories)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.github.event import pull_request_of
from tests.github_fake import FakeGitHub

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
RECONCILER = str(Path(sys.executable).with_name("reconciler"))
REPO, PR = "acme/evals", 21
NEW_MODEL = "openai/gpt-5.2-mini"
DIFF_LINE = f"agents[0].model.model: openai/gpt-5.2 -> {NEW_MODEL}"


def git(root: Path, *args: str) -> str:
    env = os.environ | {"GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "d@x", "GIT_COMMITTER_NAME": "dev"}
    env |= {"GIT_COMMITTER_EMAIL": "d@x"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """main: the example specs, three commits deep; `change-model`: edits tb-smoke's model."""
    origin = tmp_path / "origin"
    shutil.copytree(ROOT / "specs", origin / "specs")
    (origin / "reconciler.toml").write_text('platform = "local"\nworkspace = "review"\n')
    (origin / ".gitignore").write_text(".osmosis/\n.reconciler/\n")
    git(tmp_path, "init", "-q", "-b", "main", str(origin))
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "specs")
    for n in range(2):
        (origin / f"notes-{n}.md").write_text(f"{n}\n")
        git(origin, "add", "-A")
        git(origin, "commit", "-q", "-m", f"notes {n}")
    git(origin, "checkout", "-q", "-b", "change-model")
    spec = origin / "specs/runs/tb-smoke.toml"
    spec.write_text(spec.read_text().replace('model = "openai/gpt-5.2"', f'model = "{NEW_MODEL}"'))
    git(origin, "commit", "-q", "-am", "try a smaller model")
    git(origin, "checkout", "-q", "main")
    return origin


def pull_request_env(tmp_path: Path, origin: Path, fake: FakeGitHub) -> dict[str, str]:
    event = tmp_path / "event.json"
    base = {"ref": "main", "sha": git(origin, "rev-parse", "main")}
    head = {"ref": "change-model", "sha": git(origin, "rev-parse", "change-model")}
    event.write_text(json.dumps({"pull_request": {"number": PR, "base": base, "head": head}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_"))}
    return env | {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_API_URL": fake.url,
        "GITHUB_TOKEN": fake.token,
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }


@pytest.mark.parametrize(
    "clone_args", [("--depth", "1"), ()], ids=["shallow-clone-of-the-branch", "full-clone-of-the-branch"]
)
def test_the_comment_has_the_field_diff_when_the_checkout_lacks_origin_base(
    tmp_path: Path, origin: Path, github: FakeGitHub, clone_args: tuple[str, ...]
) -> None:
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", *clone_args, "--single-branch", "--branch", "change-model", origin.as_uri(), "work")
    assert "origin/main" not in git(work, "branch", "-r")
    done = subprocess.run(
        [RECONCILER, "plan", "--github-comment"],
        cwd=work, env=pull_request_env(tmp_path, origin, github), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    [comment] = github.comments(REPO, PR)
    assert DIFF_LINE in str(comment["body"]), done.stdout + done.stderr
    assert "no spec review" not in done.stdout


def test_a_full_clone_stays_full_after_the_base_commit_is_fetched(
    tmp_path: Path, origin: Path, github: FakeGitHub
) -> None:
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", "--single-branch", "--branch", "change-model", origin.as_uri(), "work")
    env = pull_request_env(tmp_path, origin, github)
    subprocess.run([RECONCILER, "plan", "--github-comment"], cwd=work, env=env, capture_output=True, timeout=120)
    assert git(work, "rev-parse", "--is-shallow-repository") == "false"


@pytest.mark.parametrize(
    ("sha", "read"),
    [("a" * 40, "a" * 40), ("b" * 64, "b" * 64), ("main", None), ("--upload-pack=x", None), (7, None)],
)
def test_only_a_full_commit_id_is_taken_as_the_base_commit(sha: object, read: str | None) -> None:
    event = {"pull_request": {"number": PR, "base": {"ref": "main", "sha": sha}, "head": {"sha": "c" * 40}}}
    pr = pull_request_of(event)
    assert pr is not None and pr.base_sha == read
