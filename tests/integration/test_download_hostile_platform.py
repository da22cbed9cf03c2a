"""Hostile manifests served by the local platform itself (`platform serve --test-hooks`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.download_support import cli_env, payload, served_platform

HOSTILE = [
    ("summary.csv", 10),
    ("../escape.txt", 5),
    ("/abs/path.txt", 5),
    ("artifacts\\r1\\x.txt", 5),
    ("results.csv", 7),
    ("results.csv", 7),
    ("artifacts/short", 4),
    ("weird.txt", 3),
    ("artifacts/r1/./x.txt", 3),
]


@pytest.fixture
def hostile_run(tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    with served_platform(tmp_path / "p.sqlite3", "--test-hooks", "--speed", "100000") as (url, token):
        headers = {"Authorization": f"Bearer {token}", "X-Osmosis-Workspace": "w"}
        with httpx.Client(base_url=url, headers=headers) as api:
            run_id = api.post("/api/cli/benchmark-runs", json=payload(2)).json()["id"]
            deadline = time.monotonic() + 20
            while api.get(f"/api/cli/benchmark-runs/{run_id}").json()["benchmark_run"]["status"] not in (
                "finished",
                "failed",
            ):
                assert time.monotonic() < deadline
                time.sleep(0.2)
            files = [{"path": p, "size": n} for p, n in HOSTILE]
            assert api.put(f"/_test/runs/{run_id}/manifest", json={"files": files}).status_code == 200
        yield url, token, run_id


def test_the_platform_hook_answers_404_without_test_hooks(tmp_path: Path) -> None:
    with served_platform(tmp_path / "p.sqlite3") as (url, token):
        answer = httpx.put(
            f"{url}/_test/runs/x/manifest", json={"files": []}, headers={"Authorization": f"Bearer {token}"}
        )
        assert answer.status_code == 404


def test_a_hostile_manifest_from_the_platform_is_refused_path_by_path(
    hostile_run: tuple[str, str, str], tmp_path: Path
) -> None:
    url, token, run_id = hostile_run
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "download", run_id, "--type", "all", "--output", str(out), "--format", "json"],
        cwd=work, env={**cli_env(url, token), "OSMOSIS_WORKSPACE": "w"}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    runs = report.get("runs", [report])
    failed = {f["path"] for r in runs for f in r["files_failed"]}
    assert failed >= {
        "../escape.txt",
        "/abs/path.txt",
        "artifacts\\r1\\x.txt",
        "results.csv",
        "artifacts/short",
        "weird.txt",
        "artifacts/r1/./x.txt",
    }
    assert (out / "summary.csv").read_bytes() == b"summary.cs"  # the one safe file landed, 10 bytes
    written = {p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file()}
    # the run folder, and reconciler's ledger for it beside it: nothing else
    assert all(p.startswith("out/") or p == ".reconciler/out.json" for p in written), written
    assert not (tmp_path / "escape.txt").exists() and not Path("/abs/path.txt").exists()
