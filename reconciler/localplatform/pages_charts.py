"""The geometry of the run page's pass@k curve, as plain numbers a template draws as inline SVG.

x is log2(k) (k = 1, 2, 4, … and the deepest k, as `scoring.ks_for` reports them), y is the
pass@k fraction on 0..1. Coordinates are rounded to 0.1 px so the markup is deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

WIDTH = 560
HEIGHT = 260
LEFT = 60
RIGHT = 20
TOP = 16
BOTTOM = 40


@dataclass(frozen=True)
class Point:
    k: int
    value: float
    x: float
    y: float


@dataclass(frozen=True)
class Series:
    index: int  # the agent index: colour class `series-<index mod 8>`
    label: str
    points: tuple[Point, ...]

    @property
    def path(self) -> str:
        return " ".join(f"{'M' if i == 0 else 'L'}{p.x:.1f} {p.y:.1f}" for i, p in enumerate(self.points))


@dataclass(frozen=True)
class Tick:
    at: float
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int
    right: float  # x of the plot's right edge
    top: int
    bottom: float  # y of the plot's bottom edge
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    series: tuple[Series, ...]


def _x(k: int, deepest: int) -> float:
    usable = WIDTH - LEFT - RIGHT
    return round(LEFT + usable * (math.log2(k) / math.log2(deepest)), 1)


def _y(value: float) -> float:
    usable = HEIGHT - TOP - BOTTOM
    return round(TOP + usable * (1.0 - value), 1)


def drawable(curves: Sequence[tuple[int, str, Sequence[tuple[int, float]]]]) -> bool:
    """A curve needs at least one agent with two or more k values."""
    return any(len(points) >= 2 for _, _, points in curves)


def pass_at_k_chart(curves: Sequence[tuple[int, str, Sequence[tuple[int, float]]]]) -> Chart:
    """`curves`: (agent index, label, [(k, value), …]) per agent. Call only when `drawable`."""
    ks = sorted({k for _, _, points in curves for k, _ in points})
    deepest = max(ks)
    if deepest < 2:
        raise ValueError("a pass@k curve needs some k >= 2")
    series = tuple(
        Series(index, label, tuple(Point(k, v, _x(k, deepest), _y(v)) for k, v in sorted(points)))
        for index, label, points in curves
        if points
    )
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right=WIDTH - RIGHT,
        top=TOP,
        bottom=HEIGHT - BOTTOM,
        x_ticks=tuple(Tick(_x(k, deepest), str(k)) for k in ks),
        y_ticks=tuple(Tick(_y(v / 4), f"{v * 25}%") for v in range(5)),
        series=series,
    )
