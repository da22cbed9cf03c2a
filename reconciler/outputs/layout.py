"""The platform's fixed output layout under `.osmosis/benchmarks/<run-dir>/` (docs/platform-api.md §3)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from .bookkeeping import LEDGER_DIR, load_ledger

TYPES: tuple[str, ...] = ("summary", "results", "artifacts", "logs")
FIXED_FILES = {"summary.csv": "summary", "results.csv": "results", "logs.txt": "logs"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(1, 10)} | {f"lpt{i}" for i in range(1, 10)}


def run_dir_name(run_name: str, run_id: str) -> str:
    """The official client's folder name: the run name made safe, with the id appended when that changed it."""
    safe = _UNSAFE.sub("_", run_name).strip("_")
    if not safe:
        return _UNSAFE.sub("_", run_id).strip("_") or "run"
    if safe != run_name or safe.lower() != safe or safe.lower() in _WINDOWS_RESERVED:
        safe = f"{safe}--{_UNSAFE.sub('_', run_id).strip('_')}"
    return safe


def category(path: str) -> str | None:
    """The output type a manifest path belongs to, or None when it is outside the layout."""
    if path in FIXED_FILES:
        return FIXED_FILES[path]
    parts = path.split("/")
    if len(parts) >= 3 and parts[0] == "artifacts":
        return "artifacts"
    return None


def types_on_disk(run_dir: Path, run_id: str) -> frozenset[str]:
    """Output types completely downloaded for a terminal run, as recorded after a successful
    download, less any type a recorded file of which is no longer a regular file there (deleted,
    or a folder in its place): the plan downloads that type again rather than call it in sync."""
    ledger = load_ledger(run_dir)
    if ledger.run_id != run_id:
        return frozenset()
    gone = {category(path) for path in ledger.files if not _is_file(run_dir, path)}
    return frozenset(t for t in ledger.types if t in TYPES and t not in gone)


def _is_file(run_dir: Path, path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(run_dir / path).st_mode)
    except (OSError, ValueError):  # gone, or a name no file can have (a NUL from a hand-edited ledger)
        return False


def downloaded_types(outputs_root: Path, runs: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """run id -> `types_on_disk`, for each (run name, run id) of `runs` with any.

    The outputs folder is listed once and only the runs with a folder or a ledger there are
    read: asking each run's files costs three failed opens per run that was never downloaded,
    30 ms of a plan with 1,000 finished runs. An unlistable folder is asked run by run."""
    present: set[str] | None
    try:
        present = {entry.name for entry in outputs_root.iterdir()}
    except FileNotFoundError:
        return {}  # nothing was ever downloaded here
    except OSError:
        present = None
    if present is not None and LEDGER_DIR in present:
        try:
            present |= {entry.name for entry in (outputs_root / LEDGER_DIR).iterdir()}
        except OSError:
            present = None
    found = {}
    for name, run_id in runs:
        folder = run_dir_name(name, run_id)
        if present is not None and folder not in present and f"{folder}.json" not in present:
            continue
        done = types_on_disk(outputs_root / folder, run_id)
        if done:
            found[run_id] = done
    return found
