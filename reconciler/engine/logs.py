"""A run's lifecycle log through the cursor-paged logs endpoint: the newest entries, or follow until the run ends.

The contract: entries are oldest first within a page; no cursor + "older" is the newest page and
`next_cursor` pages further back; "newer" pages forward. Following walks forward and re-reads the
last, partly filled page from its cursor, skipping what was already printed (logs only grow).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from ..core.world import TERMINAL
from ..osmosis.client import LOG_LIMIT, OsmosisClient
from ..osmosis.models import LogEntry


@dataclass(frozen=True)
class Tail:
    entries: tuple[LogEntry, ...]  # oldest first
    older_cursor: str | None  # pass as --cursor to read further back; None at the beginning


async def newest(client: OsmosisClient, run: str, limit: int, cursor: str | None = None) -> Tail:
    """The newest `limit` entries before `cursor` (or the end), in as many pages as it takes."""
    pages: list[tuple[LogEntry, ...]] = []
    left = limit
    while left > 0:
        page = await client.get_logs(run, limit=min(left, LOG_LIMIT), direction="older", cursor=cursor)
        pages.append(page.logs[-left:] if len(page.logs) > left else page.logs)
        left -= len(pages[-1])
        cursor = page.next_cursor
        if cursor is None or not page.logs:
            break
    return Tail(tuple(e for page in reversed(pages) for e in page), cursor)


async def follow(client: OsmosisClient, run: str, *, backlog: int, interval: float) -> AsyncIterator[LogEntry]:
    """The last `backlog` entries so far, then every new one, until the run is terminal and drained."""
    cursor: str | None = None
    seen = 0  # entries of the page at `cursor` already yielded
    first: list[LogEntry] = []
    catching_up = True
    while True:
        done = (await client.get_run(run)).benchmark_run.status in TERMINAL
        while True:
            page = await client.get_logs(run, limit=LOG_LIMIT, direction="newer", cursor=cursor)
            fresh = page.logs[seen:]
            if catching_up:
                first.extend(fresh)
            else:
                for entry in fresh:
                    yield entry
            if page.next_cursor is None:
                seen = len(page.logs)
                break
            cursor, seen = page.next_cursor, 0
        if catching_up:
            for entry in first[-backlog:] if backlog else []:
                yield entry
            catching_up = False
        if done:
            return
        await asyncio.sleep(interval)
