"""`reconciler platform serve --port 0` as a subprocess on 127.0.0.1, for tests and benchmarks."""

from __future__ import annotations

import re
import selectors
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_SERVING = re.compile(r"serving on (\S+) token=(\S+)")


def _read_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise TimeoutError("platform serve printed nothing")
    return proc.stdout.readline()


@contextmanager
def served(workdir: Path, *extra: str, db: Path | None = None) -> Iterator[tuple[str, str]]:
    """Serve a platform over `db` (default `workdir/platform.sqlite3`); yields (url, token).

    stderr goes to `workdir/stderr.txt`, so a chatty server can never block on a full pipe.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    db = db or workdir / "platform.sqlite3"
    cmd = [sys.executable, "-m", "reconciler.cli", "platform", "serve", "--port", "0", "--db", str(db), *extra]
    with (workdir / "stderr.txt").open("w") as stderr:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=workdir)
        try:
            line = _read_line(proc, timeout=30)
            match = _SERVING.match(line)
            assert match, f"unexpected first line {line!r}: {(workdir / 'stderr.txt').read_text()}"
            yield match.group(1), match.group(2)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            assert proc.stdout is not None
            proc.stdout.close()
