"""Runs whose config is newer than this checkout's specs: submitted from a commit the checkout is
behind (identity.COMMIT_ENV). The plan blocks their stop (identity.stop_refusal), and apply asks
again right before stopping.

    history = CheckoutHistory(root)
    behind = await history.newer_runs(client, run_ids)    # run id -> its commit

Each commit is asked once per process and one at a time: stops run concurrently, and two
fetches into one repository at once fail on git's locks (vcs.history.is_behind fetches a commit
the clone lacks).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path

from ..osmosis.client import OsmosisClient
from ..osmosis.errors import PlatformError
from ..osmosis.models import RunDetail
from .observe import commit_of

READS_AT_ONCE = 16  # a prune of a thousand orphans reads their details in this many at once


class CheckoutHistory:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = asyncio.Lock()
        self._behind_of: dict[str, bool | None] = {}

    async def is_behind(self, sha: str) -> bool | None:
        async with self._lock:
            if sha not in self._behind_of:
                from ..vcs.history import is_behind

                self._behind_of[sha] = await asyncio.to_thread(is_behind, self.root, sha)
            return self._behind_of[sha]

    async def behind_commit(self, detail: RunDetail) -> str | None:
        """The commit the run was submitted from, when this checkout is behind it; None when it is
        not, the run carries none (earlier versions), or git cannot say."""
        sha = commit_of(detail)
        if sha is None or await self.is_behind(sha) is not True:
            return None
        return sha

    async def newer_runs(self, client: OsmosisClient, run_ids: Iterable[str]) -> dict[str, str]:
        """run id -> its commit, for each of `run_ids` submitted from a commit this checkout is behind.

        A run that cannot be read (gone since the listing, an error the retries did not outlast)
        is left out: the plan shows its stop, and apply, which reads the run again before
        stopping it, refuses it there or fails that one action, never the whole plan."""
        gate = asyncio.Semaphore(READS_AT_ONCE)

        async def one(run_id: str) -> str | None:
            async with gate:
                try:
                    detail = await client.get_run(run_id)
                except PlatformError:
                    return None
            return await self.behind_commit(detail)

        ids = sorted(set(run_ids))
        found = await asyncio.gather(*(one(run_id) for run_id in ids))
        return {run_id: sha for run_id, sha in zip(ids, found, strict=True) if sha is not None}
