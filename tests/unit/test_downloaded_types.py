"""What a plan knows is on disk: listing the outputs folder once gives what asking every run gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.outputs.bookkeeping import Ledger, save_ledger
from reconciler.outputs.layout import downloaded_types, run_dir_name, types_on_disk

RUNS = [(f"run-{n}", f"id-{n}") for n in range(6)] + [("Odd Name!", "id-odd")]
# what each run has on disk: nothing, a ledger, only an older version's record in its folder,
# its folder with no record, or a ledger that names another run
STATES = st.lists(
    st.sampled_from(["none", "ledger", "legacy", "folder", "stranger"]), min_size=len(RUNS), max_size=len(RUNS)
)


def lay_out(root: Path, states: list[str]) -> None:
    for (name, run_id), state in zip(RUNS, states, strict=True):
        folder = root / run_dir_name(name, run_id)
        if state == "ledger":
            save_ledger(folder, Ledger(run_id=run_id, types=frozenset({"summary"})))
        elif state == "stranger":
            save_ledger(folder, Ledger(run_id="someone-else", types=frozenset({"summary"})))
        elif state == "legacy":
            folder.mkdir(parents=True)
            (folder / ".reconciler-download.json").write_text(json.dumps({"run_id": run_id, "types": ["logs"]}))
        elif state == "folder":
            folder.mkdir(parents=True)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=40)
@given(STATES)
def test_one_listing_finds_what_asking_each_run_finds(
    tmp_path_factory: pytest.TempPathFactory, states: list[str]
) -> None:
    root = tmp_path_factory.mktemp("outputs") / ".osmosis" / "benchmarks"
    root.mkdir(parents=True)
    lay_out(root, states)
    each = {run_id: t for name, run_id in RUNS if (t := types_on_disk(root / run_dir_name(name, run_id), run_id))}
    assert downloaded_types(root, RUNS) == each


def test_no_outputs_folder_means_nothing_downloaded(tmp_path: Path) -> None:
    assert downloaded_types(tmp_path / "missing", RUNS) == {}


def test_an_outputs_path_that_is_a_file_reads_as_nothing_downloaded(tmp_path: Path) -> None:
    (tmp_path / "benchmarks").write_text("not a folder")
    assert downloaded_types(tmp_path / "benchmarks", RUNS) == {}
