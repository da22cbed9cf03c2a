"""The write-time half of the leaderboard path rule (safe_paths.writable_path, asked by the render
right before it writes): a folder swapped for a symlink after the specs were loaded and checked is
still never written through."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.engine.machine_cache import CACHE_DIR_ENV
from reconciler.engine.rendering import render_all
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.settings import load_project
from tests.inprocess_client import inprocess_client

BOARD = '[benchmark]\nref = "terminal-bench-2-1"\n[leaderboard]\noutput = "leaderboards/tb.md"\n'


def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(repository with one leaderboard spec, an empty folder outside it)."""
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "specs/benchmarks").mkdir(parents=True)
    (root / "specs/benchmarks/tb.toml").write_text(BOARD)
    (root / "reconciler.toml").write_text('workspace = "guard"\n')
    outside.mkdir()
    return root, outside


def render_errors(root: Path, platform: Path, after_loading: Callable[[], None] = lambda: None) -> list[str | None]:
    """Each board's render error; `after_loading` runs once the specs were loaded and checked."""

    async def render() -> list[str | None]:
        project = load_project(root)
        desired, specs = load_desired(project)
        after_loading()
        async with inprocess_client(create_app(platform, speed=1.0), "guard") as client:
            session = RepoSession(project, "local", "acme/evals", client, desired, specs, State())
            observed = await session.observe()
            return [outcome.error for outcome in await render_all(session, observed)]

    return asyncio.run(render())


def test_a_leaderboards_folder_symlinked_after_the_specs_loaded_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = repository(tmp_path, monkeypatch)

    def link() -> None:
        (root / "leaderboards").symlink_to(outside, target_is_directory=True)

    (error,) = render_errors(root, tmp_path / "platform.sqlite3", after_loading=link)

    assert error is not None and "leaderboards is a symlink" in error
    assert list(outside.iterdir()) == []


def test_a_leaderboards_folder_swapped_for_a_symlink_between_the_check_and_the_write_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The board's folder passes the write-time check, then becomes a link before the write: the
    write opens each folder from the repository down without following one, so it refuses."""
    from reconciler.engine import rendering
    from reconciler.engine.board_files import read_board_file as checked_and_read

    root, outside = repository(tmp_path, monkeypatch)
    (root / "leaderboards").mkdir()

    def read_then_swap(path: Path, rel: str) -> str | None:
        found = checked_and_read(path, rel)
        board = root / "leaderboards"
        if not board.is_symlink():
            board.rmdir()
            board.symlink_to(outside, target_is_directory=True)
        return found

    monkeypatch.setattr(rendering, "read_board_file", read_then_swap)

    (error,) = render_errors(root, tmp_path / "platform.sqlite3")

    assert error is not None and "leaderboards is a symlink or not a folder" in error
    assert list(outside.iterdir()) == []
