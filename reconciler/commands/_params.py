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

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float) and math.isfinite(value) and value >= 0:
            return value
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"{value!r} is not a number of seconds (a finite one, 0 or more)", param, ctx)
        return seconds


SECONDS = Seconds()
