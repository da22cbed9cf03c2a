"""Serve the platform over HTTP with uvicorn, on a socket bound before the URL is announced.

uvicorn parses HTTP with httptools (a declared dependency; uvicorn picks it when importable):
with the pure-Python h11 parser the server spent about half its CPU on HTTP framing.

The one line `serving on http://HOST:PORT token=TOKEN` is printed (and flushed) only once the
socket listens, so a parent process can read it and connect at once. SIGTERM and SIGINT shut
down gracefully (open requests finish, the database connections close) and exit 0.
"""

from __future__ import annotations

import errno
import socket
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import uvicorn
from starlette.applications import Starlette

from ..errors import ConfigError
from .app import create_app
from .faults import Faults


class _Server(uvicorn.Server):
    """uvicorn re-raises a caught SIGTERM/SIGINT after its graceful shutdown (so the process
    dies of it); the platform has shut down cleanly by then, so it returns and exits 0."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            try:
                yield
            finally:
                self._captured_signals.clear()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on (host, port); port 0 picks a free one.

    Raises ConfigError naming the host or port when the address cannot be had: a name that does
    not resolve, an address of another machine, a port some other process holds.
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError) as exc:
        raise ConfigError(
            f"--host {host!r} is not an address to listen on ({_reason(exc)})",
            hint="use 127.0.0.1 (the default) or another address of this machine",
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                f"port {port} on {host} is already in use by another process",
                hint="stop that process, or pick another port with --port (0 picks a free one)",
            ) from None
        raise ConfigError(
            f"cannot listen on {host} port {port} ({_reason(exc)})",
            hint="use 127.0.0.1 (the default) or another address of this machine, and a port above 1023",
        ) from None
    sock.set_inheritable(True)
    return sock


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeError):
        return "not a valid host name"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


def open_app(db: Path, **options: Any) -> Starlette:
    """The app over `db`; ConfigError when `db` is not a SQLite database this platform can use."""
    try:
        return create_app(db, **options)
    except sqlite3.Error as exc:
        raise ConfigError(
            f"--db {db} is not a database the local platform can use ({_reason(exc)})",
            hint="point --db at a new file (it is created) or at one an earlier `platform serve` wrote",
        ) from None


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(
    *,
    host: str,
    port: int,
    db: Path,
    token: str,
    seed: int = 0,
    speed: float = 600.0,
    faults: Faults | None = None,
    out: TextIO | None = None,
    test_hooks: bool = False,
    bench_artifacts: tuple[int, int] | None = None,
    stop_cleanup: float = 0.0,
) -> None:
    sock = bind(host, port)  # first: a busy port or a bad host leaves no database file behind
    try:
        app = open_app(
            db,
            token=token,
            seed=seed,
            speed=speed,
            faults=faults,
            test_hooks=test_hooks,
            bench_artifacts=bench_artifacts,
            stop_cleanup=stop_cleanup,
            public_url=url_of(sock),  # links name the address actually served, even with --port 0
        )
    except BaseException:
        sock.close()
        raise
    server = _Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    stream = out or sys.stdout
    stream.write(f"serving on {url_of(sock)} token={token}\n")
    stream.write(f"pages: {url_of(sock)}/benchmarks?token={token}\n")
    stream.flush()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
