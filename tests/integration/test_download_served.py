"""`reconciler download` as a subprocess against `reconciler platform serve` on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.identity import Marker
from reconciler.core.world import RunAgents
from reconciler.engine.session import load_desired
from reconciler.engine.state import State, save_state
from reconciler.outputs.layout import run_dir_name
from reconciler.settings import load_project
from tests.local_cli import cli as reconciler

from .download_support import ALL, Clock, cli_env, on_disk, payload, remote_client, served_files, served_platform

pytestmark = pytest.mark.slow

SPEED = "1000000"  # simulated seconds per second: a submitted run has finished a moment later


def submit(url: str, token: str, tasks: int = 4) -> tuple[str, str]:
    return submit_payload(url, token, payload(tasks))


def submit_payload(url: str, token: str, body: dict[str, Any]) -> tuple[str, str]:
    async def go() -> tuple[str, str]:
        async with remote_client(url, token) as client:
            run = await client.submit_run(body)
            for _ in range(100):
                if (await client.get_run(run.id)).benchmark_run.status in ("finished", "failed"):
                    return run.id, run.name
                await asyncio.sleep(0.05)
            raise AssertionError("the run did not finish")

    return asyncio.run(go())


def cli(project: Path, url: str, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return reconciler(project, "download", "--workspace", "w", *args, env=cli_env(url, token))


def reference(db: Path, run_id: str) -> dict[str, bytes]:
    return served_files(db, Clock(time.time() + 3600), run_id, ALL)


def test_the_cli_gets_byte_identical_files_through_server_faults(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    knobs = ("--speed", SPEED, "--seed", "11", "--error-rate", "0.05", "--truncate-rate", "0.3")
    with served_platform(db, *knobs) as (url, token):
        run_id, name = submit(url, token)
        done = cli(tmp_path, url, token, name, "--type", "all", "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "success" and doc["runs"][0]["files_failed"] == []
    run_dir = tmp_path / ".osmosis" / "benchmarks" / run_dir_name(name, run_id)
    assert on_disk(run_dir) == reference(db, run_id)


def test_a_killed_download_resumes_to_byte_identical_files(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    knobs = ("--speed", SPEED, "--seed", "4", "--latency-ms", "40", "--truncate-rate", "0.3")
    with served_platform(db, *knobs) as (url, token):
        run_id, name = submit(url, token)
        run_dir = tmp_path / ".osmosis" / "benchmarks" / run_dir_name(name, run_id)
        first = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "reconciler.cli",
                "download",
                name,
                "--type",
                "all",
                "--jobs",
                "1",
                "--workspace",
                "w",
            ],
            cwd=tmp_path,
            env=cli_env(url, token),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 15
        partials: list[Path] = []
        while time.monotonic() < deadline and first.poll() is None:
            partials = [p for p in run_dir.rglob(".*.partial") if p.stat().st_size > 0] if run_dir.exists() else []
            if partials:
                break
            time.sleep(0.005)
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert partials, "the first download never left a partial file"
        again = cli(tmp_path, url, token, name, "--type", "all", "--format", "json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["runs"][0]["bytes_resumed"] > 0
    assert on_disk(run_dir) == reference(db, run_id)
    assert not list(run_dir.rglob("*.partial"))


def _spec_project(tmp_path: Path, download: str) -> None:
    """A project with one run spec, `specs/runs/smoke.toml`, whose `[reconcile] download` is `download`."""
    (tmp_path / "specs" / "runs").mkdir(parents=True)
    (tmp_path / "reconciler.toml").write_text('specs_dir = "specs"\nworkspace = "w"\n')
    spec = "\n".join(
        [
            "[experiment]",
            'benchmark = "terminal-bench-2-1"',
            "[tasks]",
            f"task_names = {json.dumps(payload(2)['tasks_config']['task_names'])}",
            "[[agents]]",
            "[agents.model]",
            'type = "provider"',
            'model = "openai/gpt-5-mini"',
            'api_key_secret = "OPENAI_API_KEY"',
            "[reconcile]",
            f"download = {download}",
        ]
    )
    (tmp_path / "specs" / "runs" / "smoke.toml").write_text(spec + "\n")


def test_without_arguments_each_specs_current_run_is_downloaded_with_its_types(tmp_path: Path) -> None:
    _spec_project(tmp_path, '["summary", "logs"]')
    with served_platform(tmp_path / "p.sqlite3", "--speed", SPEED) as (url, token):
        env = cli_env(url, token)
        applied = reconciler(tmp_path, "apply", "--auto-approve", env=env)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        time.sleep(0.2)
        done = reconciler(tmp_path, "download", "--format", "json", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    (report,) = json.loads(done.stdout)["runs"]
    assert report["selected_types"] == ["summary", "logs"] and report["files_downloaded"] == 2
    run_dir = Path(report["output_path"])
    assert sorted(on_disk(run_dir)) == ["logs.txt", "summary.csv"]


def test_a_spec_that_downloads_nothing_is_skipped_unless_a_type_is_asked_for(tmp_path: Path) -> None:
    _spec_project(tmp_path, "[]")
    with served_platform(tmp_path / "p.sqlite3", "--speed", SPEED) as (url, token):
        env = cli_env(url, token)
        assert reconciler(tmp_path, "apply", "--auto-approve", env=env).returncode == 0
        time.sleep(0.2)
        for spec in ((), ("runs/smoke",)):
            done = reconciler(tmp_path, "download", *spec, env=env)
            assert done.returncode == 0 and "download list is empty; pass --type" in done.stdout, done.stdout
        outputs = tmp_path / ".osmosis" / "benchmarks"
        assert not any(p.is_file() for p in outputs.rglob("*"))
        asked = reconciler(tmp_path, "download", "runs/smoke", "--type", "summary", "--format", "json", env=env)
    assert asked.returncode == 0, asked.stderr
    (report,) = json.loads(asked.stdout)["runs"]
    assert sorted(on_disk(Path(report["output_path"]))) == ["summary.csv"]


def test_a_strangers_run_the_state_file_names_as_a_specs_is_not_downloaded(tmp_path: Path) -> None:
    """A hand-edited state file claims someone else's finished run of the spec's exact config:
    `reconciler download` reads the run's marker first, downloads nothing and says why."""
    (tmp_path / "specs" / "runs").mkdir(parents=True)
    (tmp_path / "reconciler.toml").write_text('workspace = "w"\nowner = "acme/evals"\n')
    spec = payload(2)
    (tmp_path / "specs" / "runs" / "smoke.toml").write_text(
        '[experiment]\nbenchmark = "terminal-bench-2-1"\n[tasks]\n'
        f"task_names = {json.dumps(spec['tasks_config']['task_names'])}\n"
        '[[agents]]\n[agents.model]\ntype = "provider"\nmodel = "openai/gpt-5-mini"\napi_key_secret = "OPENAI_API_KEY"\n'
        '[reconcile]\ndownload = ["summary"]\n'
    )
    (desired,) = load_desired(load_project(tmp_path))[0].runs
    with served_platform(tmp_path / "p.sqlite3", "--speed", SPEED) as (url, token):
        run_id, run_name = submit_payload(url, token, desired.spec.config.to_payload())  # no marker: not ours
        marker = Marker(owner="acme/evals", spec_id=desired.spec.id, fingerprint=desired.fingerprint)
        forged = State(
            markers={run_id: marker},
            run_agents={run_id: RunAgents(selection=True, agents=((None, "openai/gpt-5-mini"),))},
        )
        save_state(tmp_path / ".reconciler" / "state.json", forged)
        env = cli_env(url, token) | {"RECONCILER_CACHE_DIR": str(tmp_path / "cache")}
        done = subprocess.run(
            [sys.executable, "-m", "reconciler.cli", "download", "--format", "json"],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    (error,) = json.loads(done.stdout)["errors"]
    assert error["target"] == "runs/smoke" and f"{run_name} is not owned by this repository" in error["error"]
    assert not (tmp_path / ".osmosis").exists()
