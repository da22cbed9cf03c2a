"""Which manifest entry each downloaded file came from (kept in the ledger: reconciler.outputs.bookkeeping)."""

from __future__ import annotations

from collections.abc import Mapping


def is_current(known: Mapping[str, str | None], path: str, token: str | None) -> bool:
    """False only when we wrote this path from a manifest entry with another token."""
    return path not in known or known[path] == token
