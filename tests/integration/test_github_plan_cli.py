"""`reconciler plan --github-comment` as a process, talking to the fake GitHub API."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.github.comments import PLAN_MARKER
from tests.github_fake import BOT, FakeGitHub

pytestmark = pytest.mark.slow
RECONCILER = str(Path(sys.executable).with_name("reconciler"))
REPO, PR = "acme/evals", 12

BAD_SPEC = """[experiment]
benchmark = "terminal-bench-2-1"

[[agents]]
harness = "codex"

[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "openai-key"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "specs/runs").mkdir(parents=True)
    (root / "reconciler.toml").write_text('platform = "local"\n')
    (root / "specs/runs/bad.toml").write_text(BAD_SPEC)
    return root


def actions_env(tmp_path: Path, fake: FakeGitHub, *, head_repo: str = REPO) -> dict[str, str]:
    event = tmp_path / "event.json"
    base = {"ref": "main", "repo": {"full_name": REPO}}
    head = {"sha": "f" * 40, "repo": {"full_name": head_repo}}
    event.write_text(json.dumps({"pull_request": {"number": PR, "base": base, "head": head}}))
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_")) and k != "CI"
    }
    return inherited | {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_API_URL": fake.url,
        "GITHUB_TOKEN": fake.token,
        "GITHUB_RUN_ID": "7",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }


def plan(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [RECONCILER, "plan", "--github-comment", *args]
    return subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_invalid_specs_print_annotations_and_exit_1(project: Path, tmp_path: Path, github: FakeGitHub) -> None:
    done = plan(project, actions_env(tmp_path, github))
    assert done.returncode == 1
    assert "::error file=specs/runs/bad.toml,line=10," in done.stdout


def test_invalid_specs_make_the_comment_say_validation_failed(
    project: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    plan(project, actions_env(tmp_path, github))
    [comment] = github.comments(REPO, PR)
    body = str(comment["body"])
    assert body.startswith(PLAN_MARKER)
    assert "validation failed" in body
    assert "`specs/runs/bad.toml:10:" in body


def test_invalid_specs_update_an_earlier_plan_comment(project: Path, tmp_path: Path, github: FakeGitHub) -> None:
    earlier = github.add_comment(REPO, PR, f"{PLAN_MARKER}\n### reconciler plan\n\nold plan\n", BOT)
    plan(project, actions_env(tmp_path, github))
    assert [c["id"] for c in github.comments(REPO, PR)] == [earlier["id"]]
    assert "validation failed" in str(earlier["body"])


def test_invalid_specs_set_exitcode_1_in_the_outputs(project: Path, tmp_path: Path, github: FakeGitHub) -> None:
    plan(project, actions_env(tmp_path, github))
    output = (tmp_path / "output").read_text()
    assert "exitcode<<" in output and "\n1\n" in output.split("exitcode<<", 1)[1]
    assert "validation failed" in (tmp_path / "summary.md").read_text()


def test_the_token_never_appears_in_output(project: Path, tmp_path: Path, github: FakeGitHub) -> None:
    done = plan(project, actions_env(tmp_path, github))
    for text in (done.stdout, done.stderr, (tmp_path / "summary.md").read_text(), (tmp_path / "output").read_text()):
        assert github.token not in text


@pytest.mark.parametrize("name", ["GITHUB_REPOSITORY", "GITHUB_EVENT_PATH", "GITHUB_TOKEN"])
def test_a_missing_github_variable_is_named(project: Path, tmp_path: Path, github: FakeGitHub, name: str) -> None:
    env = actions_env(tmp_path, github)
    del env[name]
    done = plan(project, env)
    assert done.returncode == 1
    assert f"error: {name} is not set; --github-comment needs it" in done.stderr
    assert github.requests == []


def test_a_board_the_pull_request_breaks_is_said_in_a_new_plan_comment(tmp_path: Path, github: FakeGitHub) -> None:
    """Unlike a platform failure, which only updates a comment already there: the pull request
    pointed a chart at a file reconciler never wrote, so apply would stop on it."""
    root = tmp_path / "repo"
    shutil.copytree(Path(__file__).resolve().parents[2] / "specs", root / "specs")
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "gh"\n')
    plain = {k: v for k, v in actions_env(tmp_path, github).items() if not k.startswith("GITHUB_") and k != "CI"}
    first = subprocess.run([RECONCILER, "apply", "--auto-approve"], cwd=root, env=plain, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr  # the platform has runs now: boards render, not kept
    (root / "NOTES.md").write_text("# Our notes\n")
    board = root / "specs/benchmarks/terminal-bench-2-1.toml"
    board.write_text(board.read_text().replace('chart = "leaderboards/terminal-bench-2-1.svg"', 'chart = "NOTES.md"'))

    done = plan(root, actions_env(tmp_path, github))

    assert done.returncode == 1
    [comment] = github.comments(REPO, PR)
    body = str(comment["body"])
    assert body.startswith(PLAN_MARKER) and "reconciler plan: failed" in body
    assert "NOTES.md exists and was not generated by reconciler" in body and "apply would stop here" in body


def _example_project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(Path(__file__).resolve().parents[2] / "specs", root / "specs")
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "gh"\n')
    return root


def test_a_fork_pull_request_with_a_read_only_token_keeps_the_plans_exit_code(
    tmp_path: Path, github: FakeGitHub
) -> None:
    # GitHub: "Pull requests from public forks ... will receive a read token regardless of these settings"
    github.read_only = True
    done = plan(
        _example_project(tmp_path), actions_env(tmp_path, github, head_repo="someone/evals"), "--detailed-exitcode"
    )
    assert done.returncode == 2, done.stderr  # changes to apply, as the plan says; not a failed check
    assert "comes from a fork" in done.stderr and "Traceback" not in done.stderr
    assert github.comments(REPO, PR) == [] and "submit" in (tmp_path / "summary.md").read_text()
    output = (tmp_path / "output").read_text()
    assert "\n2\n" in output.split("exitcode<<", 1)[1]


def test_a_read_only_token_on_the_repositorys_own_pull_request_still_fails(tmp_path: Path, github: FakeGitHub) -> None:
    github.read_only = True  # the workflow forgot `pull-requests: write`: that is for its authors to fix
    done = plan(_example_project(tmp_path), actions_env(tmp_path, github), "--detailed-exitcode")
    assert done.returncode == 1 and "pull-requests: write" in done.stderr


def test_on_pull_request_target_a_forks_403_still_fails(tmp_path: Path, github: FakeGitHub) -> None:
    # pull_request_target runs with the base repository's token, which may write: a 403 is a real problem
    github.read_only = True
    env = actions_env(tmp_path, github, head_repo="someone/evals") | {"GITHUB_EVENT_NAME": "pull_request_target"}
    done = plan(_example_project(tmp_path), env, "--detailed-exitcode")
    assert done.returncode == 1 and "pull-requests: write" in done.stderr


def _platform_project(tmp_path: Path) -> Path:
    root = _example_project(tmp_path)
    # a real platform, by URL: nothing listens there, and nothing may be asked of it without a token
    (root / "reconciler.toml").write_text('platform = "http://127.0.0.1:9"\nworkspace = "gh"\n')
    return root


def test_a_fork_pull_request_gets_no_token_and_a_warning_instead_of_a_failed_check(
    tmp_path: Path, github: FakeGitHub
) -> None:
    # GitHub: "With the exception of GITHUB_TOKEN, secrets are not passed to the runner when a
    # workflow is triggered from a forked repository."
    env = actions_env(tmp_path, github, head_repo="someone/evals") | {"OSMOSIS_TOKEN": ""}
    done = plan(_platform_project(tmp_path), env, "--detailed-exitcode")
    assert done.returncode == 0, done.stderr
    assert "::warning title=reconciler plan::this pull request comes from a fork" in done.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "reconciler plan: not computed" in summary and "the specs are valid" in summary


def test_a_fork_pull_request_with_invalid_specs_still_fails_without_a_token(tmp_path: Path, github: FakeGitHub) -> None:
    root = _platform_project(tmp_path)
    (root / "specs/runs/broken.toml").write_text("[experiment]\nbenchmark = 3\n")
    env = actions_env(tmp_path, github, head_repo="someone/evals") | {"OSMOSIS_TOKEN": ""}
    done = plan(root, env, "--detailed-exitcode")
    assert done.returncode == 1 and "broken.toml" in done.stdout


def test_the_repositorys_own_pull_request_without_a_token_still_fails(tmp_path: Path, github: FakeGitHub) -> None:
    done = plan(_platform_project(tmp_path), actions_env(tmp_path, github) | {"OSMOSIS_TOKEN": ""})
    assert done.returncode == 1 and "no token for the Osmosis platform" in done.stderr
