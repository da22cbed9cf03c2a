"""The per-machine cache of what this machine learned about runs' owners, kept outside the repository.

The committed state file holds only positive facts (markers of our own runs): a missing or
edited entry there can only make reconciler ask the platform again, never submit again.
This cache is a per-machine speed-up, so that a plan pays one detail request for each run
it has never seen, once per machine, even though `plan` never writes the state file:
- `not_ours`: runs that carry no marker of ours. Before a submit these are not trusted
  (the look-up reads those runs from the platform again). `foreign`: of those, the ones whose
  marker names another owner, and that owner (the others carry no marker at all), so that
  `reconciler runs` can say whose a run is without reading it again.
- `ours`: the markers of our runs this machine knows (what `apply` would commit to the state
  file), and `agents`: what our finished runs ran. The state file wins where both know a run;
  a stop reads the marker from the platform again whatever either says (engine/apply.py).
- `confirmed`: of those, the runs whose marker this machine read from the platform itself, not
  only from a state file (which anyone can edit): a live run the state file alone calls ours is
  read once per machine before a plan waits on it (engine/observe.py).
- `benchmarks`: the id of each benchmark ref the specs used, so a plan without a state file
  can start its reads before the specs are loaded (engine/observe.EarlyReads).

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
from collections.abc import Callable
from pathlib import Path

from .. import json_text
from ..files import read_regular

CACHE_DIR_ENV = "RECONCILER_CACHE_DIR"
MAX_CACHE_BYTES = 256 * 1024 * 1024  # 100,000 runs take about 5 MiB
CACHE_VERSION = 3  # 3: `foreign`; an older file reads as an empty cache


def cache_dir() -> Path:
    explicit = os.environ.get(CACHE_DIR_ENV, "").strip()
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "reconciler"


class MachineCache:
    """Which runs carry no marker of `owner`, and which carry one (and which), as read from the platform."""

    def __init__(
        self,
        path: Path | None,
        key: dict[str, str],
        not_ours: set[str],
        legacy: dict[str, str] | None = None,
        ours: dict[str, str] | None = None,
        agents: dict[str, object] | None = None,
        benchmarks: dict[str, str] | None = None,
        foreign: dict[str, str] | None = None,
        confirmed: set[str] | None = None,
    ) -> None:
        self.path = path
        self.key = key
        self.not_ours = not_ours
        # run id -> "<spec id>@<fingerprint>" of a run marked with the owner name earlier versions used
        self.legacy = legacy or {}
        # run id -> "<spec id>@<fingerprint>" of a run marked with `owner`
        self.ours = ours or {}
        # run id -> `RunAgents` as JSON (validated where it is read: engine/observe.py)
        self.agents = agents or {}
        self.benchmarks = benchmarks or {}  # benchmark ref -> id
        self.foreign = foreign or {}  # run id (in `not_ours`) -> the other owner its marker names
        self.confirmed = confirmed or set()  # run ids in `ours` whose marker this machine read
        self._saved = self._snapshot()

    @classmethod
    def open(cls, *, platform: str, scope: str, owner: str) -> MachineCache:
        key = {"platform": platform, "scope": scope, "owner": owner}
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24]
        path = cache_dir() / f"owners-{digest}.json"
        return cls(path, key, *_read(path, key))

    @classmethod
    def in_memory(cls) -> MachineCache:
        """A cache that lives as long as the process (nothing is read or written)."""
        return cls(None, {}, set())

    def _snapshot(
        self,
    ) -> tuple[
        int, int, dict[str, str], dict[str, str], dict[str, object], dict[str, str], dict[str, str], frozenset[str]
    ]:
        # `not_ours` grows to every run of the workspace that is not ours: a copy of it would
        # cost half a MiB at 10,000 runs, so its size and the sum of its hashes stand for it
        # (two different sets agreeing on both only skips a save: this file is a speed-up)
        hashes = sum(map(hash, self.not_ours)) & 0xFFFF_FFFF_FFFF_FFFF
        return (
            len(self.not_ours),
            hashes,
            dict(self.legacy),
            dict(self.ours),
            dict(self.agents),
            dict(self.benchmarks),
            dict(self.foreign),
            frozenset(self.confirmed),
        )

    def save(self) -> None:
        if self.path is None or self._snapshot() == self._saved:
            return
        doc = {
            "version": CACHE_VERSION,
            **self.key,
            "not_ours": sorted(self.not_ours),
            "legacy": self.legacy,
            "ours": self.ours,
            "agents": self.agents,
            "benchmarks": self.benchmarks,
            "foreign": {k: v for k, v in self.foreign.items() if k in self.not_ours},
            "confirmed": sorted(self.confirmed & self.ours.keys()),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        except OSError:
            return
        tmp = Path(name)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(doc))  # one piece: `json.dump` encodes in Python, `dumps` in C
            # another process may save at the same time: the rename keeps one whole file either way
            tmp.replace(self.path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            return
        self._saved = self._snapshot()


_Entries = tuple[set[str], dict[str, str], dict[str, str], dict[str, object], dict[str, str], dict[str, str], set[str]]


def _read(path: Path, key: dict[str, str]) -> _Entries:
    """What the file says, keeping only well-formed entries; anything else reads as an empty cache."""
    try:
        doc = json_text.loads(read_regular(path, MAX_CACHE_BYTES))  # nesting too deep: a ValueError
    except (OSError, ValueError):
        return _fresh()
    if not isinstance(doc, dict) or doc.get("version") != CACHE_VERSION:
        return _fresh()
    if any(doc.get(k) != v for k, v in key.items()):
        return _fresh()
    runs, legacy, ours, agents = doc.get("not_ours"), doc.get("legacy"), doc.get("ours"), doc.get("agents")
    not_ours = {r for r in runs if isinstance(r, str)} if isinstance(runs, list) else set()
    others = doc.get("foreign")
    foreign = (
        {k: v for k, v in others.items() if isinstance(k, str) and isinstance(v, str) and k in not_ours}
        if isinstance(others, dict)
        else {}
    )
    # "not ours, its marker names us" contradicts itself: such a run is read again
    for run_id in [k for k, v in foreign.items() if v == key.get("owner")]:
        not_ours.discard(run_id)
        del foreign[run_id]
    mine = _refs(ours, lambda r: r not in not_ours)
    ran = {k: v for k, v in agents.items() if k in mine} if isinstance(agents, dict) else {}
    known = doc.get("benchmarks")
    ids = (
        {k: v for k, v in known.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(known, dict) else {}
    )
    read = doc.get("confirmed")  # absent from a cache written before it: nothing confirmed yet
    confirmed = {r for r in read if isinstance(r, str) and r in mine} if isinstance(read, list) else set()
    return not_ours, _refs(legacy, not_ours.__contains__), mine, ran, ids, foreign, confirmed


def _fresh() -> _Entries:
    return set(), {}, {}, {}, {}, {}, set()


def _refs(value: object, keep: Callable[[str], bool]) -> dict[str, str]:
    """run id -> "<spec id>@<fingerprint>" entries that are strings both sides, with an `@`."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str) and "@" in v and keep(k)}
