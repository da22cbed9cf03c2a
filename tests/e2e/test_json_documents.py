"""`--format json` on `wait`, `render`, `reconcile` and `init`: one versioned document on stdout each,
end to end against `reconciler platform serve`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.served_platform import ServedPlatform, serve_platform
from tests.e2e.workspace_repo import WorkspaceRepo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    # fast: the smoke run ends within the test, so `wait` returns
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=3000.0) as served:
        yield served


@pytest.fixture
def repo(tmp_path: Path, platform: ServedPlatform) -> WorkspaceRepo:
    return WorkspaceRepo(tmp_path / "repo", platform)


def test_wait_json_reports_each_specs_run_once_it_has_ended(repo: WorkspaceRepo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    doc = repo.json("wait", "--target", "tb-smoke", "--interval", "0.1")
    assert doc["kind"] == "wait"
    (run,) = [r for r in doc["runs"] if r["spec_id"] == "tb-smoke"]
    # the simulated platform fails a small share of runs at random: either way the run has ended
    assert run["status"] in ("finished", "failed") and run["expected"] == 1
    assert run["ingested"] == 1 or run["status"] == "failed"


def test_wait_says_what_the_runs_ended_as(repo: WorkspaceRepo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    done = repo.cli("wait", "--target", "tb-smoke", "--interval", "0.1", check=True)
    assert done.stdout.startswith("Nothing left to wait for. Runs of these specs: 1 "), done.stdout


def test_wait_with_nothing_submitted_says_so_and_what_to_run(repo: WorkspaceRepo) -> None:
    done = repo.cli("wait", "--target", "tb-compare", check=True)
    assert "No run of these specs on the platform yet" in done.stdout and "reconciler plan" in done.stdout


def test_render_json_lists_each_leaderboard_file_and_whether_it_changed(repo: WorkspaceRepo) -> None:
    doc = repo.json("render")
    states = {f["path"]: f["state"] for lb in doc["leaderboards"] for f in lb["files"]}
    assert states["leaderboards/hle.md"] == "updated" and (repo.root / "leaderboards/hle.md").is_file()
    again = repo.json("render", "--check")
    assert again["check"] is True
    assert {f["state"] for lb in again["leaderboards"] for f in lb["files"]} == {"unchanged"}


def test_reconcile_json_holds_the_plan_the_results_and_the_leaderboards(repo: WorkspaceRepo) -> None:
    doc = repo.json("reconcile", "--target", "tb-smoke")
    assert doc["kind"] == "reconcile" and doc["failures"] == [] and doc["commit"] is None
    assert [(r["action"]["kind"], r["ok"]) for r in doc["applied"]] == [("submit", True)]
    assert doc["plan"]["schema_version"] == 1 and doc["leaderboards"]


def test_init_json_lists_the_files_written_and_the_next_commands(tmp_path: Path, repo: WorkspaceRepo) -> None:
    target = tmp_path / "fresh"
    done = repo.cli("init", str(target), "--format", "json", check=True)
    doc = json.loads(done.stdout)
    assert doc["schema_version"] == 1 and doc["kind"] == "init"
    assert {f["path"] for f in doc["files"]} >= {"reconciler.toml", "specs/runs/tb-smoke.toml"}
    assert all((target / f["path"]).is_file() for f in doc["files"])
    assert "reconciler plan" in doc["next"]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("plan",), 1, "state file"),
        (("apply", "--auto-approve"), 1, "state file"),
        (("status",), 1, "state file"),
        (("plan", "--no-such-flag"), 64, "--no-such-flag"),
    ],
)
def test_a_failed_command_still_prints_one_json_document_naming_the_error(
    repo: WorkspaceRepo, args: tuple[str, ...], code: int, says: str
) -> None:
    (repo.root / ".reconciler").mkdir()
    (repo.root / ".reconciler/state.json").write_text("garbage\n")
    done = repo.cli(*args, "--format", "json")
    assert done.returncode == code
    doc = json.loads(done.stdout)
    assert (doc["schema_version"], doc["kind"], doc["error"]["exit_code"]) == (1, "error", code)
    assert says in doc["error"]["message"] and says in done.stderr and "Traceback" not in done.stderr
    assert repo.platform.runs(repo.workspace) == []
