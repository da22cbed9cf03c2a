"""Hostile manifests: every unsafe path is refused and reported, and nothing lands outside the run folder."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from reconciler.engine.downloads import DownloadError, DownloadReport, download_run
from reconciler.osmosis.transport import Response
from reconciler.outputs.bookkeeping import ledger_path
from reconciler.outputs.layout import run_dir_name
from reconciler.outputs.paths import DUPLICATE, NOT_REQUESTED, OUTSIDE_LAYOUT, SYMLINK
from tests.fake_transport import Broken, Sent

from .download_fake import FAST_RETRY, RUN_ID, RUN_NAME, FakePlatform

REQUESTED = ("summary", "results", "artifacts")
HOSTILE = {
    "../x": OUTSIDE_LAYOUT,
    "/abs": OUTSIDE_LAYOUT,
    "a\\b": OUTSIDE_LAYOUT,
    "artifacts/x": OUTSIDE_LAYOUT,
    "weird.txt": OUTSIDE_LAYOUT,
    "logs.txt": NOT_REQUESTED,
    "summary.csv": DUPLICATE,
    "artifacts/r1/escape.txt": SYMLINK,
}


def hostile_platform() -> FakePlatform:
    files = {path: b"evil" for path in HOSTILE} | {"results.csv": b"result_id\n"}
    manifest = [{"path": p, "size": 4} for p in HOSTILE]
    manifest.append({"path": "summary.csv", "size": 4})
    manifest.append({"path": "results.csv", "size": len(files["results.csv"])})
    return FakePlatform(files, manifest=manifest)


def snapshot(root: Path, skip: Path) -> dict[str, str]:
    """Every entry under root outside `skip`, with file contents or link targets."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here == skip or skip in here.parents:
            continue
        for name in dirnames + filenames:
            entry = here / name
            if entry == skip:
                continue
            key = entry.relative_to(root).as_posix()
            if entry.is_symlink():
                out[key] = f"-> {entry.readlink()}"
            elif entry.is_file():
                out[key] = entry.read_text()
            else:
                out[key] = "<dir>"
    return out


def download(fake: FakePlatform, root: Path) -> DownloadReport:
    async def go() -> DownloadReport:
        async with fake.client() as client:
            return await download_run(client, run=RUN_NAME, types=REQUESTED, output_root=root, retry=FAST_RETRY)

    return asyncio.run(go())


def prepared(tmp_path: Path) -> tuple[Path, Path]:
    """The output root, and a run folder whose `artifacts` is a symlink to a folder outside it."""
    root = tmp_path / "benchmarks"
    run_dir = root / run_dir_name(RUN_NAME, RUN_ID)
    run_dir.mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("mine")
    (run_dir / "artifacts").symlink_to(tmp_path / "outside", target_is_directory=True)
    return root, run_dir


def test_each_hostile_path_is_refused_with_its_reason(tmp_path: Path) -> None:
    root, _ = prepared(tmp_path)
    report = download(hostile_platform(), root)
    refused: dict[str, str] = {}
    for failure in report.files_failed:
        refused.setdefault(failure.path, failure.error)
    assert set(refused) == set(HOSTILE)
    for path, reason in HOSTILE.items():
        assert refused[path].startswith(reason), (path, refused[path])
    assert sum(f.path == "summary.csv" for f in report.files_failed) == 2


def test_a_hostile_manifest_ends_partial_but_keeps_the_safe_files(tmp_path: Path) -> None:
    root, run_dir = prepared(tmp_path)
    report = download(hostile_platform(), root)
    assert report.status == "partial" and report.files_downloaded == 1 and not report.recorded_complete
    assert (run_dir / "results.csv").read_bytes() == b"result_id\n"


def test_nothing_is_written_outside_the_run_folder_but_its_ledger(tmp_path: Path) -> None:
    root, run_dir = prepared(tmp_path)
    before = snapshot(tmp_path, run_dir)
    fake = hostile_platform()
    download(fake, root)
    after = snapshot(tmp_path, run_dir)
    ledger = ledger_path(run_dir)
    assert after.pop(ledger.relative_to(tmp_path).as_posix()).startswith("{")
    assert after.pop(ledger.parent.relative_to(tmp_path).as_posix()) == "<dir>"
    assert after == before
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["keep.txt"]
    assert [p for p, _ in fake.file_requests] == ["results.csv"]


def test_a_manifest_with_only_refused_paths_is_an_error_and_asks_for_no_urls(tmp_path: Path) -> None:
    # the official client: "If nothing is usable, the CLI fails with 'The download manifest
    # contained no usable run-scoped paths.' when some paths were rejected"
    fake = FakePlatform({}, manifest=[{"path": "../etc/passwd", "size": 4}, {"path": "/abs", "size": 1}])
    with pytest.raises(DownloadError, match=r"^The download manifest contained no usable run-scoped paths\. ") as err:
        download(fake, tmp_path)
    assert "../etc/passwd: Manifest path is outside the fixed run layout" in str(err.value)
    assert fake.url_batches == [] and list(tmp_path.iterdir()) == []


def test_a_symlink_that_appears_during_the_download_is_not_followed_out(tmp_path: Path) -> None:
    root = tmp_path / "benchmarks"
    run_dir = root / run_dir_name(RUN_NAME, RUN_ID)
    (tmp_path / "outside").mkdir()
    files = {"artifacts/r1/a.txt": b"a", "artifacts/r2/b.txt": b"b", "artifacts/r3/c.txt": b"c"}
    fake = FakePlatform(files)

    answer = fake.handle

    async def plant(request: Sent) -> Response | Broken:
        if request.path.endswith("/download-urls"):  # after screening, before any folder is made
            (run_dir / "artifacts").mkdir(parents=True, exist_ok=True)
            (run_dir / "artifacts" / "r2").symlink_to(tmp_path / "outside", target_is_directory=True)
            (run_dir / "artifacts" / "r3").symlink_to(run_dir / "artifacts" / "r1", target_is_directory=True)
        return await answer(request)

    fake.handle = plant  # type: ignore[method-assign]

    async def go() -> DownloadReport:
        async with fake.client() as client:
            return await download_run(
                client, run=RUN_NAME, types=("artifacts",), output_root=root, retry=FAST_RETRY, jobs=1
            )

    report = asyncio.run(go())
    failed = {f.path: f.error for f in report.files_failed}
    # a link that stays inside is refused too: r3/c.txt would otherwise land in r1
    assert set(failed) == {"artifacts/r2/b.txt", "artifacts/r3/c.txt"}
    assert all("never writes through" in error for error in failed.values())
    assert list((tmp_path / "outside").iterdir()) == []
    assert sorted(p.name for p in (run_dir / "artifacts" / "r1").iterdir()) == ["a.txt"]


def test_a_git_folder_in_a_manifest_is_reported_and_nothing_is_written_there(tmp_path: Path) -> None:
    files = {"artifacts/f/.git/config": b"[core]\n\tfsmonitor = touch pwned\n", "artifacts/f/ok.txt": b"ok"}
    report = download(FakePlatform(files), tmp_path)
    failed = {f.path: f.error for f in report.files_failed}
    assert list(failed) == ["artifacts/f/.git/config"] and "'.git' segment" in failed["artifacts/f/.git/config"]
    run_dir = tmp_path / run_dir_name(RUN_NAME, RUN_ID)
    assert sorted(p.name for p in (run_dir / "artifacts" / "f").iterdir()) == ["ok.txt"]
