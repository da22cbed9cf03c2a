"""The Actions context: repository, pull request and base branch, from GITHUB_* variables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.github.event import GitHubEnvError, context_from_env, pull_request_from_env, pull_request_of

TOKEN = "ghs_secret_value_never_shown"


def pr_event(tmp_path: Path, **extra: object) -> Path:
    path = tmp_path / "event.json"
    event = {
        "action": "synchronize",
        "number": 7,
        "pull_request": {"number": 7, "base": {"ref": "main"}, "head": {"sha": "abc123"}},
        **extra,
    }
    path.write_text(json.dumps(event))
    return path


def actions_env(tmp_path: Path) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": "acme/evals",
        "GITHUB_EVENT_PATH": str(pr_event(tmp_path)),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_RUN_ID": "42",
    }


def test_context_reads_repository_pull_request_and_base(tmp_path: Path) -> None:
    ctx = context_from_env(actions_env(tmp_path))
    assert (ctx.repository, ctx.pull_request.number, ctx.base_ref) == ("acme/evals", 7, "origin/main")
    assert ctx.pull_request.head_sha == "abc123"


def test_api_url_defaults_to_github_com(tmp_path: Path) -> None:
    assert context_from_env(actions_env(tmp_path)).api_url == "https://api.github.com"


def test_api_url_comes_from_github_api_url(tmp_path: Path) -> None:
    env = actions_env(tmp_path) | {"GITHUB_API_URL": "https://ghe.example/api/v3"}
    assert context_from_env(env).api_url == "https://ghe.example/api/v3"


def test_run_url_points_at_the_workflow_run(tmp_path: Path) -> None:
    assert context_from_env(actions_env(tmp_path)).run_url == "https://github.com/acme/evals/actions/runs/42"


@pytest.mark.parametrize("name", ["GITHUB_REPOSITORY", "GITHUB_EVENT_PATH", "GITHUB_TOKEN"])
def test_a_missing_variable_is_named(tmp_path: Path, name: str) -> None:
    env = actions_env(tmp_path)
    del env[name]
    with pytest.raises(GitHubEnvError, match=f"^{name} is not set"):
        context_from_env(env)


def test_an_event_without_a_pull_request_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "push.json"
    path.write_text(json.dumps({"ref": "refs/heads/main"}))
    env = actions_env(tmp_path) | {"GITHUB_EVENT_PATH": str(path), "GITHUB_EVENT_NAME": "push"}
    with pytest.raises(GitHubEnvError, match="push is not about a pull request"):
        context_from_env(env)


def test_an_issue_comment_on_a_pull_request_names_it(tmp_path: Path) -> None:
    path = tmp_path / "comment.json"
    path.write_text(json.dumps({"issue": {"number": 9, "pull_request": {"url": "x"}}}))
    assert context_from_env(actions_env(tmp_path) | {"GITHUB_EVENT_PATH": str(path)}).pull_request.number == 9


def test_the_token_is_not_in_the_context_repr(tmp_path: Path) -> None:
    assert TOKEN not in repr(context_from_env(actions_env(tmp_path)))


def test_pull_request_from_env_is_none_outside_actions() -> None:
    assert pull_request_from_env({}) is None


@pytest.mark.parametrize("number", [True, False, 0, -3, 10**30, "12", 1.0, None])
def test_a_pull_request_number_that_github_never_sends_is_no_pull_request(number: object) -> None:
    assert pull_request_of({"pull_request": {"number": number, "base": {"ref": "main"}}}) is None
    assert pull_request_of({"issue": {"number": number, "pull_request": {}}}) is None


@pytest.mark.parametrize("ref", ["\ud800", "", "ma\nin", 5])
def test_a_base_branch_no_git_ref_could_be_is_left_unknown(ref: object) -> None:
    found = pull_request_of({"pull_request": {"number": 7, "base": {"ref": ref}}})
    assert found is not None and found.number == 7 and found.base_ref is None
