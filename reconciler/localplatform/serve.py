"""Serve the platform over HTTP with uvicorn, on a socket bound before the URL is announced.

The one line `serving on http://HOST:PORT token=TOKEN` is printed (and flushed) only once the
socket listens, so a parent process can read it and connect at once. SIGTERM and SIGINT shut
down gracefully (open requests finish, the database connections close) and exit 0.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import uvicorn

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
    """A listening TCP socket on (host, port); port 0 picks a free one."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


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
) -> None:
    sock = bind(host, port)
    app = create_app(
        db,
        token=token,
        seed=seed,
        speed=speed,
        faults=faults,
        test_hooks=test_hooks,
        bench_artifacts=bench_artifacts,
        public_url=url_of(sock),  # links name the address actually served, even with --port 0
    )
    server = _Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    stream = out or sys.stdout
    stream.write(f"serving on {url_of(sock)} token={token}\n")
    stream.write(f"pages: {url_of(sock)}/benchmarks?token={token}\n")
    stream.flush()
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
