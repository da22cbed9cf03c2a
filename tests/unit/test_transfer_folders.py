"""A file's folders are made on the folder thread, ahead of its transfer, checked as they are made
and looked at again just before the file is opened (reconciler/outputs/transfer.py, "Folders"):
a symlink planted after the manifest was screened, or after the folder was made, is never written
through; a file in a folder's way fails only the files under it; only files with a URL get a
folder; and a closed transfer makes no folder afterwards."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from reconciler.osmosis.transport import Headers, StreamedResponse
from reconciler.outputs.paths import Accepted, screen
from reconciler.outputs.transfer import FILE_RETRY, LINKED, MOVED_OUTSIDE, Outcome, Transfer

from .download_fake import FakePlatform, sample_files
from .test_download_engine import on_disk, run, run_dir


class _Body:
    def __init__(self, data: bytes) -> None:
        self._data = data

    @property
    def status(self) -> int:
        return 200

    @property
    def headers(self) -> Headers:
        return Headers([("Content-Length", str(len(self._data)))])

    async def chunks(self) -> AsyncIterator[bytes]:
        yield self._data


def serving(files: Mapping[str, bytes]) -> object:
    @asynccontextmanager
    async def open_url(url: str, *, headers: Mapping[str, str] | None = None) -> AsyncIterator[StreamedResponse]:
        yield _Body(files[url])

    return open_url


async def _never_refreshed(item: Accepted) -> str:
    raise AssertionError("no URL expires here")


def fetch_all(
    run_folder: Path, items: list[Accepted], files: Mapping[str, bytes], *, between: Callable[[], None] | None = None
) -> list[Outcome]:
    """Prepare every item's folder, wait until they are made, call `between`, then fetch each."""

    async def go() -> list[Outcome]:
        transfer = Transfer(serving(files), _never_refreshed, run_folder, retry=FILE_RETRY)  # type: ignore[arg-type]
        try:
            transfer.prepare(items)
            await made(transfer, items)
            if between is not None:
                between()
            return [await transfer.fetch(item, item.path) for item in items]
        finally:
            transfer.close()

    return asyncio.run(go())


async def made(transfer: Transfer, items: list[Accepted]) -> None:
    """Until the folder thread has dealt with every item's folder (made it, or failed to)."""
    await asyncio.gather(*(transfer._ready[os.fspath(item.folder)] for item in items))


def test_a_symlink_planted_after_the_screen_is_never_written_through(tmp_path: Path) -> None:
    run_folder, outside = tmp_path / "run", tmp_path / "outside"
    run_folder.mkdir()
    outside.mkdir()
    files = {"artifacts/a/out.bin": b"x" * 100, "summary.csv": b"s\n"}
    accepted, refused = screen(((p, len(b), None) for p, b in files.items()), ("artifacts", "summary"), run_folder)
    assert refused == []
    (run_folder / "artifacts").symlink_to(outside)  # after the screen, before any folder is made

    outcomes = dict(zip((i.path for i in accepted), fetch_all(run_folder, accepted, files), strict=True))

    assert outcomes["artifacts/a/out.bin"].error == LINKED
    assert outcomes["summary.csv"].error is None
    assert list(outside.iterdir()) == []
    assert (run_folder / "summary.csv").read_bytes() == b"s\n"


def test_a_folder_swapped_for_a_symlink_after_it_was_made_is_never_written_through(tmp_path: Path) -> None:
    run_folder, outside = tmp_path / "run", tmp_path / "outside"
    outside.mkdir()
    files = {"artifacts/a/out.bin": b"x" * 100}
    accepted, _ = screen(((p, len(b), None) for p, b in files.items()), ("artifacts",), run_folder)

    def swap() -> None:  # the folder was made and checked; now it leads outside
        (run_folder / "artifacts" / "a").rmdir()
        (run_folder / "artifacts" / "a").symlink_to(outside)

    [outcome] = fetch_all(run_folder, accepted, files, between=swap)

    assert outcome.error == MOVED_OUTSIDE
    assert list(outside.iterdir()) == []


def test_a_folder_above_swapped_for_a_symlink_after_it_was_made_is_never_written_through(tmp_path: Path) -> None:
    run_folder, outside = tmp_path / "run", tmp_path / "outside"
    (outside / "a").mkdir(parents=True)  # the same layout, elsewhere
    files = {"artifacts/a/out.bin": b"x" * 100}
    accepted, _ = screen(((p, len(b), None) for p, b in files.items()), ("artifacts",), run_folder)

    def swap() -> None:  # artifacts/a was made and checked; now artifacts leads outside
        (run_folder / "artifacts" / "a").rmdir()
        (run_folder / "artifacts").rmdir()
        (run_folder / "artifacts").symlink_to(outside)

    [outcome] = fetch_all(run_folder, accepted, files, between=swap)

    assert outcome.error == MOVED_OUTSIDE
    assert list((outside / "a").iterdir()) == []


def test_a_symlink_loop_planted_after_the_screen_fails_its_file_not_the_download(tmp_path: Path) -> None:
    run_folder = tmp_path / "run"
    run_folder.mkdir()
    files = {"artifacts/a/out.bin": b"x" * 100, "summary.csv": b"s\n"}
    accepted, _ = screen(((p, len(b), None) for p, b in files.items()), ("artifacts", "summary"), run_folder)
    (run_folder / "artifacts").mkdir()
    (run_folder / "artifacts" / "a").symlink_to(run_folder / "artifacts" / "b")
    (run_folder / "artifacts" / "b").symlink_to(run_folder / "artifacts" / "a")

    outcomes = dict(zip((i.path for i in accepted), fetch_all(run_folder, accepted, files), strict=True))

    assert outcomes["artifacts/a/out.bin"].error == LINKED
    assert outcomes["summary.csv"].error is None


def test_a_file_in_a_folders_way_fails_only_the_files_under_it(tmp_path: Path) -> None:
    blocker = run_dir(tmp_path) / "artifacts" / "r1"
    blocker.parent.mkdir(parents=True)
    blocker.write_bytes(b"mine")
    fake = FakePlatform(sample_files())

    report = run(fake, tmp_path)

    failed = {f.path: f.error for f in report.files_failed}
    assert set(failed) == {"artifacts/r1/trajectory.json", "artifacts/r1/verifier/stdout.txt"}
    assert all(error.startswith(f"Could not create {path}: ") for path, error in failed.items())
    assert report.status == "partial" and report.files_downloaded == 3
    assert on_disk(tmp_path) == {
        "artifacts/r1": b"mine",
        **{p: b for p, b in fake.files.items() if not p.startswith("artifacts/")},
    }


def test_a_download_that_gets_no_url_makes_no_folder(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), omit=set(sample_files()))

    report = run(fake, tmp_path)

    assert report.files_downloaded == 0 and len(report.files_failed) == len(fake.files)
    assert not run_dir(tmp_path).exists()


def test_a_file_the_url_answer_omits_gets_no_folder(tmp_path: Path) -> None:
    files = {**sample_files(), "artifacts/r2/out.bin": b"y" * 10}
    fake = FakePlatform(files, omit={"artifacts/r2/out.bin"})

    report = run(fake, tmp_path)

    assert [f.path for f in report.files_failed] == ["artifacts/r2/out.bin"]
    assert not (run_dir(tmp_path) / "artifacts" / "r2").exists()
    assert on_disk(tmp_path) == {p: b for p, b in files.items() if p != "artifacts/r2/out.bin"}


def test_a_closed_transfer_makes_no_folder_afterwards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_folder = tmp_path / "run"
    paths = [f"artifacts/f{n:04d}/out.bin" for n in range(320)]  # ten groups
    accepted, _ = screen(((p, 1, None) for p in paths), ("artifacts",), run_folder)
    make_group = Transfer._make_folders

    def slowly(transfer: Transfer, group: list[str]) -> dict[str, Exception]:
        time.sleep(0.05)  # each group takes a while: close() comes while most are still queued
        return make_group(transfer, group)

    monkeypatch.setattr(Transfer, "_make_folders", slowly)

    async def prepare_then_close() -> None:
        transfer = Transfer(serving({}), _never_refreshed, run_folder)  # type: ignore[arg-type]
        transfer.prepare(accepted)
        await made(transfer, accepted[:1])  # the first group is made; the rest are queued
        transfer.close()

    asyncio.run(prepare_then_close())
    made_then = folders(run_folder / "artifacts")
    time.sleep(0.3)  # a group still being made after close() would add folders meanwhile
    assert folders(run_folder / "artifacts") == made_then
    assert 0 < len(made_then) < len(paths)  # the groups still queued were dropped


def folders(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir()) if path.exists() else []


def test_a_partial_another_download_landed_before_this_one_locked_it_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two downloads of one run: B opens the partial, A renames it over the target, then B locks
    the inode that is now the landed file. B must not truncate it (with --overwrite it would)."""
    import fcntl

    run_folder = tmp_path / "run"
    run_folder.mkdir()
    files = {"summary.csv": b"s\n"}
    [item] = screen(((p, len(b), None) for p, b in files.items()), ("summary",), run_folder)[0]
    item.partial.write_bytes(b"s\n")  # complete: A is about to land it
    real_flock = fcntl.flock

    def land_first(fd: int, operation: int) -> None:
        if item.partial.exists():
            item.partial.replace(item.target)  # A, between B's open and B's lock
        real_flock(fd, operation)

    monkeypatch.setattr(fcntl, "flock", land_first)  # the module transfer.py locks with

    async def go() -> Outcome:
        transfer = Transfer(serving(files), _never_refreshed, run_folder, retry=FILE_RETRY, overwrite=True)  # type: ignore[arg-type]
        try:
            transfer.prepare([item])
            return await transfer.fetch(item, item.path)
        finally:
            transfer.close()

    outcome = asyncio.run(go())
    assert outcome.error == "Another download is writing this file right now."
    assert item.target.read_bytes() == b"s\n"
