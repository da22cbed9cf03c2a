"""Whose run is this, end to end: separate repositories and separate clones against one
`reconciler platform serve`, the CLI as a subprocess."""

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


def make_repo(root: Path, workspace: str, origin: str | None) -> Path:
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "reconciler.toml").write_text(f'workspace = "{workspace}"\n[apply]\nmax_attempts_per_apply = 1000\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    if origin is not None:
        subprocess.run(["git", "-C", str(root), "remote", "add", "origin", origin], check=True)
    return root


def cli(root: Path, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if check:
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


def test_two_repositories_without_a_github_origin_never_stop_each_others_runs(
    platform: ServedPlatform, tmp_path: Path
) -> None:
    """Both write the workspace name as owner (no origin, no `owner`): a run marked with it may
    be the other's, so neither an edit nor --prune stops one; submits still go ahead."""
    workspace = f"originless-{uuid.uuid4().hex[:8]}"
    env = env_for(platform, tmp_path / "cache")
    one = make_repo(tmp_path / "one", workspace, None)
    two = make_repo(tmp_path / "two", workspace, "https://gitlab.com/acme/two.git")
    cli(one, env, "apply", "--auto-approve", "--target", "tb-smoke")

    spec = two / "specs/runs/tb-smoke.toml"
    spec.write_text(spec.read_text().replace("max_retries = 0", "max_retries = 1"))
    edited = cli(two, env, "plan", "--target", "tb-smoke", "--format", "json")
    blocked = [a for a in json.loads(edited.stdout)["actions"] if a["kind"] == "blocked"]
    assert [a["blocked_by"] for a in blocked] == ["shared_owner"]
    assert f'owner = "{workspace}"' in blocked[0]["reason"]
    cli(two, env, "apply", "--auto-approve", "--target", "tb-smoke", check=False)
    spec.unlink()
    cli(two, env, "apply", "--auto-approve", "--prune", "--target", "tb-smoke", check=False)
    cli(two, env, "apply", "--auto-approve", "--prune", check=False)

    smoke = runs_of(platform, workspace, "tb-smoke")
    assert len(smoke) == 1 and smoke[0]["status"] in LIVE  # one's run, never stopped


NO_ID_SMOKE = (REPO / "specs/runs/tb-smoke.toml").read_text().replace('id = "tb-smoke"\n', "")


def runs_of(platform: ServedPlatform, workspace: str, spec_id: str) -> list[dict[str, object]]:
    return [r for r in platform.runs(workspace) if str(r["spec"] or "").rpartition("@")[0] == spec_id]


@pytest.fixture
def solo(tmp_path: Path, platform: ServedPlatform) -> tuple[Path, str, dict[str, str]]:
    """A repository with one spec file named with a space and an `@`, and no [reconcile] id."""
    workspace = f"solo-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "solo"
    (root / "specs/runs").mkdir(parents=True)
    (root / "specs/runs/my smoke@1.toml").write_text(NO_ID_SMOKE)
    (root / "reconciler.toml").write_text(f'workspace = "{workspace}"\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root, workspace, env_for(platform, tmp_path / "cache")


def test_a_spec_file_named_with_a_space_and_an_at_sign_is_recognised_after_the_state_file_is_lost(
    platform: ServedPlatform, solo: tuple[Path, str, dict[str, str]]
) -> None:
    root, workspace, env = solo
    cli(root, env, "apply", "--auto-approve")
    (root / ".reconciler/state.json").unlink()
    cli(root, env, "apply", "--auto-approve")
    assert len(runs_of(platform, workspace, "runs/my smoke@1")) == 1
    assert cli(root, env, "plan", "--detailed-exitcode").returncode == 0


@pytest.mark.parametrize("entry", [None, "garbled", {"owner": "someone/else", "spec_id": "x", "fingerprint": "y"}])
def test_a_cached_marker_edited_by_hand_never_makes_apply_submit_again(
    platform: ServedPlatform, solo: tuple[Path, str, dict[str, str]], entry: object
) -> None:
    root, workspace, env = solo
    cli(root, env, "apply", "--auto-approve")
    state_path = root / ".reconciler/state.json"
    state = json.loads(state_path.read_text())
    state["markers"] = dict.fromkeys(state["markers"], entry)
    state_path.write_text(json.dumps(state))
    cli(root, env, "apply", "--auto-approve")
    assert len(runs_of(platform, workspace, "runs/my smoke@1")) == 1
    # the marker was asked of the platform again and is cached once more
    assert all(
        m is not None and m["spec_id"] == "runs/my smoke@1"
        for m in json.loads(state_path.read_text())["markers"].values()
    )


def test_a_renamed_spec_file_with_the_same_config_moves_its_run_and_submits_nothing(
    platform: ServedPlatform, solo: tuple[Path, str, dict[str, str]]
) -> None:
    root, workspace, env = solo
    cli(root, env, "apply", "--auto-approve")
    (root / "specs/runs/my smoke@1.toml").rename(root / "specs/runs/smoke.toml")
    doc = json.loads(cli(root, env, "plan", "--format", "json").stdout)
    first = doc["actions"][0]
    assert (first["kind"], first["spec_id"], first["moved_from"]) == (
        "moved",
        "runs/smoke",
        "runs/my smoke@1",
    )
    assert "moved" in cli(root, env, "apply", "--auto-approve").stdout
    assert cli(root, env, "plan", "--detailed-exitcode").returncode == 0
    (run,) = platform.runs(workspace)
    assert run["status"] in LIVE


@pytest.fixture(scope="module")
def slow_platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    # every request waits: six applies started together then look up and submit at the same time
    with serve_platform(tmp_path_factory.mktemp("slow"), speed=1.0, extra=("--latency-ms", "1500")) as served:
        yield served


def test_six_clones_applying_at_once_end_with_one_live_run_per_spec(
    slow_platform: ServedPlatform, tmp_path: Path
) -> None:
    platform = slow_platform
    workspace = f"race-{uuid.uuid4().hex[:8]}"
    env = env_for(platform, tmp_path / "cache")
    source = make_repo(tmp_path / "source", workspace, "https://github.com/acme/race.git")
    subprocess.run(["git", "-C", str(source), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "specs"],
        check=True,
    )
    clones = []
    for i in range(6):
        clone = tmp_path / f"clone{i}"
        subprocess.run(["git", "clone", "-q", str(source), str(clone)], check=True)
        subprocess.run(
            ["git", "-C", str(clone), "remote", "set-url", "origin", "git@github.com:acme/race.git"], check=True
        )
        clones.append(clone)
    command = [sys.executable, "-m", "reconciler.cli", "apply", "--auto-approve"]
    procs = [
        subprocess.Popen(
            command, cwd=c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL
        )
        for c in clones
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, outputs
    cli(clones[0], env, "apply", "--auto-approve")  # the next apply, as the real flow runs it

    specs = {"tb-smoke", "tb-compare", "hle-parity"}
    runs = platform.runs(workspace)
    live = sorted(str(r["spec"]).rpartition("@")[0] for r in runs if r["status"] in LIVE)
    assert live == sorted(specs)
    assert cli(clones[3], env, "plan", "--detailed-exitcode").returncode == 0


def test_runs_marked_by_an_earlier_version_with_the_workspace_as_owner_are_not_paid_for_twice(
    platform: ServedPlatform, tmp_path: Path
) -> None:
    workspace = f"legacy-{uuid.uuid4().hex[:8]}"
    env = env_for(platform, tmp_path / "cache")
    root = make_repo(tmp_path / "repo", workspace, "https://github.com/acme/legacy.git")
    settings = root / "reconciler.toml"
    # what earlier versions wrote for a repository with an origin and a workspace
    settings.write_text(f'owner = "{workspace}"\n' + settings.read_text())
    cli(root, env, "apply", "--auto-approve", "--target", "tb-smoke")
    settings.write_text(settings.read_text().replace(f'owner = "{workspace}"\n', ""))
    shutil.rmtree(root / ".reconciler")

    doc = json.loads(cli(root, env, "plan", "--format", "json", "--target", "tb-smoke").stdout)
    (action,) = doc["actions"]
    assert action["blocked_by"] == "legacy_owner" and f'owner = "{workspace}"' in action["reason"]
    # whatever exit code a blocked apply has, it submits nothing
    cli(root, env, "apply", "--auto-approve", "--target", "tb-smoke", check=False)
    assert len(runs_of(platform, workspace, "tb-smoke")) == 1


def test_runs_and_import_call_this_repositorys_run_its_own_in_a_shared_workspace(
    platform: ServedPlatform, tmp_path: Path
) -> None:
    workspace = f"shared-{uuid.uuid4().hex[:8]}"
    env = env_for(platform, tmp_path / "cache")
    one = make_repo(tmp_path / "one", workspace, "https://github.com/acme/one.git")
    cli(one, env, "apply", "--auto-approve", "--target", "tb-smoke")
    (run,) = runs_of(platform, workspace, "tb-smoke")

    rows = json.loads(cli(one, env, "runs", "--format", "json").stdout)["runs"]
    assert [r["owner"] for r in rows] == ["spec tb-smoke"]
    imported = cli(one, env, "import", str(run["name"]), check=False)
    assert imported.returncode == 64
    assert "already belongs to this repository's spec tb-smoke" in imported.stderr


def test_a_marker_forged_in_the_state_file_never_stops_anothers_run_and_is_forgotten(
    platform: ServedPlatform, tmp_path: Path
) -> None:
    workspace = f"shared-{uuid.uuid4().hex[:8]}"
    env = env_for(platform, tmp_path / "cache")
    one = make_repo(tmp_path / "one", workspace, "https://github.com/acme/one.git")
    two = make_repo(tmp_path / "two", workspace, "https://github.com/acme/two.git")
    cli(one, env, "apply", "--auto-approve", "--target", "tb-smoke")
    cli(two, env, "apply", "--auto-approve", "--target", "tb-smoke")
    (theirs,) = [r for r in runs_of(platform, workspace, "tb-smoke") if r["owner"] == "acme/one"]
    state_path = two / ".reconciler/state.json"
    state = json.loads(state_path.read_text())
    # claims one's run for two's spec, with an older config: a plan that trusted it would stop it
    state["markers"][theirs["id"]] = {"owner": "acme/two", "spec_id": "tb-smoke", "fingerprint": "0123456789abcdef"}
    state_path.write_text(json.dumps(state))

    # the plan reads a live run only the state file calls ours before it plans on it: no stop is
    # planned (were one saved in a plan, apply's own read before the stop would refuse it)
    done = cli(two, env, "apply", "--auto-approve", "--target", "tb-smoke", check=False)
    assert done.returncode == 0 and "stop" not in done.stdout, done.stdout
    assert {r["status"] for r in runs_of(platform, workspace, "tb-smoke")} <= LIVE
    assert theirs["id"] not in json.loads(state_path.read_text())["markers"]
    assert cli(two, env, "plan", "--target", "tb-smoke", "--detailed-exitcode", check=False).returncode == 0
