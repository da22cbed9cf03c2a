"""A file's folders are made on the folder thread, ahead of its transfer, and checked as they are
made (reconciler/outputs/transfer.py, step 3): a symlink planted after the manifest was screened is
never written through, a file in a folder's way fails only the files under it, and a closed
transfer makes no folder afterwards."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

from reconciler.osmosis.transport import Headers, StreamedResponse
from reconciler.outputs.paths import Accepted, screen
from reconciler.outputs.transfer import FILE_RETRY, Outcome, Transfer

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


def fetch_all(run_folder: Path, items: list[Accepted], files: Mapping[str, bytes]) -> list[Outcome]:
    async def go() -> list[Outcome]:
        transfer = Transfer(serving(files), _never_refreshed, run_folder, retry=FILE_RETRY)  # type: ignore[arg-type]
        try:
            transfer.prepare(items)
            return [await transfer.fetch(item, item.path) for item in items]
        finally:
            transfer.close()

    return asyncio.run(go())


def test_a_symlink_planted_after_the_screen_is_never_written_through(tmp_path: Path) -> None:
    run_folder, outside = tmp_path / "run", tmp_path / "outside"
    run_folder.mkdir()
    outside.mkdir()
    files = {"artifacts/a/out.bin": b"x" * 100, "summary.csv": b"s\n"}
    accepted, refused = screen(((p, len(b), None) for p, b in files.items()), ("artifacts", "summary"), run_folder)
    assert refused == []
    (run_folder / "artifacts").symlink_to(outside)  # after the screen, before any folder is made

    outcomes = dict(zip((i.path for i in accepted), fetch_all(run_folder, accepted, files), strict=True))

    assert outcomes["artifacts/a/out.bin"].error == "The destination moved outside the run folder during the download."
    assert outcomes["summary.csv"].error is None
    assert list(outside.iterdir()) == []
    assert (run_folder / "summary.csv").read_bytes() == b"s\n"


def test_a_symlink_loop_planted_after_the_screen_fails_its_file_not_the_download(tmp_path: Path) -> None:
    run_folder = tmp_path / "run"
    run_folder.mkdir()
    files = {"artifacts/a/out.bin": b"x" * 100, "summary.csv": b"s\n"}
    accepted, _ = screen(((p, len(b), None) for p, b in files.items()), ("artifacts", "summary"), run_folder)
    (run_folder / "artifacts").mkdir()
    (run_folder / "artifacts" / "a").symlink_to(run_folder / "artifacts" / "b")
    (run_folder / "artifacts" / "b").symlink_to(run_folder / "artifacts" / "a")

    outcomes = dict(zip((i.path for i in accepted), fetch_all(run_folder, accepted, files), strict=True))

    assert outcomes["artifacts/a/out.bin"].error == "The destination moved outside the run folder during the download."
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


def test_a_transfer_closed_before_its_files_leaves_no_folder_and_makes_none_later(tmp_path: Path) -> None:
    run_folder = tmp_path / "out" / "run"
    paths = [f"artifacts/f{n:04d}/out.bin" for n in range(2000)]
    accepted, _ = screen(((p, 1, None) for p in paths), ("artifacts",), run_folder)

    async def prepare_then_close() -> None:
        transfer = Transfer(serving({}), _never_refreshed, run_folder)  # type: ignore[arg-type]
        transfer.prepare(accepted)
        await asyncio.sleep(0.01)  # some folders are made meanwhile
        transfer.close()

    asyncio.run(prepare_then_close())
    assert list(tmp_path.iterdir()) == []
    time.sleep(0.2)  # a group still being made after close() would add folders meanwhile
    assert list(tmp_path.iterdir()) == []


def test_a_download_in_which_no_file_lands_leaves_no_folder_it_made(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), omit=set(sample_files()))

    report = run(fake, tmp_path)

    assert report.files_downloaded == 0 and len(report.files_failed) == len(fake.files)
    assert not run_dir(tmp_path).exists()


def test_folders_made_for_files_that_failed_are_removed_and_the_others_kept(tmp_path: Path) -> None:
    files = {**sample_files(), "artifacts/r2/out.bin": b"y" * 10}
    fake = FakePlatform(files, omit={"artifacts/r2/out.bin"})

    report = run(fake, tmp_path)

    assert [f.path for f in report.files_failed] == ["artifacts/r2/out.bin"]
    assert not (run_dir(tmp_path) / "artifacts" / "r2").exists()
    assert on_disk(tmp_path) == {p: b for p, b in files.items() if p != "artifacts/r2/out.bin"}
