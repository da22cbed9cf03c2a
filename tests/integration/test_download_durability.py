"""A file is renamed into place only once its bytes are on disk (reconciler/outputs/transfer.py,
step 3): made durable in groups with one syncfs per filesystem where the system has it, else
with an fsync per file. A write-back error loses nothing: the files it touched stay partial
and the next download finishes them without fetching their bytes again."""

from __future__ import annotations

import asyncio
import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from reconciler.engine.downloads import DownloadReport, download_run
from reconciler.outputs import transfer
from reconciler.outputs.layout import run_dir_name

from .download_support import ALL, NO_WAIT, Clock, finished_run, local_client, on_disk, served_files


def download(db: Path, clock: Clock, run: str, root: Path) -> DownloadReport:
    async def go() -> DownloadReport:
        async with local_client(db, clock) as client:
            return await download_run(client, run=run, types=ALL, output_root=root, jobs=4, retry=NO_WAIT)

    return asyncio.run(go())


def failing_syncfs() -> Callable[[int], None]:
    def syncfs(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    return syncfs


def test_a_write_back_error_renames_nothing_and_the_next_download_finishes_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, clock = tmp_path / "p.sqlite3", Clock()
    run_id, name = finished_run(db, clock)
    run_dir = tmp_path / "out" / run_dir_name(name, run_id)
    with monkeypatch.context() as broken:
        broken.setattr(transfer, "group_syncfs", failing_syncfs)
        failed = download(db, clock, name, tmp_path / "out")
    assert failed.status != "success" and failed.files_downloaded == 0
    assert all("Input/output error" in f.error for f in failed.files_failed)
    assert on_disk(run_dir) == {}  # no file in place: every one is still a partial
    again = download(db, clock, name, tmp_path / "out")
    assert again.status == "success" and again.bytes_resumed == again.bytes_downloaded > 0
    assert on_disk(run_dir) == served_files(db, clock, run_id)


def test_without_syncfs_each_file_is_fsynced_and_lands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, clock = tmp_path / "p.sqlite3", Clock()
    run_id, name = finished_run(db, clock)
    monkeypatch.setattr(transfer, "group_syncfs", lambda: None)
    report = download(db, clock, name, tmp_path / "out")
    assert report.status == "success"
    assert on_disk(Path(report.output_path)) == served_files(db, clock, run_id)


def test_a_file_finished_after_the_transfer_closed_gets_an_answer_and_is_not_renamed(tmp_path: Path) -> None:
    """Cancelled workers close the transfer while a group may still wait: each file in it is
    answered (its descriptor is closed by whoever waits), none lands."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=1)
    pool.shutdown()
    partial = tmp_path / ".a.partial"
    partial.write_bytes(b"x")

    async def go() -> BaseException | None:
        group = transfer._GroupSync(pool, lambda fd: None)
        fd = os.open(partial, os.O_RDONLY)
        try:
            done = group.durable(fd, os.fstat(fd).st_dev, release=False)
            return await asyncio.wait_for(asyncio.shield(done), timeout=5)
        except OSError as exc:
            return exc
        finally:
            os.close(fd)

    failure = asyncio.run(go())
    assert isinstance(failure, OSError) and failure.errno == errno.ECANCELED
