"""How the engine reports to whoever runs it, without knowing how it looks.

The commands implement these (bars on a terminal, plain lines, nothing for JSON output);
the engine only calls them, so presentation never enters the engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..core.plan import Plan
from ..core.world import ObservedRun


class RunProgress(Protocol):
    """Follows runs while the engine waits for them to end."""

    def update(self, runs: Sequence[ObservedRun]) -> None:
        """Every run followed so far, as last observed (ended ones included)."""

    def close(self) -> None:
        """The wait is over (all ended, timed out or interrupted)."""


class Confirm(Protocol):
    """Asked once before a plan with changes is carried out; False leaves everything as it is."""

    def __call__(self, plan: Plan) -> bool: ...


class Silent:
    """Reports nothing: for callers that show no progress."""

    def update(self, runs: Sequence[ObservedRun]) -> None:
        pass

    def close(self) -> None:
        pass
