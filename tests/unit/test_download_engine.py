"""The download engine against a scripted fake platform: flow, skips, resume, retries, report."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reconciler.engine.downloads import (
    NOT_YET,
    NOTHING,
    OMITTED,
    DownloadError,
    DownloadReport,
    OutputsNotAvailable,
    download_run,
)
from reconciler.outputs.bookkeeping import CHOSEN_FOLDER_LEDGER, ledger_path
from reconciler.outputs.layout import run_dir_name, types_on_disk
from reconciler.outputs.paths import partial_name
from reconciler.safe_paths import UnsafePathError

from .download_fake import FAST_RETRY, RUN_ID, RUN_NAME, FakePlatform, sample_files

ALL = ("summary", "results", "artifacts", "logs")


def run(fake: FakePlatform, root: Path, types: tuple[str, ...] = ALL, **kwargs: Any) -> DownloadReport:
    async def go() -> DownloadReport:
        async with fake.client() as client:
            return await download_run(client, run=RUN_NAME, types=types, output_root=root, retry=FAST_RETRY, **kwargs)

    return asyncio.run(go())


def run_dir(root: Path) -> Path:
    return root / run_dir_name(RUN_NAME, RUN_ID)


def on_disk(root: Path) -> dict[str, bytes]:
    base = run_dir(root)
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in base.rglob("*") if p.is_file()}


def test_every_requested_file_lands_byte_identical(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    report = run(fake, tmp_path)
    assert report.status == "success"
    assert on_disk(tmp_path) == fake.files
    assert report.files_downloaded == 5 and report.files_skipped == 0 and report.files_failed == ()
    assert report.bytes_downloaded == report.total_bytes == sum(len(b) for b in fake.files.values())
    assert report.breakdown["artifacts"].files == 2
    assert report.output_path == str(run_dir(tmp_path))


def test_the_folder_follows_the_official_name_rule(tmp_path: Path) -> None:
    run(FakePlatform(sample_files()), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".reconciler", "tb-smoke-7"]  # the ledger beside it


def test_output_dir_replaces_the_run_folder(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    report = run(fake, tmp_path / "root", output_dir=tmp_path / "mine")
    assert (tmp_path / "mine" / "summary.csv").read_bytes() == fake.files["summary.csv"]
    assert not (tmp_path / "root").exists() and report.output_path == str(tmp_path / "mine")


def test_a_pending_run_is_refused_before_any_manifest_request(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), status="queued")
    with pytest.raises(OutputsNotAvailable, match=NOT_YET):
        run(fake, tmp_path)
    assert fake.manifest_requests == 0 and not tmp_path.joinpath("tb-smoke-7").exists()


def test_an_empty_manifest_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match=NOTHING):
        run(FakePlatform({}), tmp_path)


def test_complete_files_are_skipped_without_asking_for_urls(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    run(fake, tmp_path)
    batches = list(fake.url_batches)
    report = run(fake, tmp_path)
    assert report.files_skipped == 5 and report.files_downloaded == 0 and report.status == "success"
    assert fake.url_batches == batches


def test_a_file_of_the_wrong_size_is_downloaded_again(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    run(fake, tmp_path)
    (run_dir(tmp_path) / "logs.txt").write_bytes(b"stale")
    report = run(fake, tmp_path)
    assert report.files_downloaded == 1 and on_disk(tmp_path) == fake.files


def test_overwrite_downloads_complete_files_again(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    run(fake, tmp_path)
    report = run(fake, tmp_path, overwrite=True)
    assert report.files_downloaded == 5 and report.files_skipped == 0


def test_only_requested_types_are_asked_for(tmp_path: Path) -> None:
    files = {"summary.csv": b"s", "results.csv": b"r"}
    report = run(FakePlatform(files), tmp_path, types=("summary", "results"))
    assert report.selected_types == ("summary", "results") and report.status == "success"


def test_url_requests_hold_at_most_500_items(tmp_path: Path) -> None:
    files = {f"artifacts/r{n}/out.txt": b"x" for n in range(501)}
    fake = FakePlatform(files)
    report = run(fake, tmp_path, types=("artifacts",))
    assert report.files_downloaded == 501
    assert fake.url_batches == [500, 1]


def test_parallel_transfers_stay_within_jobs(tmp_path: Path) -> None:
    files = {f"artifacts/r{n}/out.txt": b"x" * 10 for n in range(40)}
    fake = FakePlatform(files, delay=0.005)
    run(fake, tmp_path, types=("artifacts",), jobs=3)
    assert fake.max_in_flight == 3


def test_a_truncated_body_is_resumed_with_a_range_request(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"artifacts/r1/trajectory.json": ["truncate:1000"]})
    report = run(fake, tmp_path)
    assert report.status == "success" and on_disk(tmp_path) == fake.files
    asked = [r for p, r in fake.file_requests if p == "artifacts/r1/trajectory.json"]
    assert asked == [None, "bytes=1000-"]


def test_a_dropped_connection_is_resumed_where_it_broke(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"results.csv": ["drop:4096"]})
    report = run(fake, tmp_path)
    assert report.status == "success" and on_disk(tmp_path) == fake.files
    assert [r for p, r in fake.file_requests if p == "results.csv"] == [None, "bytes=4096-"]


def test_a_burst_of_server_errors_is_retried(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"summary.csv": ["500", "500", "500"]})
    report = run(fake, tmp_path)
    assert report.status == "success" and on_disk(tmp_path) == fake.files


def test_server_errors_that_never_stop_end_partial(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"summary.csv": ["500"] * 10})
    report = run(fake, tmp_path)
    assert report.status == "partial"
    assert [(f.path, f.error) for f in report.files_failed] == [("summary.csv", "The download failed with HTTP 500.")]
    assert not (run_dir(tmp_path) / "summary.csv").exists()
    assert not any(p.name.endswith(".partial") for p in run_dir(tmp_path).iterdir())


def test_an_expired_url_is_refreshed_once(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"logs.txt": ["403"]})
    report = run(fake, tmp_path)
    assert report.status == "success"
    assert fake.url_batches == [5, 1]


def test_a_url_refused_after_its_refresh_fails_the_file(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"logs.txt": ["403", "403"]})
    report = run(fake, tmp_path)
    assert report.status == "partial"
    assert "refused (HTTP 403) even after" in report.files_failed[0].error


def test_a_server_that_ignores_range_restarts_the_file(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"results.csv": ["truncate:100", "ignore-range"]})
    report = run(fake, tmp_path)
    assert report.status == "success" and on_disk(tmp_path) == fake.files


def test_a_resume_answered_with_the_wrong_range_starts_over(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"results.csv": ["truncate:100", "bad-range"]})
    report = run(fake, tmp_path)
    assert report.status == "success" and on_disk(tmp_path) == fake.files
    assert [r for p, r in fake.file_requests if p == "results.csv"] == [None, "bytes=100-", None]


def test_a_body_longer_than_the_manifest_never_lands(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"summary.csv": ["long"] * 10})
    report = run(fake, tmp_path)
    assert report.status == "partial" and "more than the" in report.files_failed[0].error
    assert not (run_dir(tmp_path) / "summary.csv").exists()


def test_a_404_fails_the_file_without_retrying(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"summary.csv": ["404"]})
    report = run(fake, tmp_path)
    assert report.files_failed[0].error == "The download failed with HTTP 404."
    assert [p for p, _ in fake.file_requests].count("summary.csv") == 1


def test_a_partial_left_by_an_earlier_process_is_resumed(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    path = "artifacts/r1/trajectory.json"
    data = fake.files[path]
    folder = run_dir(tmp_path) / "artifacts" / "r1"
    folder.mkdir(parents=True)
    (folder / partial_name("trajectory.json", len(data), f"tok-{path}")).write_bytes(data[:30000])
    report = run(fake, tmp_path)
    assert report.status == "success" and on_disk(tmp_path) == fake.files
    assert report.bytes_resumed == 30000
    assert [r for p, r in fake.file_requests if p == path] == ["bytes=30000-"]


def test_a_file_the_url_answer_omits_fails(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), omit={"logs.txt"})
    report = run(fake, tmp_path)
    assert [(f.path, f.error) for f in report.files_failed] == [("logs.txt", OMITTED)]


def test_urls_never_appear_in_errors(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"summary.csv": ["drop:0"] * 10})
    report = run(fake, tmp_path)
    assert report.status == "partial" and "s3cr3t" not in report.model_dump_json()


def test_a_complete_download_of_a_terminal_run_is_recorded(tmp_path: Path) -> None:
    report = run(FakePlatform(sample_files()), tmp_path, types=("summary", "results"))
    assert report.recorded_complete
    assert types_on_disk(run_dir(tmp_path), RUN_ID) == {"summary", "results"}


def test_a_running_run_downloads_a_snapshot_without_recording_it(tmp_path: Path) -> None:
    report = run(FakePlatform(sample_files(), status="running"), tmp_path)
    assert report.status == "success" and not report.recorded_complete
    assert types_on_disk(run_dir(tmp_path), RUN_ID) == frozenset()


def test_a_partial_download_is_not_recorded(tmp_path: Path) -> None:
    report = run(FakePlatform(sample_files(), faults={"summary.csv": ["404"]}), tmp_path)
    assert not report.recorded_complete and types_on_disk(run_dir(tmp_path), RUN_ID) == frozenset()


def test_the_ledger_lives_beside_the_run_folder_not_inside_it(tmp_path: Path) -> None:
    run(FakePlatform(sample_files()), tmp_path, types=("summary", "results"))
    assert sorted(p.name for p in run_dir(tmp_path).iterdir()) == ["results.csv", "summary.csv"]
    assert ledger_path(run_dir(tmp_path)) == tmp_path / ".reconciler" / f"{run_dir(tmp_path).name}.json"
    assert ledger_path(run_dir(tmp_path)).is_file()


def test_a_download_with_nothing_new_writes_nothing(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    run(fake, tmp_path)

    def everything() -> dict[str, tuple[int, int, bytes]]:
        return {
            p.relative_to(tmp_path).as_posix(): (p.stat().st_mtime_ns, p.stat().st_ino, p.read_bytes())
            for p in tmp_path.rglob("*")
            if p.is_file()
        }

    before = everything()
    report = run(fake, tmp_path)
    assert report.status == "success" and report.files_downloaded == 0 and report.files_skipped == len(before) - 1
    assert everything() == before


def test_the_report_is_json_ready(tmp_path: Path) -> None:
    doc = json.loads(run(FakePlatform(sample_files()), tmp_path).model_dump_json())
    assert doc["run"] == {"id": RUN_ID, "name": RUN_NAME}
    assert doc["run_status"] == "finished" and doc["status"] == "success"
    assert set(doc) >= {
        "files_downloaded",
        "files_skipped",
        "files_failed",
        "bytes_downloaded",
        "total_files",
        "total_bytes",
    }


def test_an_output_root_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "root").write_text("x")
    with pytest.raises(DownloadError, match="is not a folder"):
        run(FakePlatform(sample_files()), tmp_path / "root")


def test_partials_of_an_older_version_are_removed_once_the_file_lands(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files())
    folder = run_dir(tmp_path)
    folder.mkdir(parents=True)
    stale = folder / partial_name("logs.txt", 3, "tok-old")
    stale.write_bytes(b"old")
    run(fake, tmp_path)
    assert not stale.exists() and on_disk(tmp_path) == fake.files


def test_a_file_whose_manifest_token_changed_is_downloaded_again_at_the_same_size(tmp_path: Path) -> None:
    fake = FakePlatform({"summary.csv": b"pass_at_1\n0.25\n"}, status="running")
    run(fake, tmp_path, types=("summary",))
    fake.files["summary.csv"] = b"pass_at_1\n0.75\n"
    fake.manifest = [{"path": "summary.csv", "size": 15, "token": "finished-version"}]
    fake.status = "finished"
    report = run(fake, tmp_path, types=("summary",))
    assert report.files_downloaded == 1 and (run_dir(tmp_path) / "summary.csv").read_bytes() == b"pass_at_1\n0.75\n"


def test_a_file_we_did_not_write_follows_the_size_rule(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "summary.csv").write_bytes(b"x" * len(sample_files()["summary.csv"]))
    report = run(FakePlatform(sample_files()), tmp_path, types=("summary",))
    assert report.files_skipped == 1 and report.files_downloaded == 0


def test_a_compressed_answer_is_checked_and_stored_decoded(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"results.csv": ["gzip"]})
    report = run(fake, tmp_path)
    assert report.status == "success" and on_disk(tmp_path) == fake.files


def test_a_ledger_left_inside_the_run_folder_by_an_older_version_moves_beside_it(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / ".reconciler-download.json").write_text(json.dumps({"run_id": RUN_ID, "types": ["logs"]}))
    (folder / ".reconciler-files.json").write_text(json.dumps({"files": {"logs.txt": "old-token"}}))
    (folder / "logs.txt").write_text("the logs that version downloaded\n")
    assert types_on_disk(folder, RUN_ID) == {"logs"}
    run(FakePlatform(sample_files()), tmp_path, types=("summary",))
    assert not (folder / ".reconciler-download.json").exists() and not (folder / ".reconciler-files.json").exists()
    assert types_on_disk(folder, RUN_ID) == {"logs", "summary"}


# --- what lies in the run folder is never written through (the first promise) ---------------


def planted(tmp_path: Path, how: Callable[[Path, Path], None]) -> tuple[FakePlatform, Path, Path]:
    """(platform, run folder, a file outside it) with `how(victim, partial)` done at summary.csv's partial's name."""
    fake = FakePlatform(sample_files())
    folder = run_dir(tmp_path / "repo")
    folder.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"precious")
    how(victim, folder / partial_name("summary.csv", len(fake.files["summary.csv"]), "tok-summary.csv"))
    return fake, folder, victim


def test_a_symlink_planted_at_a_partials_name_is_never_written_through(tmp_path: Path) -> None:
    fake, folder, victim = planted(tmp_path, lambda victim, partial: partial.symlink_to(victim))
    report = run(fake, tmp_path / "repo")
    assert victim.read_bytes() == b"precious"
    assert not (folder / "summary.csv").exists()
    [failure] = report.files_failed
    assert failure.path == "summary.csv" and "is a symlink" in failure.error and "Remove it" in failure.error


def test_a_folder_swapped_for_a_link_during_the_transfer_sends_nothing_where_the_link_leads(tmp_path: Path) -> None:
    fake = FakePlatform({"artifacts/r1/trace.json": b"{}" * 10})
    folder = run_dir(tmp_path / "repo") / "artifacts" / "r1"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    def swap(path: str) -> None:  # while the body is on its way: the file is open in the checked folder
        folder.rename(tmp_path / "moved")
        folder.symlink_to(elsewhere, target_is_directory=True)

    fake.on_file_request = swap
    run(fake, tmp_path / "repo")
    assert list(elsewhere.iterdir()) == []
    assert (tmp_path / "moved" / "trace.json").read_bytes() == b"{}" * 10  # it stayed in the folder that was checked


def test_a_long_file_name_lands(tmp_path: Path) -> None:
    """The partial's name adds 18 bytes: a legal 245-byte name must still fit."""
    name = f"artifacts/r1/{'n' * 241}.txt"
    fake = FakePlatform({name: b"data"})
    assert run(fake, tmp_path).status == "success" and on_disk(tmp_path) == {name: b"data"}


# --- a folder that holds another run's outputs ------------------------------------------------


def other_runs_folder(root: Path) -> Path:
    """The run folder as another run of the same name left it: its ledger, and a summary of the same size."""
    folder = run_dir(root)
    folder.mkdir(parents=True)
    theirs = b"y" * len(sample_files()["summary.csv"])
    (folder / "summary.csv").write_bytes(theirs)
    ledger_path(folder).parent.mkdir()
    ledger_path(folder).write_text(json.dumps({"run_id": "run-of-another-day", "types": ["summary"], "files": {}}))
    return folder


def test_a_folder_holding_another_runs_outputs_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    folder = other_runs_folder(tmp_path)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    fake = FakePlatform(sample_files())
    with pytest.raises(DownloadError, match="holds the outputs of another run") as caught:
        run(fake, tmp_path, types=("summary",))
    assert caught.value.hint is not None and "--overwrite" in caught.value.hint
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    assert fake.manifest_requests == 0 and folder.is_dir()


def test_overwrite_replaces_another_runs_outputs_even_at_the_same_size(tmp_path: Path) -> None:
    folder = other_runs_folder(tmp_path)
    fake = FakePlatform(sample_files())
    report = run(fake, tmp_path, types=("summary",), overwrite=True)
    assert report.files_downloaded == 1 and (folder / "summary.csv").read_bytes() == fake.files["summary.csv"]
    assert types_on_disk(folder, RUN_ID) == {"summary"}


# --- the ledger's place ------------------------------------------------------------------------


def test_a_folder_the_user_named_keeps_its_ledger_inside_it(tmp_path: Path) -> None:
    """`download -o state` at a project's root must not write `.reconciler/state.json` (the state file)."""
    state = tmp_path / ".reconciler" / "state.json"
    state.parent.mkdir()
    state.write_text('{"version": 1}\n')
    run(FakePlatform(sample_files()), tmp_path, output_dir=tmp_path / "state")
    assert state.read_text() == '{"version": 1}\n'
    assert ledger_path(tmp_path / "state", chosen=True) == tmp_path / "state" / CHOSEN_FOLDER_LEDGER
    assert types_on_disk(tmp_path / "state", RUN_ID) == frozenset()  # plan reads only the outputs root's ledgers
    assert run(FakePlatform(sample_files()), tmp_path, output_dir=tmp_path / "state").files_skipped == 5


def test_a_ledger_folder_that_is_a_symlink_is_refused_before_any_file_is_written(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "outputs"
    root.mkdir()
    (root / ".reconciler").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UnsafePathError, match="symlink"):
        run(FakePlatform(sample_files()), root)
    assert list(elsewhere.iterdir()) == [] and not run_dir(root).exists()


def test_runs_downloaded_into_a_folder_the_user_named_keep_their_ledgers_inside_them(tmp_path: Path) -> None:
    """`download -o . A B` at a project's root: a run named `state` must not write `.reconciler/state.json`."""
    run(FakePlatform(sample_files()), tmp_path, chosen_root=True)
    assert not (tmp_path / ".reconciler").exists()
    assert ledger_path(run_dir(tmp_path), chosen=True).is_file()


def test_a_named_folder_whose_old_ledger_beside_it_names_another_run_is_refused(tmp_path: Path) -> None:
    """Earlier versions kept a named folder's ledger beside it: it still says whose files these are."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.csv").write_bytes(b"y" * len(sample_files()["summary.csv"]))
    (tmp_path / ".reconciler").mkdir()
    (tmp_path / ".reconciler" / "mine.json").write_text(json.dumps({"run_id": "other-run", "types": ["summary"]}))
    with pytest.raises(DownloadError, match="holds the outputs of another run"):
        run(FakePlatform(sample_files()), tmp_path / "root", types=("summary",), output_dir=mine)


def test_a_hard_link_planted_at_a_partials_name_is_never_written_through(tmp_path: Path) -> None:
    fake, folder, victim = planted(tmp_path, os.link)
    report = run(fake, tmp_path / "repo", types=("summary",))
    assert victim.read_bytes() == b"precious" and not (folder / "summary.csv").exists()
    [failure] = report.files_failed
    assert "a hard link to another file" in failure.error
