"""Atomic writes: the file holds the old bytes or the new ones, and nothing is left beside it."""

from __future__ import annotations

import os
from pathlib import Path

from reconciler.files import write_atomic, write_if_changed


def test_an_atomic_write_replaces_the_file_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "plan.json"
    target.write_bytes(b"old")
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


def test_an_atomic_write_creates_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "specs" / "runs" / "hle.toml"
    write_atomic(target, b"[reconcile]\n")
    assert target.read_bytes() == b"[reconcile]\n"


def test_an_existing_file_keeps_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_bytes(b"old")
    target.chmod(0o751)
    write_atomic(target, b"new")
    assert target.stat().st_mode & 0o777 == 0o751


def test_a_new_file_gets_the_mode_an_ordinary_write_gives(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write_atomic(tmp_path / "new.md", b"x")
    finally:
        os.umask(umask)
    assert (tmp_path / "new.md").stat().st_mode & 0o777 == 0o644


def test_unchanged_content_is_not_written_again(tmp_path: Path) -> None:
    target = tmp_path / "board.md"
    assert write_if_changed(target, "rows\n") is True
    before = target.stat().st_ino
    assert write_if_changed(target, "rows\n") is False
    assert target.stat().st_ino == before
