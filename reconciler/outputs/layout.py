"""The platform's fixed output layout under `.osmosis/benchmarks/<run-dir>/` (docs/platform-api.md §3)."""

from __future__ import annotations

import json
import re
from pathlib import Path

TYPES: tuple[str, ...] = ("summary", "results", "artifacts", "logs")
FIXED_FILES = {"summary.csv": "summary", "results.csv": "results", "logs.txt": "logs"}
RECORD_FILE = ".reconciler-download.json"  # outside the layout, so no manifest path can target it
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
    try:
        record = json.loads((run_dir / RECORD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return frozenset()
    if not isinstance(record, dict) or record.get("run_id") != run_id:
        return frozenset()
    return frozenset(t for t in record.get("types", []) if t in TYPES)


def record_complete(run_dir: Path, run_id: str, types: frozenset[str]) -> None:
    """Remember which types are complete; written only when every file of those types landed."""
    merged = sorted(types_on_disk(run_dir, run_id) | types)
    run_dir.mkdir(parents=True, exist_ok=True)
    tmp = run_dir / (RECORD_FILE + ".tmp")
    tmp.write_text(json.dumps({"run_id": run_id, "types": merged}, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(run_dir / RECORD_FILE)
