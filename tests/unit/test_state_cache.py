"""The committed state file holds only positive facts; the per-machine cache of runs that are
not ours lives outside the repository and is never worth failing for."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from reconciler.core.identity import Marker
from reconciler.core.world import RunAgents
from reconciler.engine.machine_cache import CACHE_DIR_ENV, CACHE_VERSION, MachineCache
from reconciler.engine.observe import Ownership
from reconciler.engine.state import State, load_state
from reconciler.osmosis.client import OsmosisClient
from tests.fake_transport import FakeTransport, reply

MARKER = {"owner": "acme/evals", "spec_id": "runs/a", "fingerprint": "0123456789abcdef"}


@pytest.mark.parametrize("entry", [None, "garbled", 7, {"owner": "acme/evals"}, []])
def test_a_null_or_garbled_marker_entry_reads_as_unknown(tmp_path: Path, entry: object) -> None:
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"version": 1, "markers": {"r1": MARKER, "r2": entry}}))
    assert load_state(path).markers == {"r1": Marker.model_validate(MARKER)}


def test_a_garbled_move_or_agents_entry_reads_as_unknown(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    doc = {"version": 1, "moved": {"r1": "runs/b", "r2": None}, "run_agents": {"r1": {"selection": "x"}}}
    path.write_text(json.dumps(doc))
    state = load_state(path)
    assert state.moved == {"r1": "runs/b"} and state.run_agents == {}


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_runs_known_not_to_be_ours_are_remembered_per_platform_scope_and_owner(cache_dir: Path) -> None:
    cache = MachineCache.open(platform="https://p.example", scope="acme/evals", owner="acme/evals")
    cache.not_ours.update({"r1", "r2"})
    cache.save()
    assert MachineCache.open(platform="https://p.example", scope="acme/evals", owner="acme/evals").not_ours == {
        "r1",
        "r2",
    }
    assert MachineCache.open(platform="https://other.example", scope="acme/evals", owner="acme/evals").not_ours == set()
    assert MachineCache.open(platform="https://p.example", scope="acme/evals", owner="acme/other").not_ours == set()
    assert list(cache_dir.iterdir()) == [cache.path]


def test_a_cache_that_learned_nothing_is_not_rewritten_and_a_swapped_run_is_saved(cache_dir: Path) -> None:
    cache = MachineCache.open(platform="p", scope="s", owner="o")
    cache.not_ours.update({"r1", "r2"})
    cache.save()
    assert cache.path is not None
    written = cache.path.stat().st_ino
    again = MachineCache.open(platform="p", scope="s", owner="o")
    again.save()
    assert cache.path.stat().st_ino == written  # a save replaces the file: the same inode means none
    again.not_ours.discard("r1")
    again.not_ours.add("r3")  # same size, other run
    again.save()
    assert MachineCache.open(platform="p", scope="s", owner="o").not_ours == {"r2", "r3"}


def test_an_unreadable_cache_is_an_empty_one(cache_dir: Path) -> None:
    cache = MachineCache.open(platform="p", scope="s", owner="o")
    assert cache.path is not None
    cache_dir.mkdir(parents=True)
    cache.path.write_text("[" * 100_000)
    assert MachineCache.open(platform="p", scope="s", owner="o").not_ours == set()


def test_a_cache_that_cannot_be_written_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(CACHE_DIR_ENV, str(blocker / "cache"))
    cache = MachineCache.open(platform="p", scope="s", owner="o")
    cache.not_ours.add("r1")
    cache.save()  # no exception: the next plan simply asks the platform again
    assert MachineCache.open(platform="p", scope="s", owner="o").not_ours == set()


def test_without_an_explicit_directory_the_cache_follows_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = MachineCache.open(platform="p", scope="s", owner="o")
    assert cache.path is not None and cache.path.parent == tmp_path / "xdg" / "reconciler"


def test_markers_of_our_runs_are_remembered_beside_the_runs_that_are_not_ours(cache_dir: Path) -> None:
    cache = MachineCache.open(platform="p", scope="s", owner="o")
    cache.not_ours.add("r1")
    cache.ours["r2"] = "runs/a@0123456789abcdef"
    cache.benchmarks["terminal-bench-2-1"] = "b1"
    cache.save()
    again = MachineCache.open(platform="p", scope="s", owner="o")
    assert again.not_ours == {"r1"} and again.ours == {"r2": "runs/a@0123456789abcdef"}
    assert again.benchmarks == {"terminal-bench-2-1": "b1"}


def hand_written(entries: Mapping[str, object]) -> MachineCache:
    """This machine's cache for platform p, scope s and owner o, as a file holding `entries`
    would read (written as a hand edit would leave it)."""
    cache = MachineCache.open(platform="p", scope="s", owner="o")
    assert cache.path is not None
    cache.path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"version": CACHE_VERSION, "platform": "p", "scope": "s", "owner": "o", **entries}
    cache.path.write_text(json.dumps(doc))
    return MachineCache.open(platform="p", scope="s", owner="o")


@pytest.mark.parametrize("entry", [None, 7, "no-at-sign", ["runs/a@f"]])
def test_a_garbled_entry_of_ours_reads_as_unknown(cache_dir: Path, entry: object) -> None:
    assert hand_written({"not_ours": [], "ours": {"r1": "a@f", "r2": entry}}).ours == {"r1": "a@f"}


def test_a_run_the_cache_calls_both_ours_and_not_ours_is_not_trusted_as_ours(cache_dir: Path) -> None:
    again = hand_written({"not_ours": ["r1"], "ours": {"r1": "a@f"}})
    assert again.ours == {} and again.not_ours == {"r1"}


def test_what_our_finished_runs_ran_is_remembered_and_a_garbled_entry_is_read_again(cache_dir: Path) -> None:
    cache = MachineCache.open(platform="p", scope="s", owner="acme/evals")
    cache.ours = {"r1": "runs/a@0123456789abcdef", "r2": "runs/b@0123456789abcdef"}
    cache.agents = {"r1": {"selection": False, "agents": [["codex", "gpt-5.2"]]}, "r2": {"selection": "x"}}
    cache.save()
    state = State()
    client = OsmosisClient("https://p.example", token="t", workspace="s", transport=FakeTransport(lambda _: reply(500)))
    Ownership(client, state, MachineCache.open(platform="p", scope="s", owner="acme/evals"), "acme/evals")
    assert state.run_agents == {"r1": RunAgents(selection=False, agents=(("codex", "gpt-5.2"),))}
    assert set(state.markers) == {"r1", "r2"}


def test_another_owner_is_kept_only_for_a_run_listed_as_not_ours_and_named_by_a_string(cache_dir: Path) -> None:
    entries = {"not_ours": ["r1", "r2"], "foreign": {"r1": "acme/other", "r2": 7, "r3": "acme/other"}}
    assert hand_written(entries).foreign == {"r1": "acme/other"}


def test_a_run_the_cache_calls_not_ours_but_marked_by_us_is_read_again(cache_dir: Path) -> None:
    again = hand_written({"not_ours": ["r1", "r2"], "foreign": {"r1": "o", "r2": "acme/other"}})
    assert again.not_ours == {"r2"} and again.foreign == {"r2": "acme/other"}
