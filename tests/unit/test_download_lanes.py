"""Lanes: blocking calls on a few threads; results, errors and cancellations reach the loop."""

from __future__ import annotations

import asyncio
import errno
import functools
import os
import threading
from pathlib import Path

import pytest

from reconciler.outputs.lanes import Lane


def is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError as exc:
        assert exc.errno == errno.EBADF
        return False
    return True


def test_many_calls_come_back_to_their_own_callers(tmp_path: Path) -> None:
    fds = [os.open(tmp_path / f"f{n}", os.O_RDWR | os.O_CREAT, 0o644) for n in range(40)]
    threads: set[str] = set()

    def sync(fd: int) -> int:
        threads.add(threading.current_thread().name)
        os.fsync(fd)
        return fd

    async def go() -> list[int]:
        lane = Lane(threads=2, name="fsync")
        try:
            return await asyncio.gather(*(lane.run(functools.partial(sync, fd)) for fd in fds))
        finally:
            lane.close()

    assert asyncio.run(go()) == fds
    assert threads <= {"reconciler-fsync-0", "reconciler-fsync-1"} and all(is_open(fd) for fd in fds)
    for fd in fds:
        os.close(fd)


def test_an_error_is_raised_in_the_waiting_task() -> None:
    read_end, write_end = os.pipe()  # a pipe cannot be fsynced: EINVAL

    async def go() -> None:
        lane = Lane()
        try:
            with pytest.raises(OSError) as raised:
                await lane.run(functools.partial(os.fsync, read_end))
            assert raised.value.errno == errno.EINVAL
        finally:
            lane.close()

    asyncio.run(go())
    os.close(read_end)
    os.close(write_end)


def test_a_cancelled_call_still_finishes_and_its_result_is_discarded(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()
    discarded: list[int | None] = []

    def slow_open() -> int:
        started.set()
        release.wait(5)
        return os.open(tmp_path / "f", os.O_RDWR | os.O_CREAT, 0o644)

    def discard(fd: int | None) -> None:
        discarded.append(fd)
        if fd is not None:
            os.close(fd)

    async def go() -> None:
        lane = Lane()
        task = asyncio.create_task(lane.run(slow_open, discard=discard))
        while not started.is_set():
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        for _ in range(200):
            if discarded:
                break
            await asyncio.sleep(0.01)
        lane.close()

    asyncio.run(go())
    assert len(discarded) == 1 and discarded[0] is not None and not is_open(discarded[0])
