"""`reconciler platform serve` on 127.0.0.1 as a subprocess, for end-to-end tests."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.served_platform import served

_SERVING = re.compile(r"serving on (http://\S+) token=(\S+)")


@dataclass
class ServedPlatform:
    url: str
    token: str

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
                    out.append({**item, "spec": env.get("RECONCILER_SPEC"), "owner": env.get("RECONCILER_OWNER")})
                offset = page["next_offset"]
        return out


@contextmanager
def serve_platform(tmp: Path, *, speed: float = 1.0, extra: tuple[str, ...] = ()) -> Iterator[ServedPlatform]:
    with served(tmp, "--speed", str(speed), "--token", "e2e-token", *extra) as (url, token):
        yield ServedPlatform(url, token)
