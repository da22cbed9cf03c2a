"""Log entries as lines: `timestamp LEVEL step: message`."""

from __future__ import annotations

from collections.abc import Sequence

from ..osmosis.models import LogEntry
from .tables import json_document


def log_line(entry: LogEntry) -> str:
    level = (entry.level or "info").upper()
    step = f"{entry.step}: " if entry.step else ""
    return f"{entry.timestamp or '-'} {level:<5} {step}{entry.message or ''}"


def render_tail(run: str, entries: Sequence[LogEntry], older_cursor: str | None) -> str:
    lines = [log_line(e) for e in entries] or [f"no log entries for {run} yet"]
    if older_cursor:
        lines.append(f"(older entries: `reconciler logs {run} --cursor {older_cursor}`)")
    return "\n".join(lines) + "\n"


def tail_json(run: str, entries: Sequence[LogEntry], older_cursor: str | None) -> str:
    return json_document(
        "logs", {"run": run, "logs": [e.model_dump(mode="json") for e in entries], "next_cursor": older_cursor}
    )
