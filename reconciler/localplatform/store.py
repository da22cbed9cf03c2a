"""The local platform's one SQLite file: schema, and every query the routes make.

WAL mode, a `schema_version` in `meta`, and one autocommit connection per thread
(`Store.session`), so every request sees the latest commit and several processes can use the
same file one after another (or at once) and see one world.
Writes that must be atomic (creating a workspace with its seed data, taking the next run number)
run inside `BEGIN IMMEDIATE`.
"""

from __future__ import annotations

import itertools
import json
import secrets as pysecrets
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Generic, TypeVar, cast

from .catalog import CATALOG, NO_BENCHMARKS_WORKSPACE, SEEDED_SECRETS
from .records import BenchmarkRow, RunData, RunRow, SecretRow, Workspace, stable_uuid
from .simulator import Schedule

T = TypeVar("T")


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


SCHEMA_VERSION = 1
LOCAL_USER = "Local User"
LOCAL_EMAIL = "local@localhost"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS workspaces (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    benchmarks_enabled INTEGER NOT NULL,
    run_counter INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    UNIQUE (kind, name)
);
CREATE TABLE IF NOT EXISTS benchmarks (
    id TEXT PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    key TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (workspace_id, key)
);
CREATE TABLE IF NOT EXISTS secrets (
    id TEXT PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    creator_name TEXT NOT NULL,
    updater_name TEXT NOT NULL,
    UNIQUE (workspace_id, scope, name)
);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    benchmark_id TEXT NOT NULL,
    benchmark_key TEXT NOT NULL,
    submitted_at REAL NOT NULL,
    speed REAL NOT NULL,
    task_count INTEGER NOT NULL,
    agent_count INTEGER NOT NULL,
    expected INTEGER NOT NULL,
    selection TEXT NOT NULL,
    queued_at REAL NOT NULL,
    running_at REAL NOT NULL,
    end_at REAL NOT NULL,
    final_status TEXT NOT NULL,
    final_ingested INTEGER NOT NULL,
    final_best REAL,
    stopped_at REAL,
    UNIQUE (workspace_id, name),
    UNIQUE (workspace_id, seq)
);
CREATE TABLE IF NOT EXISTS run_data (
    run_id TEXT PRIMARY KEY REFERENCES runs (id),
    config TEXT NOT NULL,
    scopes TEXT NOT NULL,
    tasks TEXT NOT NULL,
    schedule TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_by_benchmark ON runs (workspace_id, benchmark_id, seq);
"""

_RUN_COLUMNS = (
    "id, workspace_id, seq, name, benchmark_id, benchmark_key, submitted_at, speed, task_count, agent_count, "
    "expected, selection, queued_at, running_at, end_at, final_status, final_ingested, final_best, stopped_at"
)


LISTED_ITEMS = 20_000  # run list items kept serialized (about 0.6 kB each)
LISTED_PAGES = 256  # whole run-list pages kept serialized (about 31 kB each)

__all__ = [
    "BenchmarkRow",
    "RunData",
    "RunRow",
    "SecretRow",
    "Store",
    "StoreSession",
    "Workspace",
    "stable_uuid",
]


class Store:
    """The database file and its per-thread connections; every request works through a `StoreSession`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._memo = _Lru[object](512)
        self._listed = _Lru[tuple[bytes, float, float]](LISTED_ITEMS)
        self._pages = _Lru[object](LISTED_PAGES)
        # (connection, workspace, benchmark) -> ((data_version, total_changes), run count)
        self.counts: dict[tuple[int, int, str | None], tuple[tuple[int, int, int], int]] = {}
        self._lock = threading.Lock()
        self._serials = itertools.count()
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        with self.session() as db:
            db.init_schema()
            self.signing_key = db.signing_key()

    @contextmanager
    def session(self) -> Iterator[StoreSession]:
        """A session on this thread's connection (autocommit: every read sees the latest commit)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            with self._lock:
                self._connections.append(conn)
                # never reused, unlike id(conn): what was kept under a closed connection stays unmatched
                self._local.serial = next(self._serials)
            self._local.conn = conn
        yield StoreSession(conn, self, self._local.serial)

    def close(self) -> None:
        """Close every connection this store opened (each thread's)."""
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            conn.close()
        self._local = threading.local()

    def memo(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        """`compute()` once per key for immutable facts (a finished run's scores), kept LRU."""
        return cast(T, self._memo.get_or_put(key, compute))

    def listed(
        self, key: tuple[object, ...], now: float, render: Callable[[], tuple[bytes, float, float]]
    ) -> tuple[bytes, float, float]:
        """A run's list item as JSON bytes, LRU-bounded. `render` gives it with the simulated
        times [start, end) over which it stands still (RunView.unchanged); it is rendered again
        only once `now` (the run's simulated time) leaves them.

        Listing is the busiest endpoint (a plan reads every page): a run that has ended never
        changes, and a running one changes at a few moments of its schedule, so most items are
        serialized once instead of on every page that shows them.
        """
        kept = self._listed.get(key)
        if kept is not None and kept[1] <= now < kept[2]:
            return kept
        fresh = render()
        self._listed.put(key, fresh)
        return fresh

    def kept_page(self, key: tuple[object, ...]) -> object | None:
        """What `keep_page` kept under `key`, or None."""
        return self._pages.get(key)

    def keep_page(self, key: tuple[object, ...], page: object) -> None:
        """Keep a rendered list page (routes_runs.ListedPage) under a key that holds the database's
        version (`StoreSession.version`), so a write anywhere makes it unknown."""
        self._pages.put(key, page)


V = TypeVar("V")


class _Lru(Generic[V]):
    """A bounded mapping, least recently used out first; safe across the server's threads."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[tuple[object, ...], V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[object, ...], value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def get_or_put(self, key: tuple[object, ...], compute: Callable[[], V]) -> V:
        found = self.get(key)
        if found is None:  # computed outside the lock: two threads may both compute, to equal values
            found = compute()
            self.put(key, found)
        return found


class StoreSession:
    """A request's access to the store, on its thread's connection."""

    def __init__(self, conn: sqlite3.Connection, store: Store, serial: int) -> None:
        self.conn = conn
        self.store = store
        self.serial = serial  # this connection's number within the store

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    # --- schema ---------------------------------------------------------------------------

    def init_schema(self) -> None:
        self._check_version()
        self.conn.execute("PRAGMA journal_mode=WAL")  # persistent: recorded in the file
        self.conn.executescript(_SCHEMA)  # idempotent; outside a transaction (executescript commits)
        with self.transaction():
            if self._check_version() is None:
                self.conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                self.conn.execute("INSERT INTO meta VALUES ('signing_key', ?)", (pysecrets.token_hex(32),))

    def _check_version(self) -> int | None:
        """The file's schema version (None for a new file); refuses any other than ours."""
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None:
            return None
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            return None
        if int(row[0]) != SCHEMA_VERSION:
            raise RuntimeError(
                f"{self.store.path} has local-platform schema version {row[0]}; this reconciler reads"
                f" version {SCHEMA_VERSION}. Move the file away to start a fresh platform."
            )
        return SCHEMA_VERSION

    def signing_key(self) -> bytes:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'signing_key'").fetchone()
        return bytes.fromhex(row[0])

    # --- workspaces -----------------------------------------------------------------------

    def workspace(self, kind: str, name: str, now: float) -> Workspace:
        """The workspace for a scope header, created and seeded the first time it is seen."""
        row = self.conn.execute(
            "SELECT id, kind, name, benchmarks_enabled FROM workspaces WHERE kind = ? AND name = ?", (kind, name)
        ).fetchone()
        if row is None:
            with self.transaction():
                row = self.conn.execute(
                    "SELECT id, kind, name, benchmarks_enabled FROM workspaces WHERE kind = ? AND name = ?",
                    (kind, name),
                ).fetchone()
                if row is None:
                    row = self._create_workspace(kind, name, now)
        return Workspace(row[0], row[1], row[2], bool(row[3]))

    def workspaces(self) -> list[Workspace]:
        """Every workspace, oldest first (the web pages default to the first)."""
        rows = self.conn.execute("SELECT id, kind, name, benchmarks_enabled FROM workspaces ORDER BY id").fetchall()
        return [Workspace(r[0], r[1], r[2], bool(r[3])) for r in rows]

    def benchmark_workspace(self, benchmark_id: str) -> int | None:
        """The id of the workspace holding the benchmark with this id (ids are unique across workspaces)."""
        row = self.conn.execute("SELECT workspace_id FROM benchmarks WHERE id = ?", (benchmark_id,)).fetchone()
        return int(row[0]) if row else None

    def _create_workspace(self, kind: str, name: str, now: float) -> tuple[int, str, str, int]:
        enabled = 0 if name.split("/")[-1] == NO_BENCHMARKS_WORKSPACE else 1
        cur = self.conn.execute(
            "INSERT INTO workspaces (kind, name, benchmarks_enabled, created_at) VALUES (?, ?, ?, ?)",
            (kind, name, enabled, now),
        )
        ws_id = int(cur.lastrowid or 0)
        for spec in CATALOG:
            self.conn.execute(
                "INSERT INTO benchmarks VALUES (?, ?, ?, ?)",
                (stable_uuid("benchmark", kind, name, spec.key), ws_id, spec.key, now),
            )
        for scope, secret in SEEDED_SECRETS:
            self.conn.execute(
                "INSERT INTO secrets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    stable_uuid("secret", kind, name, scope, secret),
                    ws_id,
                    scope,
                    secret,
                    f"local-placeholder-{secret.lower()}",
                    now,
                    now,
                    LOCAL_USER,
                    LOCAL_USER,
                ),
            )
        return ws_id, kind, name, enabled

    # --- benchmarks -----------------------------------------------------------------------

    def benchmarks(self, ws: Workspace) -> list[BenchmarkRow]:
        rows = self.conn.execute(
            "SELECT id, key, created_at FROM benchmarks WHERE workspace_id = ? ORDER BY rowid", (ws.id,)
        ).fetchall()
        return [BenchmarkRow(*r) for r in rows]

    # --- secrets --------------------------------------------------------------------------

    def secrets(self, ws: Workspace, scopes: tuple[str, ...]) -> list[SecretRow]:
        marks = ",".join("?" for _ in scopes)
        rows = self.conn.execute(
            "SELECT id, scope, name, created_at, updated_at, creator_name, updater_name FROM secrets"
            f" WHERE workspace_id = ? AND scope IN ({marks}) ORDER BY scope = 'user', name",
            (ws.id, *scopes),
        ).fetchall()
        return [SecretRow(*r) for r in rows]

    def upsert_secret(self, ws: Workspace, scope: str, name: str, value: str, now: float) -> tuple[SecretRow, bool]:
        with self.transaction():
            found = self.conn.execute(
                "SELECT id FROM secrets WHERE workspace_id = ? AND scope = ? AND name = ?", (ws.id, scope, name)
            ).fetchone()
            if found is None:
                secret_id = stable_uuid("secret", ws.kind, ws.name, scope, name, now)
                self.conn.execute(
                    "INSERT INTO secrets VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (secret_id, ws.id, scope, name, value, now, now, LOCAL_USER, LOCAL_USER),
                )
            else:
                secret_id = found[0]
                self.conn.execute(
                    "UPDATE secrets SET value = ?, updated_at = ?, updater_name = ? WHERE id = ?",
                    (value, now, LOCAL_USER, secret_id),
                )
            row = self.conn.execute(
                "SELECT id, scope, name, created_at, updated_at, creator_name, updater_name FROM secrets WHERE id = ?",
                (secret_id,),
            ).fetchone()
        return SecretRow(*row), found is None

    def delete_secret(self, ws: Workspace, scope: str, name: str) -> bool:
        cur = self.conn.execute(
            "DELETE FROM secrets WHERE workspace_id = ? AND scope = ? AND name = ?", (ws.id, scope, name)
        )
        return cur.rowcount > 0

    # --- runs -----------------------------------------------------------------------------

    def next_run_seq(self, ws: Workspace) -> int:
        row = self.conn.execute(
            "UPDATE workspaces SET run_counter = run_counter + 1 WHERE id = ? RETURNING run_counter", (ws.id,)
        ).fetchone()
        return int(row[0])

    def insert_run(self, run: RunRow, data: RunData) -> None:
        values = tuple(getattr(run, f) for f in RunRow.__dataclass_fields__)
        self.conn.execute(f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({','.join('?' for _ in values)})", values)
        self.conn.execute(
            "INSERT INTO run_data VALUES (?, ?, ?, ?, ?)",
            (run.id, _json(data.config), _json(data.scopes), _json(data.tasks), data.schedule.to_json()),
        )

    def runs(self, ws: Workspace, *, benchmark_id: str | None = None, limit: int = -1, offset: int = 0) -> list[RunRow]:
        """Newest first.

        The offset is walked in the index alone (the sub-select reads only `seq`), then the page's
        rows are read from where it lands: OFFSET on the full rows read every skipped row."""
        where, args = "workspace_id = ?", list[int | str]([ws.id])
        if benchmark_id is not None:
            where += " AND benchmark_id = ?"
            args.append(benchmark_id)
        rows = self.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE {where} AND seq <= "
            f"(SELECT seq FROM runs WHERE {where} ORDER BY seq DESC LIMIT 1 OFFSET ?) ORDER BY seq DESC LIMIT ?",
            (*args, *args, offset, limit),
        ).fetchall()
        return [RunRow(*r) for r in rows]

    def benchmark_stats(self, ws: Workspace, clock_now: float) -> dict[str, tuple[int, int, RunRow]]:
        """benchmark id -> (runs, active runs, newest run) at the clock reading `clock_now`."""
        rows = self.conn.execute(
            "SELECT benchmark_id, COUNT(*), SUM((? - submitted_at) * speed < COALESCE(stopped_at, end_at)), MAX(seq)"
            " FROM runs WHERE workspace_id = ? GROUP BY benchmark_id",
            (clock_now, ws.id),
        ).fetchall()
        out: dict[str, tuple[int, int, RunRow]] = {}
        for benchmark_id, count, active, seq in rows:
            newest = self.conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE workspace_id = ? AND seq = ?", (ws.id, seq)
            ).fetchone()
            out[benchmark_id] = (int(count), int(active), RunRow(*newest))
        return out

    def finished_ranked_runs(self, ws: Workspace, benchmark_id: str, clock_now: float) -> list[RunRow]:
        """Runs that can feed the leaderboard: finished by `clock_now`, never stopped, not filtered."""
        rows = self.conn.execute(
            f"SELECT {_RUN_COLUMNS} FROM runs WHERE workspace_id = ? AND benchmark_id = ? AND stopped_at IS NULL"
            " AND final_status = 'finished' AND selection != 'filtered' AND (? - submitted_at) * speed >= end_at"
            " ORDER BY seq DESC",
            (ws.id, benchmark_id, clock_now),
        ).fetchall()
        return [RunRow(*r) for r in rows]

    def version(self) -> tuple[int, int, int]:
        """Changes whenever the database may have: this connection's serial, SQLite's
        data_version (moves when another connection commits) and total_changes (moves when this
        one writes). A value remembered under it is valid until it moves."""
        return (self.serial, self.conn.execute("PRAGMA data_version").fetchone()[0], self.conn.total_changes)

    def count_runs(self, ws: Workspace, *, benchmark_id: str | None = None) -> int:
        """How many runs; remembered until the database changes (every list page asks)."""
        version = self.version()
        key = (self.serial, ws.id, benchmark_id)
        known = self.store.counts.get(key)
        if known is not None and known[0] == version:
            return known[1]
        count = self._count_runs(ws, benchmark_id)
        self.store.counts[key] = (version, count)
        return count

    def _count_runs(self, ws: Workspace, benchmark_id: str | None) -> int:
        if benchmark_id is None:
            row = self.conn.execute("SELECT COUNT(*) FROM runs WHERE workspace_id = ?", (ws.id,)).fetchone()
        else:
            row = self.conn.execute(
                "SELECT COUNT(*) FROM runs WHERE workspace_id = ? AND benchmark_id = ?", (ws.id, benchmark_id)
            ).fetchone()
        return int(row[0])

    def run(self, ws: Workspace | None, ref: str) -> RunRow | None:
        """A run by id or name (in `ws`), or by id in any workspace when `ws` is None."""
        row = self.conn.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", (ref,)).fetchone()
        if ws is not None and (row is None or row[1] != ws.id):
            row = self.conn.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE workspace_id = ? AND name = ?", (ws.id, ref)
            ).fetchone()
        return RunRow(*row) if row else None

    def run_data(self, run_id: str) -> RunData:
        def load() -> RunData:
            row = self.conn.execute(
                "SELECT config, scopes, tasks, schedule FROM run_data WHERE run_id = ?", (run_id,)
            ).fetchone()
            return RunData(json.loads(row[0]), json.loads(row[1]), json.loads(row[2]), Schedule.from_json(row[3]))

        return self.store.memo(("run_data", run_id), load)

    def stop_run(self, run_id: str, at: float) -> bool:
        """Record a stop at simulated time `at`; False when the run was already stopped."""
        cur = self.conn.execute("UPDATE runs SET stopped_at = ? WHERE id = ? AND stopped_at IS NULL", (at, run_id))
        return cur.rowcount > 0
