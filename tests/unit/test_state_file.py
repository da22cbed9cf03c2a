"""What the state file may hold: a newer version is named as one, never called garbled, and an id
that a command would send to the platform is refused when no request could carry it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler import cli
from reconciler.engine.state import SpecRecord, load_state
from reconciler.errors import ConfigError

MAX_ID_LENGTH = 256  # engine.state.MAX_ID_LENGTH
RECORD = {"run_id": "r-1", "run_name": "tb-smoke-1", "fingerprint": "0123456789abcdef"}


def refusal(tmp_path: Path, doc: dict[str, Any]) -> ConfigError:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError) as refused:
        load_state(path)
    return refused.value


# --- the version ------------------------------------------------------------------------------


def test_a_newer_state_file_with_a_key_unknown_here_is_reported_by_its_version(tmp_path: Path) -> None:
    error = refusal(tmp_path, {"version": 2, "new_thing": {}})
    assert error.message == f"state file {tmp_path / 'state.json'} has version 2; this reconciler reads 1"


def test_a_newer_state_file_asks_for_an_upgrade_and_never_to_be_deleted(tmp_path: Path) -> None:
    error = refusal(tmp_path, {"version": 2, "new_thing": {}})
    assert error.hint is not None and "upgrade reconciler" in error.hint
    assert "delete" not in error.hint


def test_an_older_state_file_with_a_key_unknown_here_is_reported_by_its_version(tmp_path: Path) -> None:
    error = refusal(tmp_path, {"version": 0, "old_thing": {}})
    assert "has version 0; this reconciler reads 1" in error.message and "unreadable" not in error.message


# --- ids sent to the platform --------------------------------------------------------------------

BAD = "tb\ud800"  # a lone surrogate: no URL can be encoded from it


def placed(field: str, value: str) -> tuple[dict[str, Any], str]:
    """A state document holding `value` in the id field `field`, and that field's path."""
    docs: dict[str, tuple[dict[str, Any], str]] = {
        "run_id": ({"specs": {"a": {**RECORD, "run_id": value}}}, "specs.a.run_id"),
        "benchmark_id": ({"specs": {"a": {**RECORD, "benchmark_id": value}}}, "specs.a.benchmark_id"),
        "replaced": (
            {"specs": {"a": {**RECORD, "replaced": {"run_id": value, "run_name": "n", "commit": "c"}}}},
            "specs.a.replaced.run_id",
        ),
        "intent": (
            {"intents": [{"spec_id": "a", "fingerprint": "f", "benchmark_id": value}]},
            "intents.0.benchmark_id",
        ),
    }
    doc, where = docs[field]
    return {"version": 1, **doc}, where


FIELDS = ["run_id", "benchmark_id", "replaced", "intent"]


@pytest.mark.parametrize("field", FIELDS)
def test_an_id_with_a_lone_surrogate_is_refused_naming_its_field(tmp_path: Path, field: str) -> None:
    doc, where = placed(field, BAD)
    error = refusal(tmp_path, doc)
    assert error.message == (
        f"state file {tmp_path / 'state.json'} is unreadable:"
        f" {where}: an id sent to the platform cannot hold a lone surrogate U+D800"
    )


@pytest.mark.parametrize("field", FIELDS)
def test_an_id_with_a_control_character_is_refused_naming_its_field(tmp_path: Path, field: str) -> None:
    doc, where = placed(field, "tb\n-smoke")
    error = refusal(tmp_path, doc)
    assert f"is unreadable: {where}: an id sent to the platform cannot hold the control character U+000A" in (
        error.message
    )


@pytest.mark.parametrize("field", FIELDS)
def test_a_100000_character_id_is_refused_naming_its_field_without_repeating_it(tmp_path: Path, field: str) -> None:
    doc, where = placed(field, "x" * 100_000)
    error = refusal(tmp_path, doc)
    assert f"is unreadable: {where}: an id sent to the platform has at most {MAX_ID_LENGTH} characters" in (
        error.message
    )
    assert len(error.message) < 300


def test_ids_are_read_up_to_the_bound_and_refused_past_it(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 1, "specs": {"a": {**RECORD, "run_id": "x" * MAX_ID_LENGTH}}}))
    assert load_state(path).specs["a"].run_id == "x" * MAX_ID_LENGTH
    doc, _ = placed("run_id", "x" * (MAX_ID_LENGTH + 1))
    assert "has at most 256 characters, not 257" in refusal(tmp_path, doc).message


@pytest.mark.parametrize("ref", ["tb\x1b[2J", "acme/" + "b" * 300, "tb\ud800"])
def test_a_benchmark_id_cache_entry_no_request_can_carry_is_dropped_and_the_file_still_loads(
    tmp_path: Path, ref: str
) -> None:
    """`benchmark_ids` is a cache filled from the specs' refs, which may be any length: an entry
    is asked again, never a reason to refuse the file (one saved by apply would be refused next)."""
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 1, "benchmark_ids": {ref: "b-1", "tb": "b-2"}}))
    assert load_state(path).benchmark_ids == {"tb": "b-2"}


def test_a_record_of_an_id_the_platform_answered_is_kept_whatever_its_length() -> None:
    """Only what is read from a file is checked: failing right after a paid submit would lose the run's record."""
    assert SpecRecord(run_id="r" * 5000, run_name="n", fingerprint="f").run_id == "r" * 5000


def test_a_refused_state_file_is_left_as_it_was(tmp_path: Path) -> None:
    doc, _ = placed("benchmark_id", BAD)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(doc))
    before = path.read_bytes()
    with pytest.raises(ConfigError):
        load_state(path)
    assert path.read_bytes() == before and list(tmp_path.iterdir()) == [path]


def test_merging_a_shard_state_with_an_id_no_request_can_carry_is_refused_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "reconciler.toml").write_text('platform = "local"\nworkspace = "shards"\n')
    (tmp_path / "specs").mkdir()
    shard = tmp_path / "shard-a.json"
    doc, where = placed("benchmark_id", BAD)
    shard.write_text(json.dumps(doc))
    monkeypatch.chdir(tmp_path)

    with pytest.raises(SystemExit) as exited:
        cli.main(["shards", "--merge-state", str(shard)])

    err = capsys.readouterr().err
    assert exited.value.code == 1
    assert f"error: state file {shard} is unreadable: {where}: an id sent to the platform cannot hold" in err
    assert "internal error" not in err
    assert not (tmp_path / ".reconciler" / "state.json").exists()
