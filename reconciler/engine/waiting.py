"""Follow owned runs until they end, with progress on stderr."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from typing import Any

from ..core.world import Observed
from ..errors import ReconcilerError
from ..settings import LOCAL_PLATFORM, Project
from .operations import _plan_in, make_policy, waiting_on
from .session import Session, open_session


class WaitTimeout(ReconcilerError):
    pass


class _Progress:
    """Rich progress bars on a terminal; otherwise one line whenever something changed."""

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.bars: Any = None
        self.tasks: dict[str, Any] = {}
        self.last: dict[str, str] = {}
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bars = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
            )
            self.bars.start()

    def update(self, runs: Sequence[Any]) -> None:
        for run in runs:
            label = f"{run.marker.spec_id if run.marker else run.name} ({run.name})"
            if self.bars is not None:
                if run.id not in self.tasks:
                    self.tasks[run.id] = self.bars.add_task(label, total=run.expected or None, status=run.status)
                self.bars.update(
                    self.tasks[run.id], completed=run.ingested, total=run.expected or None, status=run.status
                )
            else:
                line = f"{label}: {run.status} {run.ingested}/{run.expected}"
                if self.last.get(run.id) != line:
                    self.last[run.id] = line
                    sys.stderr.write(line + "\n")
                    sys.stderr.flush()

    def close(self) -> None:
        if self.bars is not None:
            self.bars.stop()


async def wait_in(session: Session, targets: Sequence[str], timeout: float, interval: float) -> Observed:
    policy = make_policy(session.project, targets, False, False)
    deadline = time.monotonic() + timeout
    progress = _Progress()
    followed: dict[str, Any] = {}
    try:
        while True:
            result = await _plan_in(session, policy)
            active = waiting_on(result)
            for run in active:
                followed[run.id] = run
            for run in result.observed.runs:
                if run.id in followed:
                    followed[run.id] = run
            progress.update(list(followed.values()))
            if not active:
                return result.observed
            if time.monotonic() >= deadline:
                names = ", ".join(r.name for r in active)
                raise WaitTimeout(
                    f"timed out after {timeout:g}s; still active: {names}", hint="run `reconciler wait` again"
                )
            await asyncio.sleep(interval)
    finally:
        progress.close()
        if followed and not progress.tty:
            done = sum(1 for r in followed.values() if r.terminal)
            sys.stderr.write(f"{done}/{len(followed)} followed runs ended\n")


async def wait_for_runs(
    project: Project,
    *,
    targets: Sequence[str] = (),
    timeout: float = 3600.0,
    interval: float | None = None,
    platform: str | None = None,
    workspace: str | None = None,
) -> Observed:
    async with open_session(project, platform_flag=platform, workspace_flag=workspace) as session:
        poll = interval if interval is not None else (0.5 if session.platform == LOCAL_PLATFORM else 2.0)
        return await wait_in(session, targets, timeout, poll)
