"""A temp git repository with this project's example specs, its own workspace on a served platform,
and the CLI as a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from tests.e2e.served_platform import ServedPlatform

REPO = Path(__file__).resolve().parents[2]

# The platform documentation's first config: one task, one agent (terminal-bench-2-1, codex).
SMOKE_PAYLOAD: dict[str, Any] = {
    "experiment_config": {"benchmark": "terminal-bench-2-1"},
    "tasks_config": {"task_names": ["terminal-bench/git-multibranch"]},
    "agents": [
        {
            "harness": "codex",
            "model": {"type": "provider", "model": "openai/gpt-5.2", "api_key_secret": "OPENAI_API_KEY"},
            "env": {},
        }
    ],
    "execution_config": {"attempts_per_task": 1, "max_concurrent_attempts": 1},
}


class WorkspaceRepo:
    def __init__(self, root: Path, platform: ServedPlatform) -> None:
        self.root, self.platform = root, platform
        self.workspace = f"e2e-{uuid.uuid4().hex[:8]}"
        shutil.copytree(REPO / "specs", root / "specs")
        # no origin: `owner` says this repository is alone in its workspace, so its runs may be stopped
        (root / "reconciler.toml").write_text(
            f'workspace = "{self.workspace}"\nowner = "{self.workspace}"\n[apply]\nmax_attempts_per_apply = 1000\n'
        )
        subprocess.run(["git", "init", "-q", str(root)], check=True)

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            **os.environ,
            "OSMOSIS_PLATFORM_URL": self.platform.url,
            "OSMOSIS_TOKEN": self.platform.token,
            **(extra or {}),
        }
        env.pop("GITHUB_ACTIONS", None)
        return env

    def cli(
        self, *args: str, env: dict[str, str] | None = None, stdin: str | None = None, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "reconciler.cli", *args],
            cwd=self.root, env=self.env(env), capture_output=True, text=True, timeout=120,
            input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
        )  # fmt: skip
        if check:
            assert done.returncode == 0, done.stdout + done.stderr
        return done

    def json(self, *args: str) -> dict[str, Any]:
        done = self.cli(*args, "--format", "json")
        assert done.returncode == 0, done.stdout + done.stderr
        doc: dict[str, Any] = json.loads(done.stdout)
        assert doc["schema_version"] == 1
        return doc

    def submit_directly(self, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """A run submitted straight to the API, as another tool would: no ownership marker."""
        with self.platform.api(self.workspace) as api:
            answer = api.post("/api/cli/benchmark-runs", json=payload or SMOKE_PAYLOAD)
            assert answer.status_code == 201, answer.text
            run: dict[str, Any] = answer.json()
            return run

    def stop_directly(self, run_id: str) -> None:
        with self.platform.api(self.workspace) as api:
            assert api.post(f"/api/cli/benchmark-runs/{run_id}/stop", json={}).status_code == 200
