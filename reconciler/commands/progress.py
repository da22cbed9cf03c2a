"""The engine's progress reports as the user sees them: bars on a terminal, lines otherwise."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ..core.world import ObservedRun
from ..engine.progress import RunProgress, Silent


def _label(run: ObservedRun) -> str:
    return f"{run.marker.spec_id if run.marker else run.name} ({run.name})"


class Bars:
    """One rich progress bar per followed run, redrawn in place on a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=Console(file=stream),
        )
        self.tasks: dict[str, TaskID] = {}
        self.bars.start()

    def update(self, runs: Sequence[ObservedRun]) -> None:
        for run in runs:
            if run.id not in self.tasks:
                self.tasks[run.id] = self.bars.add_task(_label(run), total=run.expected or None, status=run.status)
            self.bars.update(self.tasks[run.id], completed=run.ingested, total=run.expected or None, status=run.status)

    def close(self) -> None:
        self.bars.stop()


class Lines:
    """A line whenever a run's status or count changed (logs keep every line), then a summary."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last: dict[str, str] = {}
        self.runs: dict[str, ObservedRun] = {}

    def update(self, runs: Sequence[ObservedRun]) -> None:
        for run in runs:
            self.runs[run.id] = run
            line = f"{_label(run)}: {run.status} {run.ingested}/{run.expected}"
            if self.last.get(run.id) != line:
                self.last[run.id] = line
                self.stream.write(line + "\n")
                self.stream.flush()

    def close(self) -> None:
        if self.runs:
            done = sum(1 for r in self.runs.values() if r.terminal)
            self.stream.write(f"{done}/{len(self.runs)} followed runs ended\n")
            self.stream.flush()


def run_progress(stream: TextIO, *, quiet: bool = False) -> RunProgress:
    """Bars when `stream` is a terminal, lines otherwise, nothing when `quiet` (JSON output)."""
    if quiet:
        return Silent()
    return Bars(stream) if stream.isatty() else Lines(stream)
