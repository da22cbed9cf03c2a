"""One file from a presigned URL to its place on disk: streamed, resumable, verified, atomic.

    target            artifacts/r1/trace.json
    partial           artifacts/r1/.trace.json.<key>.partial   (key: the manifest's size and token)

1. The partial is opened and locked (a second reconciler on the same folder fails that file
   instead of interleaving writes). Bytes already in it, fewer than the manifest size, are
   resumed with `Range: bytes=<n>-`; the answer must be 206 with exactly
   `Content-Range: bytes <n>-<size-1>/<size>`, otherwise a 200 restarts the file from byte 0
   and any other 206 is discarded and the file requested again from 0.
2. The body streams into the partial chunk by chunk (memory stays flat in the file size);
   more bytes than the manifest lists is an error. At most `network_slots` files are on the
   network at once (when set); step 3 holds no slot.
3. A complete partial is made durable, then renamed over the target. On Linux 5.8 and later
   partials are made durable in groups (group commit): one `syncfs` per filesystem for every
   partial that completed while the previous group was being written, on a worker thread.
   Elsewhere each partial is fsynced on one of FSYNC_THREADS threads. A cancelled download
   closes the file once that is over. A folder that already existed is listed once; partials
   of other versions of a file found there are removed when the file lands, unless another
   process holds them.

Folders: each is created once, on one folder thread, FOLDER_GROUP at a time in the order their
files come (`Transfer.prepare`: the files a URL batch answered for), and checked right then to
be a real folder (no symlink) inside the run folder; a transfer waits for its own folder only,
opens it just before it opens the partial there (it must still be the very folder that was
checked), and opens, renames and removes its files relative to that open folder. A download whose URL requests fail makes no folder; one that is stopped may leave
empty folders for files it had not started. mkdir is the costliest system call of a small file,
and on the folder thread it runs beside the event loop's HTTP work: measured with
tests/perf/bench_download.py's in-process engine on a 2-core VM (2,004 files of 100 kB on
loopback, alternating 20 runs each), a median of 1.88 s against 1.97 s with mkdir inline (and 3%
less CPU). Holding small files' bytes in memory for the fsync thread to write as well measured
no faster.

Failures, per file:

    403                               the URL expired: ask for a fresh one, once
    5xx, 429, 408, network error,     retry with backoff (reconciler.osmosis.retry); what was
      body shorter than the size        written is kept and the next request resumes it
    a failure that made progress      resumes at once and restores the retry budget (bounded by
                                        MAX_REQUESTS requests per file)
    any other status                  the file fails
    the process dies                  the partial stays; the next download resumes it
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
import re
import stat
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..files import AT, CLOEXEC, FOLDER, NOFOLLOW
from ..osmosis.errors import PlatformError, PlatformUnreachable
from ..osmosis.retry import RetryPolicy, parse_retry_after
from ..osmosis.transport import StreamedResponse, TransportError
from .paths import PARTIAL_SUFFIX, Accepted, inside, partial_pattern, regular_size

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows
    fcntl = None  # type: ignore[assignment]

MOVED_OUTSIDE = "The destination moved outside the run folder during the download."
BUSY = "Another download is writing this file right now."
LINKED = "A folder on this file's path became a symlink during the download; reconciler never writes through one."
NOT_A_FILE = (
    "{name} (where this file is first written) is {what}, and reconciler writes only its own regular files"
    " there. Remove it and download again."
)
FOLDER_GROUP = 32  # folders created per hand-off to the folder thread
FSYNC_THREADS = 2  # fsyncs in flight at once; each thread syncs what is queued in turn
RELEASE_CACHE_UP_TO = 1 << 20  # files up to this size leave the page cache once durable (_make_durable)
MAX_REQUESTS = 64  # per file, whatever happens: a hard stop for servers that trickle forever
RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
FILE_RETRY = RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=8.0, max_total_seconds=120.0)
_fadvise = getattr(os, "posix_fadvise", None)
_DONTNEED: int = getattr(os, "POSIX_FADV_DONTNEED", 4)
_OPEN_FLAGS = os.O_RDWR | os.O_CREAT | CLOEXEC
_NOFOLLOW = NOFOLLOW
_DIR_FLAGS = FOLDER
_AT = AT
_CONTENT_RANGE = re.compile(r"^\s*bytes\s+(\d+)-(\d+)/(\d+)\s*$", re.IGNORECASE)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)


class Opener(Protocol):
    """`OsmosisClient.open_presigned`: a streamed GET without credentials."""

    def __call__(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> contextlib.AbstractAsyncContextManager[StreamedResponse]: ...


Refresher = Callable[[Accepted], Awaitable[str]]
"""A fresh presigned URL for a file (one download-urls call); raises PlatformError or returns."""


def redact_urls(text: str) -> str:
    return _URL.sub("<redacted URL>", text)


@dataclass
class Outcome:
    error: str | None = None
    received: int = 0  # bytes that came over the network for this file
    resumed: int = 0  # bytes reused from a partial left by an earlier attempt or process


class _Retry(Exception):
    def __init__(self, reason: str, *, retry_after: float | None = None, restart: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.restart = restart  # the partial is worthless: start from byte 0


class _Fail(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Expired(Exception):
    pass


class Transfer:
    """Fetches files of one run into one run folder."""

    def __init__(
        self,
        open_url: Opener,
        refresh: Refresher,
        run_dir: Path,
        *,
        retry: RetryPolicy = FILE_RETRY,
        overwrite: bool = False,
        on_bytes: Callable[[int], None] | None = None,
        network_slots: int | None = None,
    ) -> None:
        self.open_url = open_url
        self.refresh = refresh
        self.run_dir = run_dir
        self.retry = retry
        self.overwrite = overwrite
        self.on_bytes = on_bytes or (lambda n: None)
        self._network = asyncio.Semaphore(network_slots) if network_slots else None
        self._syncing = ThreadPoolExecutor(max_workers=FSYNC_THREADS, thread_name_prefix="fsync")
        syncfs = group_syncfs()
        self._group = _GroupSync(self._syncing, syncfs) if syncfs is not None else None
        self._root = os.fspath(run_dir)
        # folders are created on this one thread, in the order their files come (`prepare`)
        self._creating = ThreadPoolExecutor(max_workers=1, thread_name_prefix="folders")
        self._ready: dict[str, asyncio.Future[dict[str, Exception]]] = {}  # folder -> its group's job
        # the folder thread's own; the event loop reads a folder's entry only once its group is done
        self._folders: set[str] = set()  # created and checked
        self._identity: dict[str, tuple[int, int]] = {}  # folder -> (device, inode) of what was checked
        self._partials: dict[str, set[str]] = {}  # folder -> names of the partials it held when first seen

    def prepare(self, items: Sequence[Accepted]) -> None:
        """Start creating the folders of `items` on the folder thread, in their order, FOLDER_GROUP
        folders per hand-off. A transfer waits only for its own folder's group."""
        loop = asyncio.get_running_loop()
        group: dict[str, None] = {}
        for item in items:
            path = os.fspath(item.folder)
            if path not in self._ready:
                group[path] = None
                if len(group) == FOLDER_GROUP:
                    self._create(loop, list(group))
                    group = {}
        if group:
            self._create(loop, list(group))

    def _create(self, loop: asyncio.AbstractEventLoop, paths: list[str]) -> None:
        job = loop.run_in_executor(self._creating, self._make_folders, paths)
        for path in paths:
            self._ready[path] = job

    async def fetch(self, item: Accepted, url: str) -> Outcome:
        outcome = Outcome()
        try:
            at = await self._folder(item.folder)
            try:
                # inline: measured faster than on a thread, where GIL hand-offs cost more than the
                # event loop gains from not waiting for open
                fd, kept, device = self._open(at, item)
            except BaseException:
                at.close()
                raise
        except _Fail as failed:
            outcome.error = failed.reason
            return outcome
        except OSError as exc:
            outcome.error = f"Could not create {item.path}: {exc.strerror or exc}"
            return outcome
        try:
            return await self._fetch_into(at, item, url, fd, kept, device, outcome)
        finally:
            at.close()

    async def _fetch_into(
        self, at: _Folder, item: Accepted, url: str, fd: int, kept: int, device: int, outcome: Outcome
    ) -> Outcome:
        """The body into the open partial `fd`, then durable and landed (steps 2 and 3)."""
        closed = False
        try:
            outcome.resumed = kept
            self.on_bytes(kept)
            if self._network is None:
                await self._loop(item, url, fd, kept, outcome)
            else:
                async with self._network:
                    await self._loop(item, url, fd, kept, outcome)
            if outcome.error is None:
                syncing = self._durable(fd, device, item.size <= RELEASE_CACHE_UP_TO)
                try:
                    await asyncio.shield(syncing)
                except asyncio.CancelledError:
                    closed = True  # the sync still runs: the file is closed once it is over
                    syncing.add_done_callback(functools.partial(_close_when_synced, fd))
                    raise
                _land(at, item, self._stale(item))
        except _Fail as failed:
            outcome.error = failed.reason
        except OSError as exc:
            outcome.error = f"Could not write {item.path}: {exc.strerror or exc}"
        finally:
            if not closed:
                os.close(fd)
        if outcome.error is not None and at.regular_size(item.partial_file) == 0:
            with contextlib.suppress(OSError):
                at.unlink(item.partial_file)
        return outcome

    def close(self) -> None:
        """Let the fsync threads exit (call once every fetch has returned). Folders not yet
        created never are; the group being created (at most FOLDER_GROUP folders) is waited
        for, so none appears once this returns."""
        self._syncing.shutdown(wait=False)
        self._creating.shutdown(wait=True, cancel_futures=True)

    def _durable(self, fd: int, device: int, release: bool) -> asyncio.Future[None]:
        """Done once the partial's bytes (on filesystem `device`) are on disk (see step 3)."""
        if self._group is not None:
            return self._group.durable(fd, device, release)
        return asyncio.get_running_loop().run_in_executor(self._syncing, _make_durable, fd, release)

    def _open(self, at: _Folder, item: Accepted) -> tuple[int, int, int]:
        """The partial, opened and locked; how many of its bytes can be resumed; its filesystem.

        Only a regular file of one link is ever opened there, never through a symlink: a link
        (soft or hard) planted at the partial's (predictable) name would otherwise have its
        target appended to, or truncated, and then renamed over the file. Once locked, the partial must still be the
        file at that name: a second download that opened it just before the first renamed it
        into place holds the landed file, which it must not truncate."""
        try:
            fd = at.open_file(item.partial_file, _OPEN_FLAGS | _NOFOLLOW)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: FreeBSD's answer for a final link
                raise _Fail(NOT_A_FILE.format(name=item.partial_file, what="a symlink")) from None
            raise
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    raise _Fail(BUSY) from None
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                raise _Fail(NOT_A_FILE.format(name=item.partial_file, what="not a regular file"))
            if opened.st_nlink != 1:  # a hard link: writing it would change a file elsewhere too
                raise _Fail(NOT_A_FILE.format(name=item.partial_file, what="a hard link to another file"))
            if fcntl is not None:
                try:
                    now = at.lstat(item.partial_file)
                except FileNotFoundError:
                    raise _Fail(BUSY) from None
                if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
                    raise _Fail(BUSY)
            kept = opened.st_size
            if self.overwrite or kept > item.size:
                os.ftruncate(fd, 0)
                kept = 0
        except BaseException:
            os.close(fd)
            raise
        return fd, kept, opened.st_dev

    async def _folder(self, folder: Path) -> _Folder:
        """Wait for the file's folder (asking for it if nobody has); raise what creating it
        raised. Then open the folder, just before the file is opened in it: the path must still
        lead to the very folder that was made and checked, and from then on the file is opened,
        renamed and removed relative to that open folder (`_Folder`), so a folder swapped for a
        link later cannot send the file elsewhere."""
        path = os.fspath(folder)
        if path not in self._ready:
            self._create(asyncio.get_running_loop(), [path])
        # shielded: the group is shared by every file of its folders, and one file's
        # cancellation must not cancel it for the others
        failure = (await asyncio.shield(self._ready[path])).get(path)
        if isinstance(failure, _Fail):
            raise _Fail(failure.reason)  # a new exception per file: none carries another's traceback
        if isinstance(failure, OSError):
            raise OSError(failure.errno, failure.strerror, failure.filename)
        if failure is not None:
            raise failure
        # the folder the path leads to now (every symlink on the way followed) must be the one
        # that was checked: a folder, or any folder above it, swapped for a link since is refused
        at = _Folder.open(path)
        try:
            if at.identity() != self._identity.get(path):
                raise _Fail(MOVED_OUTSIDE)
        except BaseException:
            at.close()
            raise
        return at

    def _make_folders(self, paths: list[str]) -> dict[str, Exception]:
        """On the folder thread: create and check each folder (see `_make_folder`); what failed."""
        failures: dict[str, Exception] = {}
        for path in paths:
            try:
                if path not in self._folders:
                    self._make_folder(path)
            except (_Fail, OSError) as exc:
                failures[path] = exc
        return failures

    def _make_folder(self, path: str) -> None:
        """Create a file's folder once, and check it is a real folder inside the run folder.

        The manifest screen already refused paths through symlinks; this catches a link that
        appeared since (and `_folder` looks again just before the file is opened: this runs
        ahead of the files, on the folder thread). Folders are checked from the run folder
        down: a real folder (not a symlink) in a checked folder is inside too (one lstat).
        (Paths are strings here: this runs once per file, and pathlib's objects cost more than
        the system calls.)
        """
        parent = os.path.dirname(path)  # noqa: PTH120 - a str path (see above)
        if path == self._root or parent == path:
            Path(path).mkdir(parents=True, exist_ok=True)
            created = False
            if not inside(self.run_dir, Path(path, "_")):
                raise _Fail(MOVED_OUTSIDE)
        else:
            if parent not in self._folders:
                self._make_folder(parent)
            try:
                os.mkdir(path)  # noqa: PTH102 - a str path (see above)
                created = True
            except FileExistsError:
                created = False
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):  # wherever it leads (paths.SYMLINK): it appeared since the screen
                raise _Fail(LINKED)
            if not stat.S_ISDIR(mode):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
        checked = os.stat(path)  # noqa: PTH116 - a str path (see above)
        self._identity[path] = (checked.st_dev, checked.st_ino)
        self._folders.add(path)
        if not created:  # a folder we just made holds nothing yet
            self._partials[path] = _partial_names(path)

    def _stale(self, item: Accepted) -> list[Path]:
        """Partials of other versions of the item (another size or token) found in its folder."""
        names = self._partials.get(os.fspath(item.folder))
        if not names:
            return []
        own = item.partial_file
        pattern = partial_pattern(item.target.name)
        found = [name for name in names if name != own and pattern.match(name)]
        names.difference_update(found)
        return [item.folder / name for name in found]

    async def _loop(self, item: Accepted, url: str, fd: int, kept: int, outcome: Outcome) -> None:
        clock = self.retry.clock
        refreshed = False
        failures = 0
        since = clock()
        before = kept
        for attempt in range(MAX_REQUESTS):
            if attempt:
                before = os.fstat(fd).st_size
            try:
                await self._once(item, url, fd, before, outcome)
                return
            except _Expired:
                if refreshed:
                    raise _Fail(
                        "The download URL was refused (HTTP 403) even after a fresh one was requested."
                    ) from None
                refreshed = True
                try:
                    url = await self.refresh(item)
                except PlatformError as exc:
                    raise _Fail(
                        f"The download URL expired and could not be refreshed: {redact_urls(exc.message)}"
                    ) from None
                continue
            except _Retry as retry:
                if retry.restart:
                    self._reset(fd, outcome)
                if os.fstat(fd).st_size > before and retry.retry_after is None:
                    # progress: resume at once, and the budget starts over
                    failures, since = 0, clock()
                    continue
                failures += 1
                delay = self.retry.next_delay(failures, clock() - since, retry.retry_after)
                if delay is None:
                    raise _Fail(retry.reason) from None
                await self.retry.sleep(delay)
        raise _Fail(f"Gave up after {MAX_REQUESTS} requests for this file.")

    def _reset(self, fd: int, outcome: Outcome) -> None:
        """Throw away what the partial holds: the next request starts from byte 0."""
        self.on_bytes(-os.fstat(fd).st_size)
        os.ftruncate(fd, 0)
        outcome.resumed = 0

    async def _once(self, item: Accepted, url: str, fd: int, offset: int, outcome: Outcome) -> None:
        if offset == item.size and item.size > 0:
            return  # a previous attempt got every byte; only the rename was missing
        headers = {"Range": f"bytes={offset}-"} if offset > 0 else None
        try:
            async with self.open_url(url, headers=headers) as response:
                status = response.status
                if status == 403:
                    raise _Expired()
                if status in RETRY_STATUSES:
                    retry_after = parse_retry_after(response.headers.get("Retry-After"))
                    raise _Retry(f"The download failed with HTTP {status}.", retry_after=retry_after)
                if status == 416:
                    raise _Retry("The server refused to resume this file (HTTP 416).", restart=True)
                if status == 206:
                    if not _range_matches(response.headers.get("Content-Range"), offset, item.size):
                        raise _Retry("The server answered a resume with the wrong range.", restart=True)
                elif status == 200:
                    if offset:
                        self._reset(fd, outcome)
                        offset = 0
                else:
                    raise _Fail(f"The download failed with HTTP {status}.")
                written = offset
                async for chunk in response.chunks():  # decoded bytes: the manifest's sizes are of those
                    if written + len(chunk) > item.size:
                        raise _Retry(
                            f"The server sent more than the {item.size} bytes the manifest lists.", restart=True
                        )
                    _write_all(fd, chunk, written)
                    written += len(chunk)
                    outcome.received += len(chunk)
                    self.on_bytes(len(chunk))
        except PlatformUnreachable as exc:
            raise _Retry(redact_urls(exc.message)) from None
        except TransportError as exc:  # the body broke off: what arrived is kept and resumed
            raise _Retry(f"The download broke off: {redact_urls(exc.detail)}") from None
        except PlatformError as exc:  # an invalid URL, a redirect to a place we refuse
            raise _Fail(redact_urls(exc.message)) from None
        if written < item.size:
            raise _Retry(f"The download ended after {written} of {item.size} bytes.")


def _land(at: _Folder, item: Accepted, stale: list[Path]) -> None:
    """In place (the partial is durable already): rename it over the target; then remove
    partials of other versions of the file, unless another process holds them."""
    at.replace(item.partial_file, item.target.name)
    for path in stale:
        at.remove_unless_locked(path.name)


class _Folder:
    """A file's folder, held open: names are opened, renamed and removed relative to it (the
    `*at` system calls), so what was checked is where they land. Where the system lacks those
    calls (Windows), full paths are used instead."""

    __slots__ = ("fd", "path")

    def __init__(self, path: str, fd: int | None) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def open(cls, path: str) -> _Folder:
        return cls(path, os.open(path, _DIR_FLAGS) if _AT else None)

    def identity(self) -> tuple[int, int]:
        st = os.fstat(self.fd) if self.fd is not None else os.stat(self.path)  # noqa: PTH116 - a str path
        return (st.st_dev, st.st_ino)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _name(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)  # noqa: PTH118 - str paths, per file

    def open_file(self, name: str, flags: int) -> int:
        return os.open(self._name(name), flags, 0o644, dir_fd=self.fd)

    def lstat(self, name: str) -> os.stat_result:
        return os.stat(self._name(name), dir_fd=self.fd, follow_symlinks=False)

    def regular_size(self, name: str) -> int | None:
        return regular_size(self._name(name), dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(self._name(name), dir_fd=self.fd)

    def replace(self, name: str, target: str) -> None:
        os.replace(self._name(name), self._name(target), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def remove_unless_locked(self, name: str) -> None:
        try:
            fd = self.open_file(name, os.O_RDONLY | CLOEXEC | _NOFOLLOW)
        except OSError:
            return
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.unlink(name)
        except OSError:
            pass
        finally:
            os.close(fd)


def _make_durable(fd: int, release: bool) -> None:
    """fsync; then, for a small file, drop its (now clean) pages from the page cache."""
    os.fsync(fd)
    if release:
        _release(fd)


def _release(fd: int) -> None:
    """Drop a durable file's (clean) pages from the page cache, so the next files reuse them at
    once. Measured on a 2-core VM: 2,000 files of 100 kB were written with a fifth of the kernel
    time into recycled pages than into fresh ones; for files of 25 MB releasing cost more than
    it saved. A hint: its failure does not matter."""
    if _fadvise is not None:
        with contextlib.suppress(OSError):
            _fadvise(fd, 0, 0, _DONTNEED)


def _close_when_synced(fd: int, syncing: asyncio.Future[None]) -> None:
    if not syncing.cancelled():
        syncing.exception()  # retrieved: the download it belonged to was cancelled
    os.close(fd)


class _GroupSync:
    """Group commit: every partial that completes while a group is being written joins the next
    group, and a group is made durable with one `syncfs` per filesystem it touches.

    Measured with tests/perf/bench_download.py on a 2-core VM (2,004 files of 100 kB on
    loopback, the engine in process, alternating with an fsync per file on two threads):
    1.58-2.01 s against 2.38-2.53 s. Each fsync is its own journal commit, and each hand-off to
    a thread wakes it and takes the GIL back (`strace -f -c`: 24 futex calls per file); a group
    pays both once. Grouping the fsyncs themselves measured slower (2.68 s against 2.35-2.50 s).
    """

    def __init__(self, pool: ThreadPoolExecutor, syncfs: Callable[[int], None]) -> None:
        self._pool = pool
        self._syncfs = syncfs
        self._next: list[tuple[int, int, bool, asyncio.Future[None]]] = []
        self._writing = False

    def durable(self, fd: int, device: int, release: bool) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._next.append((fd, device, release, done))
        if not self._writing:
            self._write(loop)
        return done

    def _write(self, loop: asyncio.AbstractEventLoop) -> None:
        group, self._next = self._next, []
        self._writing = True
        files = [(fd, device, release) for fd, device, release, _ in group]
        try:
            job = loop.run_in_executor(self._pool, _make_group_durable, self._syncfs, files)
        except RuntimeError:  # the transfer was closed while these waited (cancelled): none lands
            self._writing = False
            for *_, done in group:
                done.set_exception(OSError(errno.ECANCELED, "the download was closed before this file was on disk"))
            return

        def written(job: asyncio.Future[list[OSError | None]]) -> None:
            self._writing = False
            # every waiting file gets an answer, whatever became of the job: none may wait forever
            if job.cancelled():
                for *_, done in group:
                    done.cancel()
            else:
                failure = job.exception()
                errors: list[BaseException | None] = [failure] * len(group) if failure else [*job.result()]
                for (*_, done), error in zip(group, errors, strict=True):
                    if error is None:
                        done.set_result(None)
                    else:
                        done.set_exception(error)
            if self._next:
                self._write(loop)

        job.add_done_callback(written)


def _make_group_durable(syncfs: Callable[[int], None], files: list[tuple[int, int, bool]]) -> list[OSError | None]:
    """One syncfs per filesystem among `files` (fd, device, release); each file's error, or None
    once it is durable."""
    errors: list[OSError | None] = [None] * len(files)
    by_device: dict[int, list[int]] = {}
    for n, (_, device, _) in enumerate(files):
        by_device.setdefault(device, []).append(n)
    for members in by_device.values():
        try:
            syncfs(files[members[0]][0])
        except OSError as exc:
            for n in members:
                errors[n] = exc
    for n, (fd, _, release) in enumerate(files):
        if errors[n] is None and release:
            _release(fd)
    return errors


@functools.cache
def group_syncfs() -> Callable[[int], None] | None:
    """The system's syncfs, where it reports write-back errors (Linux 5.8 and later); else None."""
    if not sys.platform.startswith("linux") or _kernel_version() < (5, 8):
        return None
    import ctypes  # here: only a download pays for it

    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    call.argtypes = [ctypes.c_int]
    call.restype = ctypes.c_int

    def syncfs(fd: int) -> None:
        if call(fd) != 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))

    return syncfs


def _kernel_version() -> tuple[int, int]:
    match = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _partial_names(folder: str) -> set[str]:
    """The names of the partial files in a folder."""
    try:
        with os.scandir(folder) as entries:
            return {entry.name for entry in entries if entry.name.endswith(PARTIAL_SUFFIX)}
    except OSError:
        return set()


def _range_matches(value: str | None, offset: int, size: int) -> bool:
    match = _CONTENT_RANGE.match(value or "")
    if match is None:
        return False
    first, last, total = (int(g) for g in match.groups())
    return first == offset and last == size - 1 and total == size


def _write_all(fd: int, data: bytes, offset: int) -> None:
    """All of `data` at `offset` (pwrite: the file position is never used)."""
    n = os.pwrite(fd, data, offset)
    if n == len(data):  # nearly always: a short write is a full disk's or a signal's
        return
    view, offset = memoryview(data)[n:], offset + n
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n
