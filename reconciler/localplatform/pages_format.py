"""How the web pages write numbers, money, durations and ages: pure functions, data in, text out.

Every function takes the raw value the API returns (fractions 0..1, USD, seconds, ISO-8601
timestamps) and returns display text; a missing value is an em dash. Ages are relative to the
request's one clock reading, so the same store at the same moment renders the same bytes.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup

from ..specs.visible import visible_keep_whitespace

MISSING = "—"


def epoch(timestamp: str) -> float:
    """`2026-01-02T03:04:05.678Z` -> epoch seconds."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def percent(value: float | None, places: int = 1) -> str:
    """0.7222 -> `72.2%`."""
    if value is None:
        return MISSING
    return f"{value * 100:.{places}f}%"


def interval(value: dict[str, Any] | None) -> str:
    """A `{value, ci_low, ci_high}` object -> `65.1–79.0` (percent points), or a dash without bounds."""
    if not value or value.get("ci_low") is None or value.get("ci_high") is None:
        return MISSING
    return f"{value['ci_low'] * 100:.1f}–{value['ci_high'] * 100:.1f}"


def money(value: float | None) -> str:
    """USD with cents, or four decimals under a dollar (per-task costs are small)."""
    if value is None:
        return MISSING
    if abs(value) < 1:
        return f"${value:.4f}"
    return f"${value:,.2f}"


def duration(seconds: float | None) -> str:
    """82.5 -> `1m 23s`; 7322 -> `2h 02m`; under ten seconds with one decimal."""
    if seconds is None:
        return MISSING
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def tokens(value: float | None) -> str:
    """950 -> `950`; 12_345 -> `12.3k`; 4_200_000 -> `4.20M`."""
    if value is None:
        return MISSING
    if value >= 1_000_000:
        return f"{value / 1_000_000:.2f}M"
    if value >= 10_000:
        return f"{value / 1000:.1f}k"
    if value >= 1000:
        return f"{value / 1000:.2f}k"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def count(value: int | None) -> str:
    return MISSING if value is None else f"{value:,}"


def age(timestamp: str | None, now: float) -> str:
    """How long before `now` the timestamp was: `just now`, `12 s ago`, `5 min ago`, `3 h ago`, `2 days ago`."""
    if timestamp is None:
        return MISSING
    seconds = now - epoch(timestamp)
    if seconds < 0:
        return "in the future"
    if seconds < 1:
        return "just now"
    if seconds < 60:
        return f"{math.floor(seconds)} s ago"
    if seconds < 3600:
        return f"{math.floor(seconds / 60)} min ago"
    if seconds < 86400:
        return f"{math.floor(seconds / 3600)} h ago"
    days = math.floor(seconds / 86400)
    return f"{days} day ago" if days == 1 else f"{days} days ago"


def when(timestamp: str | None) -> str:
    """`2026-01-02T03:04:05.678Z` -> `2026-01-02 03:04:05 UTC`."""
    if timestamp is None:
        return MISSING
    moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def span(start: str | None, end: str | None, now: float) -> float | None:
    """Seconds from `start` to `end` (or to `now` while there is no end); None before the start."""
    if start is None:
        return None
    finish = epoch(end) if end is not None else now
    return max(0.0, finish - epoch(start))


def heat(value: float | None) -> str:
    """A CSS class for a pass rate, in ten steps (`heat-0` … `heat-10`); `heat-none` without a value."""
    if value is None:
        return "heat-none"
    return f"heat-{max(0, min(10, math.floor(value * 10 + 1e-9)))}"


def short_digest(digest: str | None) -> str:
    """`sha256:0123456789abcdef…` -> `sha256:0123456789ab`."""
    if not digest:
        return MISSING
    algorithm, _, hexdigest = digest.partition(":")
    return f"{algorithm}:{hexdigest[:12]}" if hexdigest else digest[:19]


def shown(value: Any) -> Any:
    """Every value a page prints (the environment's `finalize`): control and bidi characters in
    text become visible escapes (`\\u202e`), so a run or model name cannot reorder or hide what
    follows it. Tabs and line breaks stay: in HTML they are whitespace, in logs their own lines."""
    if not isinstance(value, str):
        return value
    text = visible_keep_whitespace(value)
    return Markup(text) if isinstance(value, Markup) else text


def raw(value: object) -> str:
    """A value for a `data-*` attribute: the API's own number (`str` of the float), empty for None."""
    return "" if value is None else str(value)


FILTERS = {
    "raw": raw,
    "percent": percent,
    "interval": interval,
    "money": money,
    "duration": duration,
    "tokens": tokens,
    "count": count,
    "when": when,
    "heat": heat,
    "short_digest": short_digest,
}
