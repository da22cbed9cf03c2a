"""Command-line value types that refuse, at parse time, what would make a command misbehave later."""

from __future__ import annotations

import math
from typing import Any

import click


class Seconds(click.ParamType[float]):
    """A finite, non-negative number of seconds.

    `float()` accepts "nan" and "inf", and a deadline of now + nan is never reached (every
    comparison with nan is false), so a wait given one would never end.
    """

    name = "seconds"

    def __init__(self, minimum: float = 0.0, maximum: float = math.inf) -> None:
        self.minimum, self.maximum = minimum, maximum

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or not self.minimum <= seconds <= self.maximum:
            top = f" and at most {self.maximum:g}" if math.isfinite(self.maximum) else ""
            self.fail(f"{value!r} is not a number of seconds (a finite one, {self.minimum:g} or more{top})", param, ctx)
        return seconds


SECONDS = Seconds()
POLL_INTERVAL = Seconds(0.05, 3600)  # a poll never spins, and never waits past any --timeout worth giving
