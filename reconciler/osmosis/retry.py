"""How long to wait before trying a platform call again, and when to give up.

Backoff is exponential with full jitter: before attempt n+1 (after attempt n failed) we wait

    uniform(0, min(max_delay, base_delay * 2 ** (n - 1)))        (jitter=True)
    min(max_delay, base_delay * 2 ** (n - 1))                     (jitter=False)

A `Retry-After` from the platform (429 or 503, in seconds) replaces the backoff, even
beyond `max_delay`, but never beyond what is left of `max_total_seconds`: when the
platform asks for longer than that, we give up at once and report its answer.
At most `max_attempts` requests are made, and no retry starts after `max_total_seconds`
(measured from the first attempt, request time included).

Which calls are retried is the client's decision (reconciler.osmosis.session): reads,
stop, secrets and download-URL requests on network errors, 429 and 5xx; a submit only
when the platform cannot have acted on it (429, or no connection was ever made).

The random source, the sleep and the clock are injectable, so tests never sleep:
`RetryPolicy.disabled()` makes exactly one attempt.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_total_seconds: float = 60.0
    jitter: bool = True
    rng: Callable[[], float] = field(default=random.random, repr=False, compare=False)
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, repr=False, compare=False)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if min(self.base_delay, self.max_delay, self.max_total_seconds) < 0:
            raise ValueError("delays and max_total_seconds must not be negative")

    @classmethod
    def disabled(cls) -> RetryPolicy:
        """One attempt, never a sleep: for tests and for callers that retry on their own."""
        return cls(max_attempts=1, base_delay=0.0, max_delay=0.0, max_total_seconds=0.0, jitter=False)

    def backoff(self, attempt: int) -> float:
        """The wait after failed attempt number `attempt` (1-based), before budget limits."""
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return self.rng() * ceiling if self.jitter else ceiling

    def next_delay(self, attempt: int, elapsed: float, retry_after: float | None = None) -> float | None:
        """Seconds to wait before attempt `attempt + 1`, or None to give up now."""
        if attempt >= self.max_attempts:
            return None
        remaining = self.max_total_seconds - elapsed
        if retry_after is not None:
            return retry_after if retry_after <= remaining else None
        if remaining <= 0:
            return None
        return min(self.backoff(attempt), remaining)


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` as delta-seconds; None when absent or not a non-negative number.

    The contract promises seconds; an HTTP-date is not parsed (we fall back to our backoff).
    """
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds
