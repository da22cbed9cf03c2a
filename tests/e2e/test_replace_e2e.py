"""`apply --replace SPEC_ID` end to end against `reconciler platform serve`."""

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
    with serve_platform(tmp_path_factory.mktemp("platform")) as served:
        yield served


@pytest.fixture
def repo(tmp_path: Path, platform: ServedPlatform) -> WorkspaceRepo:
    return WorkspaceRepo(tmp_path / "repo", platform)


def smoke_runs(repo: WorkspaceRepo) -> list[dict[str, object]]:
    return [r for r in repo.platform.runs(repo.workspace) if str(r["spec"] or "").startswith("tb-smoke@")]


def test_replace_submits_a_stopped_specs_config_again_and_says_why_and_what_it_costs(repo: WorkspaceRepo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    (first,) = smoke_runs(repo)
    repo.stop_directly(str(first["id"]))
    assert repo.json("plan", "--target", "tb-smoke")["paid_attempts"] == 0  # never resubmitted on its own
    done = repo.cli("apply", "--auto-approve", "--target", "tb-smoke", "--replace", "tb-smoke", check=True)
    assert f"replace requested: {first['name']} is stopped" in done.stdout and "= 1 attempts" in done.stdout
    runs = smoke_runs(repo)
    assert len(runs) == 2 and runs[0]["spec"] == first["spec"]  # the same config, once more
    assert {a["kind"] for a in repo.json("plan", "--target", "tb-smoke")["actions"]} == {"wait"}


def test_replace_of_an_active_run_stops_it_first(repo: WorkspaceRepo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    (first,) = smoke_runs(repo)
    done = repo.cli("apply", "--auto-approve", "--replace", "tb-smoke", check=True)
    assert f"replace requested: stop {first['name']}" in done.stdout
    statuses = sorted(str(r["status"]) for r in smoke_runs(repo))
    assert len(statuses) == 2 and "stopped" in statuses


def test_replace_of_an_unknown_spec_is_a_usage_error_and_changes_nothing(repo: WorkspaceRepo) -> None:
    done = repo.cli("apply", "--auto-approve", "--replace", "no-such-spec")
    assert done.returncode == 64 and "unknown --replace no-such-spec" in done.stderr and "tb-smoke" in done.stderr
    assert repo.platform.runs(repo.workspace) == []


def test_a_plan_saved_with_replace_applies_as_that_replace_and_only_once(repo: WorkspaceRepo, tmp_path: Path) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    assert len(smoke_runs(repo)) == 1
    saved = tmp_path / "plan.json"
    done = repo.cli("plan", "--target", "tb-smoke", "--replace", "tb-smoke", "--out", str(saved), check=True)
    assert "replace requested" in done.stdout
    assert "Next: `reconciler apply --target tb-smoke --replace tb-smoke`" in done.stdout
    repo.cli("apply", "--auto-approve", str(saved), check=True)
    assert len(smoke_runs(repo)) == 2
    again = repo.cli("apply", "--auto-approve", str(saved))
    assert again.returncode == 1 and "stale" in again.stderr
    assert len(smoke_runs(repo)) == 2


@pytest.fixture(scope="module")
def slow_stops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    # the platform's docs: "The run moves to `stopped` once the platform finishes cleaning up its
    # sandboxes." Here cleanup outlasts the test, so a stopped run still shows its status throughout
    with serve_platform(tmp_path_factory.mktemp("slow-stops"), extra=("--stop-cleanup", "3600")) as served:
        yield served


def test_replace_while_the_old_run_cleans_up_keeps_the_new_run(tmp_path: Path, slow_stops: ServedPlatform) -> None:
    repo = WorkspaceRepo(tmp_path / "repo", slow_stops)
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    (first,) = smoke_runs(repo)
    done = repo.cli("apply", "--auto-approve", "--target", "tb-smoke", "--replace", "tb-smoke", check=True)
    assert f"stopped {first['name']}; submitted" in done.stdout and "then stopped it" not in done.stdout
    runs = {str(r["id"]): str(r["status"]) for r in smoke_runs(repo)}
    (second,) = set(runs) - {str(first["id"])}
    assert runs[str(first["id"])] in ("pending", "queued", "running")  # asked to stop, still cleaning up
    assert runs[second] in ("pending", "queued", "running")
    # the next plan and apply, from this clone and from another machine's (no state file, a cache
    # of its own): the new run is the one kept and waited for
    other = WorkspaceRepo(tmp_path / "other", slow_stops)
    (other.root / "reconciler.toml").write_text((repo.root / "reconciler.toml").read_text())
    machines = [(repo, {}), (other, {"RECONCILER_CACHE_DIR": str(tmp_path / "other-cache")})]
    for where, env in machines:
        actions = json.loads(where.cli("plan", "--target", "tb-smoke", "--format", "json", env=env).stdout)["actions"]
        assert ("wait", second) in [(a["kind"], a["run_id"]) for a in actions]
        assert not [a for a in actions if a["kind"] == "stop" and a["run_id"] == second]
        where.cli("apply", "--auto-approve", "--target", "tb-smoke", env=env, check=True)
        assert {str(r["id"]): str(r["status"]) for r in smoke_runs(repo)}[second] in ("pending", "queued", "running")
