"""`reconciler render` writes only files it can tell are its own: anything else is named and left alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


def render(root: Path, command: str = "render") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env["RECONCILER_CACHE_DIR"] = str(root / "cache")
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", command],
        cwd=root, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def board_repo(root: Path, **boards: tuple[str, str | None]) -> None:
    (root / "specs" / "benchmarks").mkdir(parents=True)
    (root / "specs" / "runs").mkdir()
    (root / "reconciler.toml").write_text('workspace = "render"\nplatform = "local"\n')
    for name, (output, chart) in boards.items():
        text = f'[benchmark]\nref = "terminal-bench-2-1"\n[leaderboard]\noutput = "{output}"\n'
        (root / "specs" / "benchmarks" / f"{name}.toml").write_text(text + (f'chart = "{chart}"\n' if chart else ""))


@pytest.mark.parametrize(
    ("boards", "says"),
    [
        (
            {"tb": ("specs/runs/board.md", None)},
            "specs/benchmarks/tb.toml:4:1: leaderboard.output: 'specs/runs/board.md' overlaps the specs folder (specs)",
        ),
        (
            {"tb": (".reconciler/lock", None)},
            "specs/benchmarks/tb.toml:4:1: leaderboard.output: '.reconciler/lock' overlaps reconciler's own folder",
        ),
        ({"tb": ("templates/leaderboard.md.j2", None)}, "overlaps the templates folder (templates)"),
        (
            {"tb": ("boards/tb.md", "boards/tb.md")},
            "specs/benchmarks/tb.toml:4:1: leaderboard.output: 'boards/tb.md' overlaps its own chart (boards/tb.md)",
        ),
        (
            {"a": ("boards/one.md", None), "b": ("BOARDS/one.md", None)},
            "specs/benchmarks/a.toml:4:1: leaderboard.output: 'boards/one.md' overlaps the leaderboard of benchmarks/b",
        ),
    ],
    ids=["among-the-specs", "on-the-lock", "on-a-template", "chart-on-output", "two-boards-one-file"],
)
@pytest.mark.parametrize("command", ["render", "validate"])
def test_a_leaderboard_that_would_land_on_anothers_file_is_refused_and_nothing_is_written(
    tmp_path: Path, boards: dict[str, tuple[str, str | None]], says: str, command: str
) -> None:
    """`validate` says it at the spec's line, and so does every command that loads the specs,
    before anything is read or written."""
    board_repo(tmp_path, **boards)
    done = render(tmp_path, command)
    assert done.returncode == 1 and says in done.stdout + done.stderr
    assert "internal error" not in done.stdout + done.stderr
    assert not (tmp_path / "boards").exists() and not (tmp_path / "specs" / "runs" / "board.md").exists()
    assert not (tmp_path / "templates").exists()


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ('state_file = "specs/runs/state.toml"', "state_file: 'specs/runs/state.toml' overlaps specs_dir 'specs'"),
        ('outputs_dir = "specs/out"', "outputs_dir: 'specs/out' overlaps specs_dir 'specs'"),
        ('specs_dir = "/"', "specs_dir: '/' is absolute"),
    ],
    ids=["state-among-specs", "outputs-among-specs", "specs-outside"],
)
def test_settings_that_would_write_among_the_specs_are_refused_where_they_are_written(
    tmp_path: Path, settings: str, says: str
) -> None:
    board_repo(tmp_path)
    (tmp_path / "reconciler.toml").write_text(f'workspace = "render"\nplatform = "local"\n{settings}\n')
    done = render(tmp_path)
    assert done.returncode != 0 and f"reconciler.toml:3:1: {says}" in done.stdout + done.stderr
