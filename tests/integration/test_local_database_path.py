"""The local platform's database is a repository file like any other reconciler writes: never
through a symlink, and a file there that is not a database is a clear error naming it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from reconciler.errors import ConfigError
from reconciler.safe_paths import UnsafePathError
from reconciler.wiring import local_transport
from tests.local_cli import cli

REPO = Path(__file__).resolve().parents[2]
DATABASE = ".osmosis/local-platform.sqlite3"


def test_a_linked_osmosis_folder_is_refused_and_nothing_is_created_where_it_points(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".osmosis").symlink_to(outside)
    with pytest.raises(UnsafePathError, match=r"\.osmosis is a symlink"):
        local_transport(root)
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("name", [DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm"])
def test_a_database_file_planted_as_a_link_is_refused(tmp_path: Path, name: str) -> None:
    target = tmp_path / "elsewhere.sqlite3"
    (tmp_path / ".osmosis").mkdir()
    (tmp_path / name).symlink_to(target)
    with pytest.raises(UnsafePathError, match="is a symlink"):
        local_transport(tmp_path)
    assert not target.exists()


def test_a_fifo_at_the_database_is_refused_without_blocking(tmp_path: Path) -> None:
    (tmp_path / ".osmosis").mkdir()
    os.mkfifo(tmp_path / DATABASE)
    with pytest.raises(UnsafePathError, match="is not a regular file"):
        local_transport(tmp_path)


def test_a_file_that_is_no_database_is_named_in_the_error(tmp_path: Path) -> None:
    (tmp_path / ".osmosis").mkdir()
    (tmp_path / DATABASE).write_text("not a database\n")
    with pytest.raises(ConfigError, match=rf"{DATABASE} is not a local platform database"):
        local_transport(tmp_path)


def test_the_cli_refuses_a_linked_osmosis_folder_with_exit_1_and_no_traceback(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "repo"
    outside.mkdir()
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "reconciler.toml").write_text('platform = "local"\n')
    (root / ".osmosis").symlink_to(outside)
    done = cli(root, "plan")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refusing to write .osmosis/local-platform.sqlite3: .osmosis is a symlink" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(outside.iterdir()) == []


def test_platform_serve_refuses_a_linked_osmosis_folder_for_its_default_database(tmp_path: Path) -> None:
    outside, root = tmp_path / "outside", tmp_path / "repo"
    outside.mkdir()
    root.mkdir()
    (root / ".osmosis").symlink_to(outside)
    done = cli(root, "platform", "serve", "--port", "0")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "refusing to write .osmosis/local-platform.sqlite3: .osmosis is a symlink" in done.stderr
    assert list(outside.iterdir()) == []
