"""`reconciler download` end to end through the CLI entry point, against the scripted fake platform."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from reconciler.cli import main
from reconciler.osmosis.client import OsmosisClient

from .download_fake import RUN_NAME, FakePlatform, sample_files


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePlatform]:
    platform = FakePlatform(sample_files())

    @asynccontextmanager
    async def client_only(*_: Any) -> AsyncIterator[OsmosisClient]:
        async with platform.client() as client:
            yield client

    monkeypatch.setattr("reconciler.engine.download_targets._client_only", client_only)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reconciler.toml").write_text('platform = "local"\nworkspace = "w"\n')
    yield platform


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main(["download", *args])
    out, err = capsys.readouterr()
    return int(exit_info.value.code or 0), out, err


def test_text_output_is_one_line_per_run(fake: FakePlatform, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, RUN_NAME)
    assert code == 0
    assert out.splitlines() == ["tb-smoke-7: success: downloaded 2 files (4.5 kB) to .osmosis/benchmarks/tb-smoke-7"]


def test_json_output_is_one_document(fake: FakePlatform, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, RUN_NAME, "--type", "all", "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "success"
    assert doc["runs"][0]["files_downloaded"] == 5 and doc["runs"][0]["selected_types"] == [
        "summary",
        "results",
        "artifacts",
        "logs",
    ]


def test_a_partial_download_exits_1_and_lists_each_failure(
    fake: FakePlatform, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.faults["summary.csv"] = ["404"]
    code, out, err = cli(capsys, RUN_NAME)
    assert code == 1
    assert "  failed summary.csv: The download failed with HTTP 404." in out.splitlines()
    assert "did not complete" in err


def test_output_names_the_run_folder(fake: FakePlatform, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, _ = cli(capsys, RUN_NAME, "--output", "here")
    assert code == 0 and sorted(p.name for p in (tmp_path / "here").iterdir()) == [
        ".reconciler-ledger.json",  # a folder the user named keeps reconciler's ledger inside it
        "results.csv",
        "summary.csv",
    ]


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("output", "says"),
    [
        ("specs/x", "--output specs/x overlaps the specs folder (specs)"),
        ("specs/runs", "--output specs/runs overlaps the specs folder (specs)"),
        (".git/x", "--output .git/x overlaps git's folder (.git)"),
        ("vendor/lib/.git/x", "--output vendor/lib/.git/x overlaps git's folder (vendor/lib/.git)"),
        ("templates", "--output templates overlaps the templates folder (templates)"),
    ],
)
def test_output_in_the_projects_own_files_is_refused_and_nothing_is_written(
    fake: FakePlatform, capsys: pytest.CaptureFixture[str], tmp_path: Path, output: str, says: str
) -> None:
    before = _files(tmp_path)
    code, out, err = cli(capsys, RUN_NAME, "--type", "all", "--output", output)
    assert code == 64 and says in err and "pass --output a folder of its own" in err, out + err
    assert _files(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reconciler.toml"]


def test_output_outside_the_repository_is_the_users_choice(
    fake: FakePlatform, capsys: pytest.CaptureFixture[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "specs"
    code, _, err = cli(capsys, RUN_NAME, "--output", str(elsewhere))
    assert code == 0, err
    assert sorted(p.name for p in elsewhere.iterdir()) == [".reconciler-ledger.json", "results.csv", "summary.csv"]


def test_an_unknown_type_is_a_usage_error(fake: FakePlatform, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, RUN_NAME, "--type", "summary,bogus")
    assert code == 64 and "Unknown --type value(s): bogus. Choose from: summary, results, artifacts, logs, all" in err
    assert fake.manifest_requests == 0


def test_all_combined_with_a_type_is_a_usage_error(fake: FakePlatform, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, RUN_NAME, "--type", "all,logs")
    assert code == 64 and "--type all cannot be combined" in err


def test_no_arguments_without_specs_asks_for_run_names(fake: FakePlatform, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys)
    assert code == 64 and "reconciler download RUN" in err


def test_output_here_in_a_folder_that_holds_no_project_files_is_allowed(
    fake: FakePlatform, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "reconciler.toml").unlink()  # a plain folder: no specs, no state, no templates
    code, _, err = cli(capsys, RUN_NAME, "--output", ".")
    assert code == 0, err
    assert (tmp_path / "results.csv").is_file()
