"""One reconciler acting on a repository at a time: an advisory lock file next to the state file."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from ..errors import LockedError
from ..settings import Project


def project_lock(project: Project, *, timeout: float = 0.0) -> AbstractContextManager[None]:
    """The lock of one repository: `lock` beside the state file (git-ignored)."""
    return repository_lock(project.root / Path(project.settings.state_file).parent / "lock", timeout=timeout)


@contextmanager
def repository_lock(path: Path, *, timeout: float = 0.0, poll: float = 0.2) -> Iterator[None]:
    """Hold an exclusive flock on `path`; wait up to `timeout` seconds, then fail with who holds it.

    flock is released by the kernel when the process dies, so a crashed apply never leaves
    a stale lock behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout
    acquired = False
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = Path(path).read_text(encoding="utf-8", errors="replace").strip() or "another process"
                    raise LockedError(
                        f"another reconciler holds the lock on this repository ({holder})",
                        hint="wait for it to finish, or pass --lock-timeout SECONDS to wait",
                    ) from None
                time.sleep(poll)
        acquired = True
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}".encode())
        yield
    finally:
        if acquired:
            os.ftruncate(fd, 0)
        os.close(fd)
