"""A benchmark's leaderboard as Markdown and SVG: data in, bytes out, the same bytes every time.

Input is the platform's leaderboard (benchmark detail), entry by entry as docs/platform-api.md §3
shapes it. Nothing here reads a clock, so a file changes only when the standings change.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .templates import environment

RankBy = Literal["pass_at_1", "pass_at_k", "cost_per_task", "time_per_task", "tokens_per_task"]
TIE_NOTE = (
    "tied for first: an exact McNemar test on first-attempt outcomes (α = 0.05, tasks both ran)"
    " cannot separate it from the leader"
)


class _Loose(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class IntervalView(_Loose):
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int | None = None
    method: str | None = None


class PassAtKView(_Loose):
    k: int
    value: float | None = None


class RunView(_Loose):
    id: str | None = None
    name: str | None = None
    platform_url: str | None = None


class Row(_Loose):
    rank: int | None = None
    tied: bool = False
    task_set: str | None = None
    resolved_version: str | None = None
    harness: str | None = None
    model: str = "?"
    pass_at_1: IntervalView = IntervalView()
    pass_at_k: list[PassAtKView] = []
    cost_per_task: float | None = None
    mean_duration_seconds: float | None = None
    tokens_per_task: float | None = None
    run: RunView = RunView()

    @property
    def deepest(self) -> PassAtKView | None:
        return self.pass_at_k[-1] if self.pass_at_k else None


def parse_rows(entries: Iterable[Any]) -> list[Row]:
    """Entries the platform sent; anything that is not a well-formed entry object is dropped."""
    rows = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        try:
            rows.append(Row.model_validate(entry))
        except ValidationError:
            continue
    return rows


def _deepest_value(r: Row) -> float | None:
    return r.deepest.value if r.deepest else None


# metric -> (getter, higher is better)
_METRIC: dict[str, tuple[Callable[[Row], float | None], bool]] = {
    "pass_at_1": (lambda r: r.pass_at_1.value, True),
    "pass_at_k": (_deepest_value, True),
    "cost_per_task": (lambda r: r.cost_per_task, False),
    "time_per_task": (lambda r: r.mean_duration_seconds, False),
    "tokens_per_task": (lambda r: r.tokens_per_task, False),
}


def order_rows(rows: Sequence[Row], rank_by: RankBy) -> list[Row]:
    """Rows in the spec's order. pass@1 keeps the platform's ranks and ties; other metrics re-rank.

    For cost, time and tokens, ranks are competition ranks on the value (1, 1, 3) and rows
    without a value come last, sharing the next rank.
    """
    if rank_by == "pass_at_1":
        # stable: rows the platform ranked equally keep the platform's order (the leader first)
        return sorted(rows, key=lambda r: r.rank if r.rank is not None else math.inf)
    get, descending = _METRIC[rank_by]

    def key(r: Row) -> tuple[int, float, str, str]:
        v = get(r)
        if v is None:
            return (1, 0.0, r.model, r.harness or "")
        return (0, -v if descending else v, r.model, r.harness or "")

    ordered = sorted(rows, key=key)
    values = [get(r) for r in ordered]
    out: list[Row] = []
    for row, value in zip(ordered, values, strict=True):
        shared = value is not None and values.count(value) > 1
        out.append(row.model_copy(update={"rank": values.index(value) + 1, "tied": shared}))
    return out


# --- formatting ---------------------------------------------------------------------------------


def pct(value: float | None, n: int | None = None) -> str:
    if value is None:
        return "–"
    digits = 1 if (n or 0) >= 100 else 0
    return f"{value * 100:.{digits}f}%"


def interval_text(iv: IntervalView) -> str:
    if iv.value is None:
        return "–"
    text = pct(iv.value, iv.n)
    if iv.ci_low is not None and iv.ci_high is not None:
        text += f" ({pct(iv.ci_low, iv.n)}–{pct(iv.ci_high, iv.n)})"
    return text


def usd(value: float | None) -> str:
    if value is None:
        return "–"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.4f}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def tokens(value: float | None) -> str:
    if value is None:
        return "–"
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k"
    return f"{value:.0f}"


def agent_label(row: Row) -> str:
    return f"{row.model} ({row.harness or 'default harness'})"


# --- rendering ----------------------------------------------------------------------------------


def render_markdown(
    *,
    title: str,
    benchmark_key: str,
    spec_path: str,
    rows: Sequence[Row],
    rank_by: RankBy,
    scope: str,
    repo_root: Path | None = None,
) -> str:
    template = environment(repo_root).get_template("leaderboard.md.j2")
    deepest = max((r.deepest.k for r in rows if r.deepest), default=1)
    deepest_k = deepest if deepest > 1 else None  # pass@1 already has its own column
    return template.render(
        title=title,
        benchmark_key=benchmark_key,
        spec_path=spec_path,
        rows=rows,
        rank_by=rank_by,
        scope=scope,
        deepest_k=deepest_k,
        any_tied=any(r.tied for r in rows),
        tie_note=TIE_NOTE,
        interval_text=interval_text,
        pct=pct,
        usd=usd,
        duration=duration,
        tokens=tokens,
        agent_label=agent_label,
    )


def render_svg(*, title: str, rows: Sequence[Row], repo_root: Path | None = None) -> str:
    """pass@1 per entrant as a point with its 95% interval as a whisker; ties in their own colour."""
    width, left, right, top, row_h = 800, 330, 40, 56, 30
    plot_w = width - left - right
    height = top + row_h * max(len(rows), 1) + 40

    def x(v: float | None) -> float:
        return round(left + plot_w * min(max(v or 0.0, 0.0), 1.0), 2)

    items = []
    for i, r in enumerate(rows):
        y = top + row_h * i + row_h / 2
        iv = r.pass_at_1
        items.append(
            {
                "y": round(y, 2),
                "label": f"{'#' + str(r.rank) if r.rank else '–'}{'*' if r.tied else ''} {agent_label(r)}",
                "has_value": iv.value is not None,
                "x": x(iv.value),
                "x_low": x(iv.ci_low if iv.ci_low is not None else iv.value),
                "x_high": x(iv.ci_high if iv.ci_high is not None else iv.value),
                "value_text": interval_text(iv),
                # past ~80% the label would run off the right edge: put it left of the whisker
                "value_x": x(iv.ci_high if iv.ci_high is not None else iv.value) + 8
                if x(iv.ci_high if iv.ci_high is not None else iv.value) < width - right - 110
                else x(iv.ci_low if iv.ci_low is not None else iv.value) - 8,
                "value_anchor": "start"
                if x(iv.ci_high if iv.ci_high is not None else iv.value) < width - right - 110
                else "end",
                "tied": r.tied,
            }
        )
    ticks = [{"x": x(t / 100), "label": f"{t}%"} for t in range(0, 101, 20)]
    template = environment(repo_root).get_template("leaderboard.svg.j2")
    return template.render(
        title=title,
        width=width,
        height=height,
        left=left,
        right=right,
        top=top,
        items=items,
        ticks=ticks,
        plot_bottom=top + row_h * max(len(rows), 1),
        tie_note=TIE_NOTE,
    )
