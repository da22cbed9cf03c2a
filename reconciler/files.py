"""Writing files atomically (a reader sees the old bytes or the new ones, never a part), and
reading files any process may have swapped for something that is not a file."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .errors import UnsafePathError

# the one definition of these for every module that opens files relative to a folder (outputs.transfer too)
AT = all(f in os.supports_dir_fd for f in (os.open, os.mkdir, os.rename, os.unlink, os.stat))
CLOEXEC = getattr(os, "O_CLOEXEC", 0)
FOLDER = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | CLOEXEC
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


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


def write_if_changed(path: Path, content: str, *, below: Path | None = None) -> bool:
    """Write `content` (UTF-8) only when the file's bytes differ; True when the file was (re)written.
    `below`: as `write_atomic`."""
    data = content.encode("utf-8")
    if _current_bytes(path, below) == data:
        return False
    write_atomic(path, data, below=below)
    return True


def _current_bytes(path: Path, below: Path | None) -> bytes | None:
    """What `path` holds now, when it is a regular file (read from `below` down, as
    `write_atomic` writes it; without blocking on a FIFO swapped in); else None."""
    if below is None:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None
    try:
        fd = open_below(below, path, READ_NOFOLLOW, create=False)
    except OSError:  # missing, or a link (which the write replaces)
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None


READ_NOFOLLOW = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | NOFOLLOW | CLOEXEC  # never blocks on a FIFO


def open_below(
    below: Path, path: Path, flags: int, mode: int = 0o644, *, create: bool = True, verb: str | None = None
) -> int:
    """`path` opened with `flags`, relative to its folder, the folders opened from `below` down
    (`open_folders`; missing ones created when `create`). Where the system lacks the `*at` calls
    (Windows), the path as named. The one way reconciler opens a repository file it writes,
    locks or reads as code."""
    if not AT:
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, flags | CLOEXEC, mode)
    rel = path.relative_to(below)
    *folders, name = rel.parts
    at = open_folders(below, folders, shown=rel.as_posix(), create=create, verb=verb)
    try:
        return os.open(name, flags | CLOEXEC, mode, dir_fd=at)
    finally:
        os.close(at)


def unlink_below(below: Path, path: Path) -> None:
    """Remove `path` if it is there, its folders opened from `below` down as `write_atomic` opens them."""
    if not AT:
        path.unlink(missing_ok=True)
        return
    rel = path.relative_to(below)
    *folders, name = rel.parts
    try:
        at = open_folders(below, folders, shown=rel.as_posix(), create=False, verb="remove")
    except FileNotFoundError:
        return
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=at)
    finally:
        os.close(at)


def write_atomic(path: Path, data: bytes, *, below: Path | None = None) -> None:
    """Replace `path` with `data` through a synced temporary file in the same folder (created if missing).

    The file keeps its mode, or a new one gets the mode an ordinary write would give it.

    `below`: a folder above `path` (the repository) from which each folder on the way is opened
    relative to the one above it, never through a symlink, and the file is written and renamed
    relative to the last (the `*at` system calls): a folder swapped for a link after the path was
    checked (safe_paths.writable_path) cannot send the write elsewhere. Such a folder raises
    UnsafePathError and nothing is written. Where the system lacks those calls (Windows), the
    path is written as named.
    """
    if below is not None and AT:
        rel = path.relative_to(below)
        *folders, name = rel.parts
        at = open_folders(below, folders, shown=rel.as_posix())
        try:
            _replace_at(at, name, data)
        except OSError as exc:  # named by the path being written, not a descriptor-relative leaf
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        finally:
            os.close(at)
        return
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


def open_folders(
    below: Path, folders: Sequence[str], *, shown: str, create: bool = True, verb: str | None = None
) -> int:
    """A descriptor of `below`/`folders`, each folder created if missing (`create`; else a missing
    one raises FileNotFoundError) and opened relative to the one above it without following a
    symlink; `below` itself is opened as named (the user's choice, which may be reached through
    one). UnsafePathError names a folder that is a symlink or not a folder (`shown`: the path
    being written or read, for the message)."""
    verb = verb or ("write" if create else "read")
    if create:
        below.mkdir(parents=True, exist_ok=True)
    at = os.open(below, FOLDER)
    try:
        for i, part in enumerate(folders):
            try:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=at)
                inner = os.open(part, FOLDER | NOFOLLOW, dir_fd=at)
            except OSError as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    # named by the folder's path, not relative to a descriptor
                    raise OSError(exc.errno, exc.strerror, str(below.joinpath(*folders[: i + 1]))) from None
                where = "/".join(folders[: i + 1])
                raise UnsafePathError(
                    f"refusing to {verb} {shown}: {where} is a symlink or not a folder (it changed after it was"
                    f" checked), and reconciler never {verb}s through one"
                    + ("; nothing was written" if create else ""),
                    hint=f"replace {where} with a real directory, then run the command again",
                ) from None
            os.close(at)
            at = inner
    except BaseException:
        os.close(at)
        raise
    return at


def _replace_at(at: int, name: str, data: bytes) -> None:
    """`name` in the open folder `at` replaced by `data` through a synced temporary sibling."""
    mode = _mode_at(at, name)
    while True:
        # 14 bytes beside the name: a name near NAME_MAX is cut (whole characters) to fit
        tmp = f".{name.encode()[: 255 - 14].decode(errors='ignore')}.{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC, 0o600, dir_fd=at)
            break
        except FileExistsError:
            continue
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, name, src_dir_fd=at, dst_dir_fd=at)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp, dir_fd=at)
        raise


def _mode_at(at: int, name: str) -> int:
    try:
        found = os.stat(name, dir_fd=at, follow_symlinks=False)
    except FileNotFoundError:
        found = None
    if found is not None and stat.S_ISREG(found.st_mode):
        return found.st_mode & 0o777
    return _new_file_mode()


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return _new_file_mode()


def _new_file_mode() -> int:
    """The mode an ordinary write gives a new file (0666 less the umask)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
