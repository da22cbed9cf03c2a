"""Aligned plain-text tables for the listing commands."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell, two spaces apart, no trailing blanks."""
    grid = [tuple(headers), *(tuple(r) for r in rows)]
    widths = [max(len(row[i]) for row in grid) for i in range(len(headers))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in grid]
    return "\n".join(lines) + "\n"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def json_document(kind: str, body: Mapping[str, Any]) -> str:
    """One versioned JSON document per command: `{"schema_version": 1, "kind": ..., ...}`."""
    import json

    doc = {"schema_version": 1, "kind": kind, **body}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
