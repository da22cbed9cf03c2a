"""The download engine against the real local platform, in-process (the ASGI transport)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from reconciler.engine.downloads import DownloadReport, download_run
from reconciler.localplatform import Faults
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.models import DownloadUrls
from reconciler.outputs.layout import run_dir_name, types_on_disk

from .download_support import ALL, NO_WAIT, Clock, Recording, finished_run, local_client, on_disk, served_files


def download(client: OsmosisClient, run: str, root: Path, types: Sequence[str] = ALL, jobs: int = 4) -> DownloadReport:
    async def go() -> DownloadReport:
        async with client:
            return await download_run(client, run=run, types=types, output_root=root, jobs=jobs, retry=NO_WAIT)

    return asyncio.run(go())


def test_a_finished_run_lands_byte_identical_in_the_official_layout(tmp_path: Path) -> None:
    db, clock = tmp_path / "p.sqlite3", Clock()
    run_id, name = finished_run(db, clock)
    report = download(local_client(db, clock), name, tmp_path / "out")
    run_dir = tmp_path / "out" / run_dir_name(name, run_id)
    assert report.status == "success" and report.output_path == str(run_dir)
    assert on_disk(run_dir) == served_files(db, clock, run_id)
    assert types_on_disk(run_dir, run_id) == set(ALL)


def test_truncated_bodies_are_resumed_until_complete(tmp_path: Path) -> None:
    db, clock = tmp_path / "p.sqlite3", Clock()
    run_id, name = finished_run(db, clock)
    faults = Faults(truncate_rate=0.6, seed=3)
    recording: list[Recording] = []
    report = download(local_client(db, clock, faults, recording=recording), name, tmp_path / "out")
    assert report.status == "success"
    assert any(asked is not None and status == 206 for _, asked, status in recording[0].file_requests())
    assert on_disk(Path(report.output_path)) == served_files(db, clock, run_id)


def test_a_burst_of_5xx_answers_is_retried(tmp_path: Path) -> None:
    db, clock = tmp_path / "p.sqlite3", Clock()
    run_id, name = finished_run(db, clock)
    faults = Faults(error_rate=0.3, seed=5)
    recording: list[Recording] = []
    report = download(local_client(db, clock, faults, recording=recording), name, tmp_path / "out", jobs=1)
    assert report.status == "success"
    assert sum(status == 503 for _, _, status in recording[0].file_requests()) >= 2
    assert on_disk(Path(report.output_path)) == served_files(db, clock, run_id)


def test_urls_that_expired_before_use_are_refreshed(tmp_path: Path) -> None:
    db, clock = tmp_path / "p.sqlite3", Clock()
    run_id, name = finished_run(db, clock)
    client = local_client(db, clock)
    original = client.get_download_urls
    batches: list[int] = []

    async def then_expire(run: str, items: Sequence[tuple[str, str | None]]) -> DownloadUrls:
        urls = await original(run, items)
        batches.append(len(items))
        if len(batches) == 1:
            clock.now += 16 * 60  # every URL of the first batch is now past its 15 minutes
        return urls

    client.get_download_urls = then_expire  # type: ignore[method-assign,assignment]
    report = download(client, name, tmp_path / "out")
    assert report.status == "success"
    assert batches[0] == report.total_files and batches[1:] == [1] * report.total_files
    assert on_disk(Path(report.output_path)) == served_files(db, clock, run_id)


def test_a_second_download_skips_every_complete_file(tmp_path: Path) -> None:
    db, clock = tmp_path / "p.sqlite3", Clock()
    _, name = finished_run(db, clock)
    download(local_client(db, clock), name, tmp_path / "out")
    again = download(local_client(db, clock), name, tmp_path / "out")
    assert again.files_skipped == again.total_files and again.files_downloaded == 0


def test_a_pending_run_is_refused_with_the_official_message(tmp_path: Path) -> None:
    from reconciler.engine.downloads import NOT_YET, OutputsNotAvailable

    from .download_support import payload

    db, clock = tmp_path / "p.sqlite3", Clock()

    async def go() -> None:
        async with local_client(db, clock) as client:
            run = await client.submit_run(payload())
            try:
                await download_run(client, run=run.id, types=ALL, output_root=tmp_path / "out")
            except OutputsNotAvailable as exc:
                assert exc.message == NOT_YET
            else:
                raise AssertionError("a pending run has no outputs")

    asyncio.run(go())
    assert not (tmp_path / "out").exists()


def downloaded_run(tmp_path: Path) -> tuple[Path, Clock, str, str, Path]:
    """A finished run downloaded whole: (database, clock, run id, run name, its folder)."""
    db, clock = tmp_path / "p.sqlite3", Clock()
    run_id, name = finished_run(db, clock)
    download(local_client(db, clock), name, tmp_path / "out")
    return db, clock, run_id, name, tmp_path / "out" / run_dir_name(name, run_id)


def test_a_recorded_file_deleted_since_is_no_longer_counted_as_downloaded(tmp_path: Path) -> None:
    _, _, run_id, _, run_dir = downloaded_run(tmp_path)
    (run_dir / "results.csv").unlink()
    assert types_on_disk(run_dir, run_id) == set(ALL) - {"results"}


def test_a_folder_in_place_of_a_recorded_file_is_repaired_by_the_next_download(tmp_path: Path) -> None:
    db, clock, run_id, name, run_dir = downloaded_run(tmp_path)
    (run_dir / "summary.csv").unlink()
    (run_dir / "summary.csv").mkdir()
    assert "summary" not in types_on_disk(run_dir, run_id)
    (run_dir / "summary.csv").rmdir()
    download(local_client(db, clock), name, tmp_path / "out", types=("summary",))
    assert on_disk(run_dir) == served_files(db, clock, run_id)
    assert types_on_disk(run_dir, run_id) == set(ALL)
