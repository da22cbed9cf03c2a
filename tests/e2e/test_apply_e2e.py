"""Plan and apply end to end: the CLI as a subprocess in temp git repositories, against
`reconciler platform serve` on 127.0.0.1."""

from __future__ import annotations

import json
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


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    # speed 1: runs stay pending/running for the whole test, so replace and stop have something to act on
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=1.0) as served:
        yield served


CRASH_AFTER_SUBMIT = Path(__file__).with_name("crash_after_submit.py")  # reconciler, dying after a submit


class Repo:
    def __init__(self, root: Path, platform: ServedPlatform, workspace: str) -> None:
        self.root, self.platform, self.workspace = root, platform, workspace

    def cli(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        check: bool = False,
        script: Path | None = None,
        prefix: tuple[str, ...] = (),
    ) -> subprocess.CompletedProcess[str]:
        full_env = {
            **os.environ,
            "OSMOSIS_PLATFORM_URL": self.platform.url,
            "OSMOSIS_TOKEN": self.platform.token,
            **(env or {}),
        }
        full_env.pop("GITHUB_ACTIONS", None)
        done = subprocess.run(
            [*prefix, sys.executable, *([str(script)] if script else ["-m", "reconciler.cli"]), *args],
            cwd=self.root, env=full_env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    def spec_runs(self, spec_id: str) -> list[dict[str, object]]:
        return [r for r in self.platform.runs(self.workspace) if str(r["spec"] or "").startswith(f"{spec_id}@")]

    def plan_json(self, *args: str) -> dict[str, object]:
        done = self.cli("plan", "--format", "json", *args)
        assert done.returncode == 0, done.stderr
        doc: dict[str, object] = json.loads(done.stdout)
        return doc


@pytest.fixture
def repo(tmp_path: Path, platform: ServedPlatform) -> Repo:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "specs", root / "specs")
    workspace = f"e2e-{uuid.uuid4().hex[:8]}"
    # no origin: `owner` says this repository is alone in its workspace, so its runs may be stopped
    settings = f'workspace = "{workspace}"\nowner = "{workspace}"\n[apply]\nmax_attempts_per_apply = 1000\n'
    (root / "reconciler.toml").write_text(settings)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return Repo(root, platform, workspace)


def actions(doc: dict[str, object]) -> list[tuple[str, str]]:
    return [(a["kind"], a["spec_id"]) for a in doc["actions"]]  # type: ignore[attr-defined]


def test_after_apply_the_next_plan_has_no_changes(repo: Repo) -> None:
    repo.cli("apply", "--auto-approve", check=True)
    done = repo.cli("plan", "--detailed-exitcode")
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(repo.spec_runs("tb-smoke")) == 1


def test_a_plan_with_pending_changes_exits_2_with_detailed_exitcode(repo: Repo) -> None:
    assert repo.cli("plan", "--detailed-exitcode").returncode == 2
    assert repo.platform.runs(repo.workspace) == []


def test_apply_without_a_terminal_or_auto_approve_refuses_and_submits_nothing(repo: Repo) -> None:
    done = repo.cli("apply")
    assert done.returncode != 0 and "--auto-approve" in done.stderr
    assert repo.platform.runs(repo.workspace) == []


def test_editing_a_spec_replaces_its_run(repo: Repo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    (old,) = repo.spec_runs("tb-smoke")
    spec = repo.root / "specs/runs/tb-smoke.toml"
    spec.write_text(spec.read_text().replace("max_retries = 0", "max_retries = 1"))
    assert ("replace", "tb-smoke") in actions(repo.plan_json("--target", "tb-smoke"))
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    runs = {r["id"]: r for r in repo.spec_runs("tb-smoke")}
    assert len(runs) == 2 and runs[old["id"]]["status"] == "stopped"
    (new,) = [r for r in runs.values() if r["id"] != old["id"]]
    assert new["status"] in {"pending", "queued", "running"} and new["spec"] != old["spec"]


def test_a_comment_or_key_order_change_does_not_replace_the_run(repo: Repo) -> None:
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    spec = repo.root / "specs/runs/tb-smoke.toml"
    text = spec.read_text().replace("max_retries = 0", "# reviewed\nmax_retries = 0")
    text = text.replace("timeout_multiplier = 1.0\nmax_retries = 0", "max_retries = 0\ntimeout_multiplier = 1.0")
    spec.write_text(text)
    assert repo.cli("plan", "--detailed-exitcode", "--target", "tb-smoke").returncode == 0


def test_deleting_a_spec_makes_an_orphan_that_only_prune_stops(repo: Repo) -> None:
    repo.cli("apply", "--auto-approve", check=True)
    (repo.root / "specs/runs/tb-smoke.toml").unlink()
    assert ("orphan", "tb-smoke") in actions(repo.plan_json())
    repo.cli("apply", "--auto-approve", check=True)
    assert repo.spec_runs("tb-smoke")[0]["status"] != "stopped"
    repo.cli("apply", "--auto-approve", "--prune", check=True)
    assert [r["status"] for r in repo.spec_runs("tb-smoke")] == ["stopped"]


def unprivileged() -> tuple[str, ...]:
    """What runs a command as a user permission bits stop: root passes them (CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no folder can be made unreadable to the command")
    return (setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", "--")


def test_a_folder_of_specs_that_cannot_be_read_stops_prune_from_stopping_its_runs(repo: Repo) -> None:
    team = repo.root / "specs/runs/team"
    team.mkdir()
    (repo.root / "specs/runs/tb-smoke.toml").rename(team / "tb-smoke.toml")
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    team.chmod(0)
    try:
        planned = repo.cli("plan", "--prune", prefix=unprivileged())
        applied = repo.cli("apply", "--auto-approve", "--prune", prefix=unprivileged())
    finally:
        team.chmod(0o755)
    for done in (planned, applied):
        assert done.returncode == 1, done.stdout + done.stderr
        assert "specs/runs/team:1:1: (file): is a folder that cannot be listed" in done.stderr
    assert [r["status"] for r in repo.spec_runs("tb-smoke")] != ["stopped"]
    assert len(repo.platform.runs(repo.workspace)) == 1


def test_a_spec_set_that_suddenly_renders_empty_is_refused(repo: Repo) -> None:
    repo.cli("apply", "--auto-approve", check=True)
    shutil.rmtree(repo.root / "specs/runs")
    done = repo.cli("apply", "--auto-approve", "--prune")
    assert done.returncode == 1 and "--allow-empty" in done.stderr
    assert all(r["status"] != "stopped" for r in repo.platform.runs(repo.workspace))


def test_a_crash_right_after_the_platform_accepted_a_submit_never_doubles_the_run(repo: Repo) -> None:
    crashed = repo.cli("apply", "--auto-approve", "--target", "tb-smoke", script=CRASH_AFTER_SUBMIT)
    assert crashed.returncode == 70
    state = json.loads((repo.root / ".reconciler/state.json").read_text())
    assert [i["spec_id"] for i in state["intents"]] == ["tb-smoke"]  # the run is not recorded yet
    again = repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    assert "adopted" in again.stdout
    assert len(repo.spec_runs("tb-smoke")) == 1
    assert json.loads((repo.root / ".reconciler/state.json").read_text())["intents"] == []


def test_two_applies_started_at_once_produce_one_run(repo: Repo) -> None:
    env = {
        **os.environ,
        "OSMOSIS_PLATFORM_URL": repo.platform.url,
        "OSMOSIS_TOKEN": repo.platform.token,
    }
    cmd = [
        sys.executable,
        "-m",
        "reconciler.cli",
        "apply",
        "--auto-approve",
        "--target",
        "tb-smoke",
        "--lock-timeout",
        "60",
    ]
    procs = [
        subprocess.Popen(
            cmd,
            cwd=repo.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
        )
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert len(repo.spec_runs("tb-smoke")) == 1


def test_a_saved_plan_is_refused_once_the_specs_change(repo: Repo) -> None:
    assert repo.cli("plan", "--out", "plan.json").returncode == 0
    spec = repo.root / "specs/runs/tb-smoke.toml"
    spec.write_text(spec.read_text().replace("max_retries = 0", "max_retries = 2"))
    done = repo.cli("apply", "plan.json")
    assert done.returncode == 1 and "stale" in done.stderr
    assert repo.platform.runs(repo.workspace) == []


def test_a_saved_plan_is_refused_once_the_spending_cap_is_lowered_below_it(repo: Repo) -> None:
    assert repo.cli("plan", "--out", "plan.json").returncode == 0  # 261 paid attempts, under 1000
    toml = repo.root / "reconciler.toml"
    toml.write_text(toml.read_text().replace("max_attempts_per_apply = 1000", "max_attempts_per_apply = 100"))
    done = repo.cli("apply", "plan.json")
    assert done.returncode == 1 and "stale" in done.stderr
    assert repo.platform.runs(repo.workspace) == []


def test_a_saved_plan_applies_exactly_what_it_shows(repo: Repo) -> None:
    assert repo.cli("plan", "--out", "plan.json", "--target", "tb-smoke").returncode == 0
    repo.cli("apply", "plan.json", check=True)
    assert len(repo.spec_runs("tb-smoke")) == 1
    assert repo.spec_runs("tb-compare") == []


def test_a_lost_state_file_gets_its_spec_records_back_from_the_markers(repo: Repo) -> None:
    """README: the state file is "a cache ... rebuilt from the platform when lost"."""
    repo.cli("apply", "--auto-approve", "--target", "tb-smoke", check=True)
    state_file = repo.root / ".reconciler/state.json"
    recorded = json.loads(state_file.read_text())["specs"]["tb-smoke"]
    state_file.unlink()
    # another machine (a fresh runner): only what it reads from the platform may be committed
    fresh = {"RECONCILER_CACHE_DIR": str(repo.root.parent / "fresh-cache")}
    again = repo.cli("apply", "--auto-approve", "--target", "tb-smoke", env=fresh, check=True)
    assert "submit" not in again.stdout.replace("submitted 0", "")
    rebuilt = json.loads(state_file.read_text())["specs"]["tb-smoke"]
    assert {k: rebuilt[k] for k in ("run_id", "run_name", "fingerprint")} == {
        k: recorded[k] for k in ("run_id", "run_name", "fingerprint")
    }
    assert len(repo.spec_runs("tb-smoke")) == 1
