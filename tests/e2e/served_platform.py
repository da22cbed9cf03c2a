"""`reconciler platform serve` on 127.0.0.1 as a subprocess, for end-to-end tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

_SERVING = re.compile(r"serving on (http://\S+) token=(\S+)")


@dataclass
class ServedPlatform:
    url: str
    token: str
    process: subprocess.Popen[str]

    def api(self, workspace: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}", "X-Osmosis-Workspace": workspace},
            timeout=10,
        )

    def runs(self, workspace: str) -> list[dict[str, Any]]:
        """Every run in the workspace with its reconciler marker (or None), newest first."""
        out = []
        with self.api(workspace) as api:
            offset: int | None = 0
            while offset is not None:
                page = api.get("/api/cli/benchmark-runs", params={"limit": 50, "offset": offset}).json()
                for item in page["benchmark_runs"]:
                    detail = api.get(f"/api/cli/benchmark-runs/{item['id']}").json()
                    env = (detail["configuration"].get("config") or {}).get("env_config") or {}
                    out.append({**item, "spec": env.get("RECONCILER_SPEC")})
                offset = page["next_offset"]
        return out


@contextmanager
def serve_platform(tmp: Path, *, speed: float = 1.0, extra: tuple[str, ...] = ()) -> Iterator[ServedPlatform]:
    cmd = [
        sys.executable, "-m", "reconciler.cli", "platform", "serve",
        "--port", "0", "--db", str(tmp / "platform.sqlite3"), "--speed", str(speed), "--token", "e2e-token", *extra,
    ]  # fmt: skip
    log = (tmp / "platform.log").open("w")
    process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, env={**os.environ})
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            match = _SERVING.search(line)
            if match:
                yield ServedPlatform(match.group(1), match.group(2), process)
                return
            if process.poll() is not None:
                break
        log.flush()
        raise AssertionError(f"platform serve did not start: {line!r} {(tmp / 'platform.log').read_text()}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()
        log.close()
