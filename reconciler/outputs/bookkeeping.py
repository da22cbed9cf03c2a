"""What reconciler remembers about a run folder, kept beside the platform's layout.

    .osmosis/benchmarks/<run-dir>/...                  the platform's fixed layout, nothing else
    .osmosis/benchmarks/.reconciler/<run-dir>.json     {"run_id", "types", "files"}

(No run folder can be named `.reconciler`: run_dir_name never starts a name with a dot.)
A folder the user named (`download --output DIR`) keeps its ledger inside it, as
`DIR/.reconciler-ledger.json`: beside it, `-o state` would have been `.reconciler/state.json`,
the project's state file, and `-o ../x` a file outside the repository. No manifest path can
take that name (the layout has no top-level dot-file).

- `types`: output types completely downloaded for a terminal run (written only when every
  file of those types landed); `reconciler plan` reads it to know what is on disk.
- `files`: the manifest token each file we wrote came from. The official rule skips a file
  whose size equals the manifest's; a running run's snapshot can keep a file's size while its
  content changes, so a file whose token changed since is downloaded again. Files we did not
  write (no entry) follow the official size rule.

The ledger is rewritten only when its content changes, atomically, and never through a symlink
(safe_paths.writable_path): a download that brings nothing new writes nothing at all. A missing or unreadable ledger means "nothing known".
Ledgers of older versions, inside the run folder (`.reconciler-download.json`,
`.reconciler-files.json`), are read when no ledger exists yet and removed once it is written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .. import json_text
from ..files import read_regular, unlink_below, write_atomic
from ..safe_paths import writable_path

LEDGER_DIR = ".reconciler"
CHOSEN_FOLDER_LEDGER = ".reconciler-ledger.json"
MAX_LEDGER_BYTES = 256 * 1024 * 1024  # a run of a million files
_LEGACY_RECORD = ".reconciler-download.json"
_LEGACY_INDEX = ".reconciler-files.json"


@dataclass(frozen=True)
class Ledger:
    run_id: str | None = None
    types: frozenset[str] = frozenset()
    files: Mapping[str, str | None] = field(default_factory=dict)


def _place(run_dir: Path, chosen: bool) -> tuple[Path, str]:
    """Where a run folder's ledger lives: a root and the path below it (see the module's note)."""
    return (run_dir, CHOSEN_FOLDER_LEDGER) if chosen else (run_dir.parent, f"{LEDGER_DIR}/{run_dir.name}.json")


def ledger_path(run_dir: Path, *, chosen: bool = False) -> Path:
    root, rel = _place(run_dir, chosen)
    return root / rel


def load_ledger(run_dir: Path, *, chosen: bool = False) -> Ledger:
    data = _read(ledger_path(run_dir, chosen=chosen))
    if data is None and chosen:  # where earlier versions kept a named folder's ledger: beside it
        data = _read(ledger_path(run_dir))
        data = data if data is not None and "run_id" in data else None  # not, say, the state file
    if data is None:
        return _legacy(run_dir)
    return _parse(data, data)


def save_ledger(run_dir: Path, ledger: Ledger, *, chosen: bool = False) -> bool:
    """Write the ledger if it differs from what is stored; True when it was written. Raises
    UnsafePathError when a symlink (or something not a folder) is on the way to it."""
    root, rel = _place(run_dir, chosen)
    path = writable_path(root, rel)
    stored = _read(path)
    if stored is None and not ledger.types and not ledger.files:
        return False  # nothing to remember
    if stored is not None and _parse(stored, stored) == ledger:
        return False
    text = json.dumps(
        {"run_id": ledger.run_id, "types": sorted(ledger.types), "files": dict(sorted(ledger.files.items()))},
        indent=0,
    )
    write_atomic(path, (text + "\n").encode(), below=root)
    for name in (_LEGACY_RECORD, _LEGACY_INDEX):
        unlink_below(root, run_dir / name)
    return True


def _read(path: Path) -> dict[str, object] | None:
    try:
        data = json_text.loads(read_regular(path, MAX_LEDGER_BYTES))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _parse(record: dict[str, object], index: dict[str, object] | None) -> Ledger:
    run_id = record.get("run_id")
    types = record.get("types")
    files = index.get("files") if index is not None else None
    return Ledger(
        run_id=run_id if isinstance(run_id, str) else None,
        types=frozenset(t for t in types if isinstance(t, str)) if isinstance(types, list) else frozenset(),
        files={str(k): v if isinstance(v, str) else None for k, v in files.items()} if isinstance(files, dict) else {},
    )


def _legacy(run_dir: Path) -> Ledger:
    return _parse(_read(run_dir / _LEGACY_RECORD) or {}, _read(run_dir / _LEGACY_INDEX))
