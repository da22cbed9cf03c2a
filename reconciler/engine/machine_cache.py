"""The per-machine cache of runs known NOT to be ours, kept outside the repository.

The committed state file holds only positive facts (markers of our own runs): a missing or
edited entry there can only make reconciler ask the platform again, never submit again.
Which of the workspace's other runs belong to someone else is a per-machine speed-up: a
plan pays one detail request for each run it has never seen, once per machine. Before a
submit the entries are not trusted (the look-up reads those runs from the platform again).

Location: `$RECONCILER_CACHE_DIR`, else `$XDG_CACHE_HOME/reconciler`, else
`~/.cache/reconciler`; one file per platform URL, scope and owner. An unreadable cache is
an empty one, and a cache that cannot be written is skipped: it is never worth failing for.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from pathlib import Path

CACHE_DIR_ENV = "RECONCILER_CACHE_DIR"
CACHE_VERSION = 1


def cache_dir() -> Path:
    explicit = os.environ.get(CACHE_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "reconciler"


class NotOursCache:
    """Run ids that carry no marker of `owner`, as read from the platform at some point."""

    def __init__(
        self, path: Path | None, key: dict[str, str], runs: set[str], legacy: dict[str, str] | None = None
    ) -> None:
        self.path = path
        self.key = key
        self.runs = runs
        # run id -> "<spec id>@<fingerprint>" of a run marked with the owner name earlier versions used
        self.legacy = legacy or {}
        self._saved = (set(runs), dict(self.legacy))

    @classmethod
    def open(cls, *, platform: str, scope: str, owner: str) -> NotOursCache:
        key = {"platform": platform, "scope": scope, "owner": owner}
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
        path = cache_dir() / f"not-ours-{digest}.json"
        return cls(path, key, *_read(path, key))

    @classmethod
    def in_memory(cls) -> NotOursCache:
        """A cache that lives as long as the process (nothing is read or written)."""
        return cls(None, {}, set())

    def save(self) -> None:
        if self.path is None or (self.runs, self.legacy) == self._saved:
            return
        doc = {"version": CACHE_VERSION, **self.key, "runs": sorted(self.runs), "legacy": self.legacy}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        except OSError:
            return
        tmp = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh)
            # another process may save at the same time: the rename keeps one whole file either way
            tmp.replace(self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            return
        self._saved = (set(self.runs), dict(self.legacy))


def _read(path: Path, key: dict[str, str]) -> tuple[set[str], dict[str, str]]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return set(), {}
    if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION:
        return set(), {}
    if any(doc.get(k) != v for k, v in key.items()):
        return set(), {}
    runs, legacy = doc.get("runs"), doc.get("legacy")
    if not isinstance(runs, list):
        return set(), {}
    kept = {r for r in runs if isinstance(r, str)}
    if not isinstance(legacy, dict):
        legacy = {}
    return kept, {k: v for k, v in legacy.items() if k in kept and isinstance(v, str)}
