"""`reconciler render` writes only files it can tell are its own: anything else is named and left alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_leaderboard_path_holding_bytes_that_are_not_text_is_named_and_kept(tmp_path: Path) -> None:
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    (tmp_path / "reconciler.toml").write_text('workspace = "render"\nplatform = "local"\n')
    board = tmp_path / "leaderboards" / "hle.md"
    board.parent.mkdir()
    board.write_bytes(b"\xff\xfe not text\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env["RECONCILER_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "render"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert "leaderboards/hle.md exists and is not UTF-8 text" in done.stdout + done.stderr
    assert "internal error" not in done.stdout + done.stderr
    assert board.read_bytes() == b"\xff\xfe not text\n"
