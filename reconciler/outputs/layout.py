"""The platform's fixed output layout under `.osmosis/benchmarks/<run-dir>/` (docs/platform-api.md §3)."""

from __future__ import annotations

import re
from pathlib import Path

from .bookkeeping import load_ledger

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
    """Output types completely downloaded for a terminal run, as recorded after a successful download."""
    ledger = load_ledger(run_dir)
    if ledger.run_id != run_id:
        return frozenset()
    return frozenset(t for t in ledger.types if t in TYPES)
