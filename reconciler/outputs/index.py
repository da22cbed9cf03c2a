"""Which manifest entry each downloaded file came from: `<run-dir>/.reconciler-files.json`.

The official rule skips a file whose size equals the manifest's. A file downloaded from a
running run's snapshot can keep its size while its content changes (a summary row with new
numbers of the same width), so we also remember the manifest token of every file we wrote:
a file whose token changed since is downloaded again. Files we did not write (no entry)
follow the official size rule. The index lives outside the fixed layout, so no manifest path
can name it; a missing or unreadable index just means "no entries".
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

INDEX_FILE = ".reconciler-files.json"


def load_index(run_dir: Path) -> dict[str, str | None]:
    try:
        data = json.loads((run_dir / INDEX_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {str(k): v if isinstance(v, str) else None for k, v in files.items()}


def save_index(run_dir: Path, known: Mapping[str, str | None], landed: Mapping[str, str | None]) -> None:
    """`known` updated with the tokens of the files that just landed, written atomically."""
    if not landed:
        return
    merged = {**known, **landed}
    tmp = run_dir / f"{INDEX_FILE}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"files": dict(sorted(merged.items()))}, indent=0) + "\n", encoding="utf-8")
    tmp.replace(run_dir / INDEX_FILE)


def is_current(known: Mapping[str, str | None], path: str, token: str | None) -> bool:
    """False only when we wrote this path from a manifest entry with another token."""
    return path not in known or known[path] == token
