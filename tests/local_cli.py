"""The CLI as a subprocess in a repository on the embedded local platform: no OSMOSIS_ or GITHUB_
variable leaks in from the environment, nothing waits on standard input."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def cli(root: Path, *args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`reconciler ARGS` run in `root`; its exit code and output, never raised on. `env`, when
    given, is the whole environment (a served platform's URL and token, say)."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "GITHUB_"))}
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", *args],
        cwd=root, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL,
    )  # fmt: skip
