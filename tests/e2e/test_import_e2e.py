"""Adopting a run that was submitted without reconciler: `reconciler import`, `[reconcile] adopt`,
end to end against `reconciler platform serve`."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.served_platform import ServedPlatform, serve_platform
from tests.e2e.workspace_repo import SMOKE_PAYLOAD, WorkspaceRepo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    # speed 1: the adopted run stays active, so the plan after the import is a wait, not a download
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=1.0) as served:
        yield served


@pytest.fixture
def repo(tmp_path: Path, platform: ServedPlatform) -> WorkspaceRepo:
    repo = WorkspaceRepo(tmp_path / "repo", platform)
    for path in [*(repo.root / "specs" / "runs").iterdir(), *(repo.root / "specs" / "benchmarks").iterdir()]:
        path.unlink()  # only the imported spec: the others would plan paid submits and renders
    return repo


def kinds(plan: dict[str, Any]) -> list[tuple[str, str]]:
    return [(a["kind"], a["spec_id"]) for a in plan["actions"]]


def test_an_imported_run_is_owned_with_no_changes_even_after_losing_the_state_file(repo: WorkspaceRepo) -> None:
    run = repo.submit_directly()
    done = repo.cli("import", run["name"], "--id", "adopted-smoke", check=True)
    assert "specs/runs/adopted-smoke.toml" in done.stdout
    spec = tomllib.loads((repo.root / "specs/runs/adopted-smoke.toml").read_text())
    assert spec["reconcile"] == {"id": "adopted-smoke", "adopt": run["name"]}
    assert spec["agents"][0]["model"]["api_key_secret"] == "OPENAI_API_KEY"

    first = repo.cli("plan", "--detailed-exitcode")
    assert first.returncode == 0, first.stdout + first.stderr
    assert f"import   adopted-smoke [{run['name']}]" in first.stdout
    repo.cli("apply", "--auto-approve", check=True)  # records the adoption in the state file
    assert kinds(repo.json("plan")) == [("wait", "adopted-smoke")]

    (repo.root / ".reconciler" / "state.json").unlink()
    again = repo.json("plan")
    assert again["has_changes"] is False and again["paid_attempts"] == 0
    assert ("wait", "adopted-smoke") in kinds(again)
    assert len(repo.platform.runs(repo.workspace)) == 1  # never submitted again
    (row,) = repo.json("runs")["runs"]
    assert row["owner"] == "spec adopted-smoke"


def test_an_adopted_run_is_stopped_by_its_spec_like_any_owned_run(repo: WorkspaceRepo) -> None:
    run = repo.submit_directly()
    repo.cli("import", run["name"], "--id", "adopted-smoke", check=True)
    path = repo.root / "specs/runs/adopted-smoke.toml"
    path.write_text(path.read_text().replace('adopt = "', 'state = "stopped"\nadopt = "'))
    done = repo.cli("apply", "--auto-approve", check=True)
    assert f"stopped {run['name']}" in done.stdout
    assert [r["status"] for r in repo.platform.runs(repo.workspace)] == ["stopped"]


def test_adopting_a_run_whose_config_differs_is_blocked_with_the_fields_that_differ(repo: WorkspaceRepo) -> None:
    run = repo.submit_directly({**SMOKE_PAYLOAD, "execution_config": {"attempts_per_task": 2}})
    repo.cli("import", run["name"], "--id", "adopted-smoke", check=True)
    path = repo.root / "specs/runs/adopted-smoke.toml"
    path.write_text(path.read_text().replace("attempts_per_task = 2", "attempts_per_task = 1"))
    (action,) = repo.json("plan")["actions"]
    assert action["kind"] == "blocked" and action["blocked_by"] == "adopt"
    assert "execution.attempts_per_task: run has 2, spec has 1" in action["reason"]
    done = repo.cli("apply", "--auto-approve")
    assert len(repo.platform.runs(repo.workspace)) == 1, done.stdout  # nothing submitted in its place


def test_adopting_a_run_that_does_not_exist_is_blocked(repo: WorkspaceRepo) -> None:
    run = repo.submit_directly()
    repo.cli("import", run["name"], "--id", "adopted-smoke", check=True)
    path = repo.root / "specs/runs/adopted-smoke.toml"
    path.write_text(path.read_text().replace(f'adopt = "{run["name"]}"', 'adopt = "no-such-run"'))
    (action,) = repo.json("plan")["actions"]
    assert action["kind"] == "blocked" and "no such run" in action["reason"]


def test_importing_a_run_reconciler_submitted_is_refused(repo: WorkspaceRepo) -> None:
    (repo.root / "specs/runs/tb-smoke.toml").write_text(
        (Path(__file__).parents[2] / "specs/runs/tb-smoke.toml").read_text()
    )
    repo.cli("apply", "--auto-approve", check=True)
    (row,) = repo.json("runs")["runs"]
    done = repo.cli("import", row["name"])
    assert done.returncode == 64 and "already belongs to this repository's spec tb-smoke" in done.stderr
    assert sorted(p.name for p in (repo.root / "specs/runs").iterdir()) == ["tb-smoke.toml"]


def test_importing_an_unknown_run_is_a_clear_error_and_writes_nothing(repo: WorkspaceRepo) -> None:
    done = repo.cli("import", "no-such-run")
    assert done.returncode == 64 and "no run named 'no-such-run'" in done.stderr
    assert list((repo.root / "specs/runs").iterdir()) == []


def test_importing_under_a_benchmark_specs_id_is_refused_and_writes_nothing(repo: WorkspaceRepo) -> None:
    bench = "specs/benchmarks/terminal-bench-2-1.toml"
    (repo.root / bench).write_text((Path(__file__).parents[2] / bench).read_text())
    run = repo.submit_directly()
    done = repo.cli("import", run["name"], "--id", "benchmarks/terminal-bench-2-1")
    assert done.returncode == 64, done.stdout + done.stderr
    assert f"spec id 'benchmarks/terminal-bench-2-1' is also used by {bench}" in done.stderr
    assert "pick another with --id" in done.stderr
    assert list((repo.root / "specs/runs").iterdir()) == []
    assert repo.cli("validate").returncode == 0


def test_an_imported_spec_holds_secret_record_names_never_values(repo: WorkspaceRepo) -> None:
    payload = {**SMOKE_PAYLOAD, "secrets": {"required": ["EXTRA_TOKEN"], "provided": {"EXTRA_TOKEN": "tok-VALUE-123"}}}
    run = repo.submit_directly(payload)
    repo.cli("import", run["name"], "--id", "with-secret", check=True)
    text = (repo.root / "specs/runs/with-secret.toml").read_text()
    assert "tok-VALUE-123" not in text
    assert tomllib.loads(text)["secrets"] == {"required": ["EXTRA_TOKEN"]}
    kinds_after = kinds(repo.json("plan"))
    assert kinds_after[0] == ("import", "with-secret")


def test_import_never_writes_its_spec_through_a_symlink(repo: WorkspaceRepo, tmp_path: Path) -> None:
    run = repo.submit_directly()
    outside = tmp_path / "outside.toml"
    (repo.root / "specs/runs/adopted-smoke.toml").symlink_to(outside)  # dangling: nothing there yet
    done = repo.cli("import", run["name"], "--id", "adopted-smoke")
    assert done.returncode == 64 and "already exists" in done.stderr and "Traceback" not in done.stderr
    assert not outside.exists()
    (repo.root / "specs/runs/adopted-smoke.toml").unlink()
    (repo.root / "specs/runs").rename(repo.root / "elsewhere")
    (repo.root / "specs/runs").symlink_to(repo.root / "elsewhere", target_is_directory=True)
    done = repo.cli("import", run["name"], "--id", "adopted-smoke")
    assert done.returncode == 1 and "specs/runs is a symlink" in done.stderr
    assert list((repo.root / "elsewhere").iterdir()) == []


def test_an_adopted_spec_edited_after_apply_replaces_the_run(repo: WorkspaceRepo) -> None:
    run = repo.submit_directly()
    repo.cli("import", run["name"], "--id", "adopted-smoke", check=True)
    repo.cli("apply", "--auto-approve", check=True)  # records the adoption for this very run
    path = repo.root / "specs/runs/adopted-smoke.toml"
    path.write_text(path.read_text().replace("attempts_per_task = 1", "attempts_per_task = 2"))
    assert kinds(repo.json("plan")) == [("replace", "adopted-smoke")]


def test_an_adoption_record_added_by_hand_never_lets_a_config_edit_stop_the_run(repo: WorkspaceRepo) -> None:
    """An unmarked run whose config differs from the spec is not the spec's, whatever the state
    file's `adopted` says: an entry naming it (as an older reconciler wrote them, or with a made-up
    fingerprint) would otherwise have the plan replace it, stopping a run reconciler does not own."""
    run = repo.submit_directly({**SMOKE_PAYLOAD, "execution_config": {"attempts_per_task": 2}})
    repo.cli("import", run["name"], "--id", "adopted-smoke", check=True)
    path = repo.root / "specs/runs/adopted-smoke.toml"
    path.write_text(path.read_text().replace("attempts_per_task = 2", "attempts_per_task = 1"))
    state = repo.root / ".reconciler" / "state.json"
    for entry in ("adopted-smoke", "adopted-smoke@0123456789abcdef"):
        state.parent.mkdir(exist_ok=True)
        state.write_text(json.dumps({"version": 1, "adopted": {run["id"]: entry}}))
        (action,) = repo.json("plan")["actions"]
        assert action["kind"] == "blocked" and action["blocked_by"] == "adopt", action
        repo.cli("apply", "--auto-approve")
        assert [r["status"] for r in repo.platform.runs(repo.workspace)] in (["pending"], ["queued"], ["running"])
