"""A computation moved to a forked child, so that it runs on another core while this process
goes on; its result comes back through a pipe.

Why a process, not a thread: `plan` parses and validates its spec files while it reads the
run listing (engine/session.open_session). On a thread the two share one interpreter lock, so
the spec work (0.19 s of CPU for 1,000 specs) is added to the listing's (0.2 s). In a forked
child it runs beside it. A fork needs no interpreter start and no imports, because the child has
the parent's. Reading the result back costs a tenth of computing it (0.02 s for 1,000 specs,
`pickle`). The bytes come from a pipe this process made for a child it forked itself, never
from a file, so unpickling them trusts nobody but this process.

Not `concurrent.futures.ProcessPoolExecutor` (fork context): measured here it costs 4-6 ms of
imports and 8-11 ms for a round trip against this module's 6-8 ms, and it cannot stop a task
that is running (its shutdown waits for it), which a Ctrl-C or a failed connect needs.

The child is used only when it is safe and when it worked:
- only on Linux, only while this process has a single thread (forking a process with other
  threads can copy a lock some thread held, and macOS frameworks do not survive a fork), and
  only while it reaps its own children (SIGCHLD not ignored: the exit status says "whole");
- whenever the child fails, is killed, or sends back anything short of a whole result (an
  exception raised in it included), the computation runs again here, on a thread. Errors are
  therefore always raised by the same code, in this process, with their own types and messages.

The computation must not write anything (it may run twice) and its result must pickle.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

T = TypeVar("T")


class Elsewhere(Generic[T]):
    """`compute()` started on another core (when it can be); `result()` gives its value."""

    def __init__(self, compute: Callable[[], T], *, to_send: Callable[[T], T] | None = None) -> None:
        """`to_send`, when given, turns the child's result into the equal value it sends (one
        that travels in fewer bytes, say); a result computed here is returned as computed."""
        self._compute = compute
        self._to_send = to_send
        self._pid: int | None = None
        self._fd: int | None = None
        self._froze = False
        if _can_fork():
            self._fork()
        self.forked = self._pid is not None  # a child was started (whether its result is used or not)

    async def result(self) -> T:
        """The child's result when it sent one whole, else `compute()` run here on a thread."""
        pid, fd = self._pid, self._fd
        self._pid = self._fd = None  # _receive reaps the child, whatever happens there
        if pid is not None and fd is not None:
            sent = await _receive(pid, fd)
            if sent is not None:
                try:
                    return cast(T, pickle.loads(sent))
                except Exception:  # anything short of a whole result: computed here
                    pass
        return await asyncio.to_thread(self._compute)

    def cancel(self) -> None:
        """Stop the child, if it is still running, and reap it (no result will be asked for).
        Call it once the result is no longer needed: it also gives the objects frozen at the fork
        back to the garbage collector."""
        if self._froze:
            self._froze = False
            gc.unfreeze()
        pid, self._pid = self._pid, None
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        self._close()

    def _fork(self) -> None:
        for stream in (sys.stdout, sys.stderr):  # a buffer the child inherits must be empty
            with contextlib.suppress(Exception):
                stream.flush()
        try:
            read_end, write_end = os.pipe()
        except OSError:  # out of file descriptors: computed here
            return
        # a Ctrl-C between the fork and the child's own handlers would run the parent's handler in
        # the child (and unwind through the parent's event loop there), or leave the parent with a
        # child it never recorded: both wait until each side has set itself up
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
        # what exists now is left out of this process's full garbage collections until `cancel`
        # (and stays shared with the child): a plan of 10,000 runs then ran no full collection,
        # where it had run one of 20-39 ms
        gc.freeze()
        self._froze = True
        try:
            pid = os.fork()
        except OSError:  # out of processes or memory: computed here
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            self._froze = False
            gc.unfreeze()
            os.close(read_end)
            os.close(write_end)
            return
        if pid == 0:  # the child: compute, send, and leave without running anything of the parent's
            code = 1
            try:
                os.close(read_end)
                # a signal here must not wake the parent's event loop through its wakeup pipe
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
                gc.disable()  # short-lived: its memory goes back whole when it exits
                value = self._compute()
                if self._to_send is not None:
                    value = self._to_send(value)
                _send(write_end, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
                code = 0
            except BaseException:  # the parent computes again and raises it there
                pass
            finally:
                os._exit(code)
        os.close(write_end)
        self._pid, self._fd = pid, read_end
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    def _close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


_DEFERRED = {signal.SIGINT, signal.SIGTERM}


def _can_fork() -> bool:
    """Linux, no thread of Python's but this one (threads started by C libraries are not seen:
    none of reconciler's are running when it forks), and a child this process reaps itself: with
    SIGCHLD ignored the kernel reaps it, and its exit status (and even its pid) would be lost."""
    return (
        sys.platform.startswith("linux")
        and hasattr(os, "fork")
        and threading.active_count() == 1
        and signal.getsignal(signal.SIGCHLD) != signal.SIG_IGN
    )


async def _receive(pid: int, fd: int) -> bytearray | None:
    """Everything the child wrote, once it has exited 0; None otherwise. Reaps the child.

    Read by the event loop, not a thread: a reading thread's buffers land in a malloc arena of
    its own, which kept about 1 MiB more at the peak of a plan."""
    loop = asyncio.get_running_loop()
    received = bytearray()
    ended: asyncio.Future[bool] = loop.create_future()

    def readable() -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk, received[:] = b"", b""
        if chunk:
            received.extend(chunk)
        elif not ended.done():
            ended.set_result(True)

    whole = False
    status: int | None = None
    try:
        os.set_blocking(fd, False)
        loop.add_reader(fd, readable)
        whole = await ended
    finally:
        loop.remove_reader(fd)
        os.close(fd)
        if not whole:  # cancelled: the result will never be read
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):  # reaped by someone else: its status is unknown
            _, status = await asyncio.shield(asyncio.to_thread(os.waitpid, pid, 0))
    if status is None or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    return received


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)
