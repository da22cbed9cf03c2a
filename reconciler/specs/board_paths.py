"""Where a benchmark spec's leaderboard files may be written: the one rule.

A generated file never lands on the specs, the state file, the downloaded outputs, the templates
or reconciler's own folder, nor on a file that another benchmark spec's leaderboard (or this
one's other file) writes. Paths are compared by `safe_paths.overlaps` (the same file, or one
inside the other, case-blind). Nor is it written where the work tree as it is now would refuse
it (`safe_paths.writable_path`: a folder on the way that is a symlink, a folder where the file
goes); the caller, at the I/O edge, says why (`safe_paths.write_refusal`).
`specs/loader.load_specs` reports each problem at its `[leaderboard]` key, so `validate` and
every command that loads the specs say it first, and `engine/board_files.check_outputs` and the
write itself ask again right before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..safe_paths import overlaps
from .models import SETTINGS_FILE, BenchmarkSpec, ProjectSettings


@dataclass(frozen=True)
class BoardPathProblem:
    spec_id: str
    key: Literal["output", "chart"]  # the `[leaderboard]` key that names the file
    path: str
    other: str  # the path it overlaps
    what: str  # what that path is, in words

    @property
    def hint(self) -> str:
        return f"give {self.spec_id} a leaderboard output and chart of their own, outside {self.other}"


def reserved_paths(settings: ProjectSettings) -> list[tuple[str, str]]:
    """The paths of `reconciler.toml` and reconciler's own, with what each is."""
    return [
        (SETTINGS_FILE, "the settings file"),
        (settings.specs_dir, "the specs folder"),
        (settings.state_file, "the state file"),
        (settings.outputs_dir, "the outputs folder"),
        (".reconciler", "reconciler's own folder"),
        ("templates", "the templates folder"),
    ]


def board_path_problems(benchmarks: Sequence[BenchmarkSpec], settings: ProjectSettings) -> list[BoardPathProblem]:
    """Every leaderboard file of `benchmarks` that may not be written, first problem per file."""
    reserved = reserved_paths(settings)
    found: list[BoardPathProblem] = []
    for spec in benchmarks:
        board = spec.leaderboard
        if board is None:
            continue
        others = list(reserved)
        for b in benchmarks:
            if b.id != spec.id and b.leaderboard is not None:
                theirs = (b.leaderboard.output, b.leaderboard.chart)
                others += [(rel, f"the leaderboard of {b.id}") for rel in theirs if rel]
        files: list[tuple[Literal["output", "chart"], str, list[tuple[str, str]]]] = [
            ("output", board.output, others + ([(board.chart, "its own chart")] if board.chart else []))
        ]
        if board.chart:
            files.append(("chart", board.chart, others))
        for key, rel, against in files:
            clash = next(((other, what) for other, what in against if overlaps(rel, other)), None)
            if clash is not None:
                found.append(BoardPathProblem(spec.id, key, rel, *clash))
    return found


def board_write_problems(
    benchmarks: Sequence[BenchmarkSpec],
    refusal: Callable[[str], str | None],
    *,
    skip: frozenset[tuple[str, str]] = frozenset(),
) -> list[tuple[str, Literal["output", "chart"], str]]:
    """(spec id, key, message) for each leaderboard file `refusal` says may not be written now
    (safe_paths.write_refusal on the work tree); `skip` holds (spec id, key) pairs already reported."""
    found: list[tuple[str, Literal["output", "chart"], str]] = []
    for spec in benchmarks:
        board = spec.leaderboard
        if board is None:
            continue
        files: list[tuple[Literal["output", "chart"], str | None]] = [("output", board.output), ("chart", board.chart)]
        for key, rel in files:
            if rel and (spec.id, key) not in skip and (why := refusal(rel)) is not None:
                found.append((spec.id, key, why))
    return found
