"""A benchmark's leaderboard as Markdown and SVG: data in, bytes out, the same bytes every time.

Input is the platform's leaderboard (benchmark detail), entry by entry as docs/platform-api.md §3
shapes it. Nothing here reads a clock, so a file changes only when the standings change.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core import scoring
from .templates import environment

RankBy = Literal["pass_at_1", "pass_at_k", "cost_per_task", "time_per_task", "tokens_per_task"]
TIE_NOTE = (
    "tied: the same value as another entrant of its task set and version, or, by pass@1, an exact"
    " McNemar test on first attempts (α = 0.05, tasks both ran) cannot separate it from the best"
)
LOCAL_NOTE = (
    "Run links open the local platform's pages: run `reconciler platform serve` in this repository (it"
    " serves `.osmosis/local-platform.sqlite3` at http://127.0.0.1:8765) and open the `pages:` link it prints"
    " once, which signs the browser in"
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
    ci_low: float | None = None
    ci_high: float | None = None


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

    def at_k(self, k: int | None) -> PassAtKView | None:
        """The point at exactly k, or None: a column names one k and never shows another."""
        return next((point for point in self.pass_at_k if point.k == k), None)


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


def ranked_k(rows: Sequence[Row]) -> int | None:
    """The one k of the pass@k column and ranking: the deepest k of any row (`scoring.ranked_k`)."""
    return max((r.deepest.k for r in rows if r.deepest), default=None)


def ranked_value(row: Row, rank_by: RankBy, k: int | None) -> float | None:
    if rank_by == "pass_at_1":
        return row.pass_at_1.value
    if rank_by == "pass_at_k":
        point = row.at_k(k)
        return point.value if point else None
    if rank_by == "cost_per_task":
        return row.cost_per_task
    if rank_by == "time_per_task":
        return row.mean_duration_seconds
    return row.tokens_per_task


def order_rows(rows: Sequence[Row], rank_by: RankBy) -> list[Row]:
    """Rows in the spec's order, with the platform's rules (`scoring.leaderboard`) for every metric.

    pass@1 keeps the platform's order, ranks and ties (its tie test needs per-task outcomes,
    which only the platform has). Other metrics are re-ranked here with the same functions the
    platform uses (`scoring.order_key`, `scoring.competition_ranks`), where only equal values
    within a task set and version tie. Pass the whole leaderboard and filter afterwards, so
    ranks stay workspace-wide.
    """
    if rank_by == "pass_at_1":
        # stable: rows the platform ranked equally keep the platform's order
        return sorted(rows, key=lambda r: r.rank if r.rank is not None else math.inf)
    k = ranked_k(rows) if rank_by == "pass_at_k" else None
    ordered = sorted(
        rows,
        key=lambda r: scoring.order_key(
            ranked_value(r, rank_by, k),
            rank_by,
            task_set=r.task_set,
            resolved_version=r.resolved_version,
            model=r.model,
            harness=r.harness,
            run_id=r.run.id,
        ),
    )
    ranks = scoring.competition_ranks(
        [ranked_value(r, rank_by, k) for r in ordered], [(r.task_set, r.resolved_version) for r in ordered]
    )
    return [
        row.model_copy(update={"rank": rank, "tied": tied}) for row, (rank, tied) in zip(ordered, ranks, strict=True)
    ]


# --- formatting ---------------------------------------------------------------------------------


def pct(value: float | None, n: int | None = None) -> str:
    if value is None:
        return "–"
    digits = 1 if (n or 0) >= 100 else 0
    return f"{value * 100:.{digits}f}%"


def interval_text(iv: IntervalView | PassAtKView | None) -> str:
    """`72% (65%–79%)`; the bounds are left out when the platform sent none; `–` without a value."""
    if iv is None or iv.value is None:
        return "–"
    n = iv.n if isinstance(iv, IntervalView) else None
    text = pct(iv.value, n)
    if iv.ci_low is not None and iv.ci_high is not None:
        text += f" ({pct(iv.ci_low, n)}–{pct(iv.ci_high, n)})"
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
    k: int | None = None,
    local: bool = False,
) -> str:
    """The table. `k` is the pass@k column's k (default: `ranked_k(rows)`; give the whole
    leaderboard's when `rows` is filtered); `local` adds how to open the local platform's links.
    """
    template = environment(repo_root).get_template("leaderboard.md.j2")
    column_k = k if k is not None else ranked_k(rows)
    deepest_k = column_k if column_k is not None and column_k > 1 else None  # pass@1 has its own column
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
        local_note=LOCAL_NOTE if local else None,
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
