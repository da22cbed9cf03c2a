"""One reconciler acting on a repository at a time: an advisory lock file next to the state file."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path, PurePosixPath

from ..errors import LockedError
from ..files import open_below
from ..safe_paths import UnsafePathError, create_once, writable_path
from ..settings import Project

# Ignores itself too: a repository that did not come from `init` shows nothing new after a run.
SCRATCH_GITIGNORE = """\
# reconciler's scratch files: the lock of a running reconciler, and half-written files
lock
.*.tmp
.gitignore
"""


def project_lock(project: Project, *, timeout: float = 0.0) -> AbstractContextManager[None]:
    """The lock of one repository: `lock` beside the state file, git-ignored by a `.gitignore` of its own.

    A directory with neither reconciler.toml nor specs is refused first (ConfigError naming
    `init`): the lock would create `.reconciler/` in a directory that is no project."""
    project.existing_specs_path()
    folder = PurePosixPath(project.settings.state_file).parent
    path = writable_path(project.root, str(folder / "lock"))
    if folder != PurePosixPath("."):  # never create a .gitignore at the repository root: that one is the user's
        create_once(project.root, str(folder / ".gitignore"), SCRATCH_GITIGNORE)
    return repository_lock(path, timeout=timeout, below=project.root)


@contextmanager
def repository_lock(
    path: Path, *, timeout: float = 0.0, poll: float = 0.2, below: Path | None = None
) -> Iterator[None]:
    """Hold an exclusive flock on `path`; wait up to `timeout` seconds, then fail with who holds it.

    flock is released by the kernel when the process dies, so a crashed apply never leaves
    a stale lock behind. `below`: the repository, whose folders down to the lock are opened
    without following a link (files.open_folders), so a folder swapped for one after the
    check never makes the lock truncate a file elsewhere.
    """
    try:
        # O_NOFOLLOW: a committed symlink here must never make the lock truncate the file it points to
        fd = _open_lock(path, below)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise UnsafePathError(
            f"refusing to use {path} as the lock: it is a symlink, and reconciler never follows one",
            hint=f"remove it (`git rm {path.name}` in {path.parent}); reconciler creates the lock itself",
        ) from None
    deadline = time.monotonic() + timeout
    acquired = False
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 200, 0).decode("utf-8", errors="replace").strip() or "another process"
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


def _open_lock(path: Path, below: Path | None) -> int:
    return open_below(below if below is not None else path.parent, path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW)
