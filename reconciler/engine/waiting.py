"""Follow owned runs until they end, reporting each poll to the caller's `RunProgress`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

from ..core.world import Observed, ObservedRun
from ..errors import ReconcilerError
from ..settings import LOCAL_PLATFORM, Project
from .operations import _plan_in, make_policy, waiting_on
from .progress import RunProgress, Silent
from .session import RepoSession, open_session


class WaitTimeout(ReconcilerError):
    pass


async def wait_in(
    session: RepoSession, targets: Sequence[str], timeout: float, interval: float, progress: RunProgress | None = None
) -> Observed:
    """Poll until no owned run of the specs' current configs is active; `WaitTimeout` after `timeout` seconds.

    `progress` sees every run that was active at some poll, until the end (default: nothing shown).
    """
    policy = make_policy(session.project, targets, False, False)
    deadline = time.monotonic() + timeout
    shown = progress if progress is not None else Silent()
    followed: dict[str, ObservedRun] = {}
    try:
        while True:
            result = await _plan_in(session, policy)
            active = waiting_on(result)
            for run in active:
                followed[run.id] = run
            for run in result.observed.runs:
                if run.id in followed:
                    followed[run.id] = run
            shown.update(list(followed.values()))
            if not active:
                return result.observed
            if time.monotonic() >= deadline:
                names = ", ".join(r.name for r in active)
                raise WaitTimeout(
                    f"timed out after {timeout:g}s; still active: {names}", hint="run `reconciler wait` again"
                )
            await asyncio.sleep(interval)
    finally:
        shown.close()


async def wait_for_runs(
    project: Project,
    *,
    targets: Sequence[str] = (),
    timeout: float = 3600.0,
    interval: float | None = None,
    platform: str | None = None,
    workspace: str | None = None,
    progress: RunProgress | None = None,
) -> Observed:
    async with open_session(project, platform_flag=platform, workspace_flag=workspace) as session:
        poll = interval if interval is not None else (0.5 if session.platform == LOCAL_PLATFORM else 2.0)
        return await wait_in(session, targets, timeout, poll, progress)
