"""Writing a repository file from the repository down (files.write_atomic(..., below=root)): no
folder on the way is ever followed if it became a symlink after the path was checked."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.errors import UnsafePathError
from reconciler.files import write_atomic, write_if_changed
from reconciler.safe_paths import create_once, writable_path


def swap_for_link(folder: Path, target: Path) -> None:
    shutil.rmtree(folder)
    folder.symlink_to(target, target_is_directory=True)


@pytest.mark.parametrize("depth", [1, 2])
def test_a_folder_swapped_for_a_link_after_the_check_is_refused_and_nothing_is_written(
    tmp_path: Path, depth: int
) -> None:
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "a/b").mkdir(parents=True)
    outside.mkdir()
    rel = "a/b/board.md" if depth == 2 else "a/board.md"
    path = writable_path(root, rel)  # checked: real folders all the way
    swap_for_link(root / "a/b" if depth == 2 else root / "a", outside)
    with pytest.raises(UnsafePathError, match="is a symlink or not a folder"):
        write_if_changed(path, "# board\n", below=root)
    assert list(outside.iterdir()) == []


def test_a_file_where_a_folder_was_checked_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    path = writable_path(root, "a/board.md")
    (root / "a").rmdir()
    (root / "a").write_text("not a folder")
    with pytest.raises(UnsafePathError):
        write_atomic(path, b"x", below=root)
    assert (root / "a").read_text() == "not a folder"


def test_the_repository_itself_may_be_reached_through_a_link(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "repo").symlink_to(tmp_path / "real", target_is_directory=True)
    write_atomic(tmp_path / "repo/new/board.md", b"x", below=tmp_path / "repo")
    assert (tmp_path / "real/new/board.md").read_bytes() == b"x"


def test_create_once_refuses_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / ".reconciler").mkdir(parents=True)
    outside.mkdir()
    original = writable_path

    def check_then_swap(base: Path, rel: str, *, directory: bool = False) -> Path:
        found = original(base, rel, directory=directory)
        swap_for_link(root / ".reconciler", outside)
        return found

    import reconciler.safe_paths as safe_paths

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(safe_paths, "writable_path", check_then_swap)
        with pytest.raises(UnsafePathError):
            create_once(root, ".reconciler/.gitignore", "*\n")
    assert list(outside.iterdir()) == []


_PARTS = st.lists(st.sampled_from(["a", "b", "c d", "é"]), min_size=0, max_size=3)


@settings(max_examples=40, deadline=None)
@given(folders=_PARTS, existing=st.booleans(), mode=st.sampled_from([0o600, 0o640, 0o755]))
def test_written_from_the_repository_down_a_file_is_what_a_plain_write_gives(
    tmp_path_factory: pytest.TempPathFactory, folders: list[str], existing: bool, mode: int
) -> None:
    """Same bytes, missing folders created, an existing file's mode kept, no temporary left."""
    root = tmp_path_factory.mktemp("repo")
    path = root.joinpath(*folders, "out.txt")
    if existing:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"old")
        path.chmod(mode)
    write_atomic(path, b"new bytes", below=root)
    assert path.read_bytes() == b"new bytes"
    if existing:
        assert stat.S_IMODE(path.stat().st_mode) == mode
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_template_folder_swapped_for_a_link_after_the_check_is_never_read_through(tmp_path: Path) -> None:
    from reconciler.safe_paths import _open_repo_file

    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "templates").mkdir(parents=True)
    outside.mkdir()
    (outside / "plan.md.j2").write_text("{{ secrets }}")
    swap_for_link(root / "templates", outside)  # after read_repo_file looked at each part
    with pytest.raises(UnsafePathError, match="templates is a symlink or not a folder"):
        _open_repo_file(root, ["templates", "plan.md.j2"], "templates/plan.md.j2")


def test_a_fifo_swapped_in_for_a_template_is_refused_without_blocking(tmp_path: Path) -> None:
    from reconciler.safe_paths import read_repo_file

    root = tmp_path / "repo"
    (root / "templates").mkdir(parents=True)
    os.mkfifo(root / "templates/plan.md.j2")
    with pytest.raises(UnsafePathError, match="not a regular file"):
        read_repo_file(root, "templates/plan.md.j2")


def test_the_lock_never_truncates_a_file_through_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    from reconciler.engine.lock import repository_lock

    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / ".reconciler").mkdir(parents=True)
    outside.mkdir()
    (outside / "lock").write_text("precious")
    path = writable_path(root, ".reconciler/lock")
    swap_for_link(root / ".reconciler", outside)
    with pytest.raises(UnsafePathError), repository_lock(path, below=root):
        pass
    assert (outside / "lock").read_text() == "precious"


def test_a_fifo_swapped_in_for_a_written_file_is_replaced_without_blocking(tmp_path: Path) -> None:
    import signal

    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    path = writable_path(root, "a/board.md")
    os.mkfifo(path)
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("the write blocked on a FIFO"))
    signal.alarm(5)
    try:
        assert write_if_changed(path, "# board\n", below=root)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert path.read_text() == "# board\n"


def test_a_removal_never_follows_a_folder_swapped_for_a_link(tmp_path: Path) -> None:
    from reconciler.files import unlink_below

    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "run").mkdir(parents=True)
    outside.mkdir()
    (outside / ".reconciler-download.json").write_text("{}")
    swap_for_link(root / "run", outside)
    with pytest.raises(UnsafePathError):
        unlink_below(root, root / "run/.reconciler-download.json")
    assert (outside / ".reconciler-download.json").exists()


def test_a_name_near_the_systems_limit_is_written(tmp_path: Path) -> None:
    name = "é" * 120 + "x.md"  # 244 bytes: with the temporary file's 14 more, over 255
    write_atomic(tmp_path / name, b"x", below=tmp_path)
    assert (tmp_path / name).read_bytes() == b"x"


def test_a_folder_swapped_in_at_the_files_name_fails_naming_the_file(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    path = writable_path(root, "a/board.md")
    path.mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        write_atomic(path, b"x", below=root)
    assert caught.value.filename == str(path)


def test_init_never_writes_through_a_folder_swapped_for_a_link_after_its_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from reconciler.commands import init

    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / ".github/workflows").mkdir(parents=True)
    outside.mkdir()
    checked_and_read = init._read

    def read_then_swap(path: Path) -> str | None:
        found = checked_and_read(path)
        if not (root / ".github").is_symlink():
            swap_for_link(root / ".github", outside)
        return found

    monkeypatch.setattr(init, "_read", read_then_swap)
    done = CliRunner().invoke(init.command, [str(root)])
    assert isinstance(done.exception, UnsafePathError)
    assert list(outside.iterdir()) == []


def test_a_folder_that_cannot_be_made_is_named_in_the_error(tmp_path: Path) -> None:
    folder = tmp_path / ("x" * 300)  # longer than any file system takes
    with pytest.raises(OSError) as caught:
        write_atomic(folder / "board.md", b"x", below=tmp_path)
    assert caught.value.filename == str(folder)
