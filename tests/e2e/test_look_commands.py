"""`benchmarks`, `runs` and `logs` end to end: the CLI as a subprocess against `reconciler platform serve`."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.served_platform import ServedPlatform, serve_platform
from tests.e2e.workspace_repo import WorkspaceRepo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    # speed 1: a run stays active for the whole test, so there is something to follow
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=1.0) as served:
        yield served


@pytest.fixture
def repo(tmp_path: Path, platform: ServedPlatform) -> WorkspaceRepo:
    return WorkspaceRepo(tmp_path / "repo", platform)


def test_benchmarks_lists_sync_state_task_count_requirements_and_parity_set(repo: WorkspaceRepo) -> None:
    found = {b["key"]: b for b in repo.json("benchmarks")["benchmarks"]}
    assert found["hle"]["parity_set"] == "parity"
    assert found["hle"]["harness"] == "none" and found["hle"]["requires_judge_api_key"] is True
    assert found["terminal-bench-2-1"]["default_harness"] == "terminus-2"
    assert found["harbor/swe-smith-mini@1"]["harness"] == "required"
    assert found["harbor/terminal-bench-pro@1.0"]["sync_status"] == "syncing"
    assert found["harbor/aider-polyglot@2"]["sync_error"]
    text = repo.cli("benchmarks", check=True).stdout
    assert "syncing 96/240" in text and "unavailable" in text and "sync failed" in text
    # platform-benchmarks.md, Tasks: "Empty while the task list syncs, `unavailable` if the sync failed."
    (syncing,) = [line for line in text.splitlines() if line.startswith("harbor/terminal-bench-pro@1.0")]
    assert syncing.count("240") == 1  # only in "96/240": no task count while it syncs


def test_benchmarks_key_shows_categories_tasks_with_difficulty_and_judge_default(repo: WorkspaceRepo) -> None:
    """cli-benchmark-runs.md: "Every task in the JSON manifest includes `difficulty`, whose value is `easy`,
    `medium`, `hard`, or `null`. A `null` value means the benchmark source did not provide a difficulty; do not
    infer one."
    """
    hle = repo.json("benchmarks", "hle")["benchmark"]
    assert sum(c["task_count"] for c in hle["categories"]) == len(hle["tasks"]) == hle["task_count"]
    assert hle["judge_model_default"] and hle["required_secret_names"] == ["HF_TOKEN"]
    tb = repo.json("benchmarks", "terminal-bench-2-1")["benchmark"]
    assert {t["difficulty"] for t in tb["tasks"]} <= {"easy", "medium", "hard", None}
    text = repo.cli("benchmarks", "terminal-bench-2-1", check=True).stdout
    assert "terminal-bench/git-multibranch" in text and "default terminus-2" in text


def test_benchmarks_of_an_unknown_key_is_one_clear_error(repo: WorkspaceRepo) -> None:
    done = repo.cli("benchmarks", "no-such-benchmark")
    assert done.returncode == 1 and "no-such-benchmark" in done.stderr
    assert "reconciler benchmarks" in done.stderr and "Traceback" not in done.stderr


def test_runs_lists_owned_and_unmanaged_runs_of_the_workspace(repo: WorkspaceRepo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    stranger = repo.submit_directly()
    owners = {r["name"]: r["owner"] for r in repo.json("runs")["runs"]}
    assert owners[stranger["name"]] == "unmanaged"
    assert sorted(owners.values()) == ["spec tb-smoke", "unmanaged"]


def test_status_shows_a_row_for_each_unmanaged_run_and_plan_counts_them(repo: WorkspaceRepo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    stranger = repo.submit_directly()
    rows = repo.json("status", "--target", "tb-smoke")["rows"]
    assert [r["run_id"] for r in rows if r["sync"] == "unmanaged"] == [stranger["id"]]
    plan = repo.cli("plan", "--target", "tb-smoke", check=True).stdout
    assert "(1 runs on these benchmarks are not owned by this repository; never touched)" in plan


def test_runs_of_a_spec_or_a_run_scores_every_agent(repo: WorkspaceRepo) -> None:
    """cli-benchmark-runs.md: "`runs info` [...] scores every agent the way the run page does: rank, pass@1 with
    its confidence interval, the deepest pass@k, and per-task cost, time, and tokens."
    """
    repo.cli("apply", "--auto-approve", "--target", "tb-compare", check=True)
    (report,) = repo.json("runs", "tb-compare")["runs"]
    assert report["owner"] == "spec tb-compare"
    assert [a["model"] for a in report["agent_scores"]] == ["gpt-5.2", "claude-sonnet-4"]
    for agent in report["agent_scores"]:
        assert set(agent) >= {"rank", "pass_at_1", "deepest_k", "pass_at_k", "cost_per_task_usd", "tokens_per_task"}
    # agents are numbered from 1 on screen, as the run's logs name them ("Agent 1")
    text = repo.cli("runs", "tb-compare", check=True).stdout
    numbers = {line.split()[3]: line.split()[1] for line in text.splitlines() if "gpt-5.2" in line or "sonnet" in line}
    assert numbers == {"gpt-5.2": "1", "claude-sonnet-4": "2"}, text
    stranger = repo.submit_directly()
    (other,) = repo.json("runs", stranger["name"])["runs"]
    assert other["owner"] == "unmanaged" and other["id"] == stranger["id"]


def test_runs_of_an_unknown_name_says_where_to_look(repo: WorkspaceRepo) -> None:
    done = repo.cli("runs", "no-such-run")
    assert done.returncode == 64 and "no-such-run" in done.stderr and "reconciler runs" in done.stderr


def test_logs_pages_back_with_the_cursor_it_prints(repo: WorkspaceRepo) -> None:
    """cli-benchmark-runs.md: "Logs are returned oldest first within each page; pass the JSON response's
    `next_cursor` to page further back."
    """
    run = repo.submit_directly()
    repo.stop_directly(run["id"])  # a second entry: submitted, then stopped
    first = repo.json("logs", run["name"], "--limit", "1")
    assert len(first["logs"]) == 1 and first["next_cursor"]
    older = repo.json("logs", run["name"], "--limit", "1", "--cursor", first["next_cursor"])
    assert older["logs"] and older["logs"][0] != first["logs"][0]
    assert older["logs"][0]["timestamp"] <= first["logs"][0]["timestamp"]


def test_logs_follow_ends_when_the_run_is_stopped(repo: WorkspaceRepo) -> None:
    run = repo.submit_directly()
    follower = subprocess.Popen(
        [sys.executable, "-m", "reconciler.cli", "logs", run["name"], "--follow", "--interval", "0.1"],
        cwd=repo.root, env=repo.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert follower.stdout is not None
    first_line = follower.stdout.readline()  # the backlog is printed before the run is stopped
    repo.stop_directly(run["id"])
    out, err = follower.communicate(timeout=60)
    assert follower.returncode == 0, err
    assert first_line and "stopped" in (first_line + out).lower()
    assert f"{run['name']} is stopped" in err


def test_logs_follow_interrupted_exits_130_with_one_line(repo: WorkspaceRepo) -> None:
    run = repo.submit_directly()
    follower = subprocess.Popen(
        [sys.executable, "-m", "reconciler.cli", "logs", run["name"], "--follow", "--interval", "0.1"],
        cwd=repo.root, env=repo.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert follower.stdout is not None
    follower.stdout.readline()  # following has started
    follower.send_signal(signal.SIGINT)
    _, err = follower.communicate(timeout=60)
    assert follower.returncode == 130, err
    assert err.strip() == "interrupted"
