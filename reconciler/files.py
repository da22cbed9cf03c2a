"""Writing files atomically (a reader sees the old bytes or the new ones, never a part), and
reading files any process may have swapped for something that is not a file."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder."""


class TooLarge(OSError):
    """The file holds more than the reader's limit."""


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit` bytes, else OSError: a
    FIFO put where a spec, cache or event file belongs would block the read forever, /dev/zero
    never ends. Opened without blocking, so a FIFO is seen for what it is before anything is read
    (even one swapped in after the caller looked)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit // 1024} KiB")
    return data


def write_if_changed(path: Path, content: str) -> bool:
    """Write `content` (UTF-8) only when the file's bytes differ; True when the file was (re)written."""
    data = content.encode("utf-8")
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    write_atomic(path, data)
    return True


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` through a synced temporary file in the same folder (created if missing).

    The file keeps its mode, or a new one gets the mode an ordinary write would give it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp creates 0600
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
