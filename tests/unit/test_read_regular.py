"""Files any process may swap for a FIFO or a device (this machine's cache, a download ledger,
GitHub's event file) are read only when they are regular files: never a hang, never endless."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from reconciler.engine.machine_cache import CACHE_DIR_ENV, MachineCache
from reconciler.errors import ReconcilerError
from reconciler.github.event import read_event
from reconciler.outputs.bookkeeping import ledger_path, load_ledger


def finishes(call: Callable[[], Any]) -> Any:
    """`call()`, from a thread that must come back: a read that blocks would hang the command."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(_outcome(call)), daemon=True)
    thread.start()
    thread.join(30)
    assert box, "the read blocked"
    outcome = box[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def _outcome(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except BaseException as exc:  # handed back to the test's own thread
        return exc


def swap(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_machine_cache_that_is_not_a_file_reads_as_an_empty_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    path = MachineCache.open(platform="local", scope="w", owner="acme/evals").path
    assert path is not None
    swap(path, kind)
    cache = finishes(lambda: MachineCache.open(platform="local", scope="w", owner="acme/evals"))
    assert not cache.not_ours and not cache.ours


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_download_ledger_that_is_not_a_file_reads_as_nothing_recorded(tmp_path: Path, kind: str) -> None:
    run_dir = tmp_path / "outputs" / "run-1"
    swap(ledger_path(run_dir), kind)
    assert finishes(lambda: load_ledger(run_dir)).types == frozenset()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_github_event_file_that_is_not_a_file_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "event.json"
    swap(path, kind)
    with pytest.raises(ReconcilerError, match="is not a JSON event payload"):
        finishes(lambda: read_event(path))
