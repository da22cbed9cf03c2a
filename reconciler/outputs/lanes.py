"""Blocking file-system calls on a few long-lived threads, with results handed back in bulk.

    opening = Lane(threads=1, name="open")
    fd, kept = await opening.run(open_partial, item, discard=close_result)
    opening.close()                         # the threads exit once the queue is empty

Creating folders and files (inode allocation) and fsync (waiting for the disk) cost real
kernel time, which on the event loop would stall every transfer. A thread pool hop per call
(run_in_executor) costs several thread switches each (futures, queue, wake-ups, GIL
hand-offs), a measurable share of a many-small-files download on a small machine. Here each
thread takes every queued call at once and runs them in turn; finished calls are handed back
to the loop with one wake-up for all that finished meanwhile.

Cancellation: a call that was queued or running when its awaiting task was cancelled still
runs to the end; then `discard(result)` is called on the loop (result None if the call
raised), so whatever it opened can be closed.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass
class _Call(Generic[T]):
    run: Callable[[], T]
    done: asyncio.Future[T]
    discard: Callable[[T | None], None] | None
    value: T | None = None
    error: BaseException | None = None


class Lane:
    def __init__(self, *, threads: int = 1, name: str = "lane") -> None:
        self._count = max(1, threads)
        self._name = name
        self._queue: queue.SimpleQueue[_Call[Any] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._finished: list[_Call[Any]] = []
        self._wake_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None

    async def run(self, call: Callable[[], T], *, discard: Callable[[T | None], None] | None = None) -> T:
        """`call()` on a lane thread; its exception, if any, is raised here."""
        loop = asyncio.get_running_loop()
        if not self._threads:
            self._start(loop)
        job: _Call[T] = _Call(call, loop.create_future(), discard)
        self._queue.put(job)
        try:
            return await job.done
        except asyncio.CancelledError:
            if job.done.done() and not job.done.cancelled() and discard is not None:
                discard(job.value)  # it had finished: nobody else will discard it
            raise  # else it was cancelled while queued or running: _deliver discards it

    def close(self) -> None:
        """Let the threads finish what is queued, then exit (does not wait for them)."""
        for _ in self._threads:
            self._queue.put(None)
        self._threads = []

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        for n in range(self._count):
            thread = threading.Thread(target=self._work, name=f"reconciler-{self._name}-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _work(self) -> None:
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            for job in batch:
                if job is not None:
                    self._call(job)
            stops = batch.count(None)
            if stops:
                for _ in range(stops - 1):
                    self._queue.put(None)  # sentinels meant for the other threads
                return

    def _call(self, job: _Call[Any]) -> None:
        try:
            job.value = job.run()
        except BaseException as exc:  # handed to the awaiting task
            job.error = exc
        with self._lock:
            self._finished.append(job)
            if self._wake_pending:
                return
            self._wake_pending = True
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self._deliver)
        except RuntimeError:  # the loop is closed: nobody waits any more
            with self._lock:
                orphans, self._finished = self._finished, []
            for orphan in orphans:
                if orphan.discard is not None:
                    orphan.discard(orphan.value)

    def _deliver(self) -> None:
        with self._lock:
            finished, self._finished = self._finished, []
            self._wake_pending = False
        for job in finished:
            if job.done.cancelled():
                if job.discard is not None:
                    job.discard(job.value)
            elif job.error is not None:
                job.done.set_exception(job.error)
            else:
                job.done.set_result(job.value)
