"""`reconciler status` as an aligned table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.status import StatusRow

HEADERS = ("SPEC", "RUN", "STATUS", "PROGRESS", "PASS@1", "SYNC")


def _row(r: StatusRow) -> tuple[str, ...]:
    progress = f"{r.ingested}/{r.expected}" if r.expected else "-"
    p1 = f"{r.best_pass_at_1 * 100:.1f}%" if r.best_pass_at_1 is not None else "-"
    return (r.spec_id or "-", r.run_name or "-", r.status or "-", progress, p1, r.sync)


def render_status(rows: Sequence[StatusRow]) -> str:
    table = [HEADERS, *(_row(r) for r in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in table]
    if not rows:
        lines.append("no specs and no runs on their benchmarks")
    return "\n".join(lines) + "\n"
