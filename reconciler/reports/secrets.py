"""`reconciler secrets`: every record the specs need, where it exists, and what to create."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.secrets_view import SecretNeed
from ..render.tables import json_document, table

HEADERS = ("SPEC", "RECORD", "WORKSPACE", "PERSONAL", "REFERENCED BY")


def _mark(present: bool) -> str:
    return "yes" if present else "-"


def render_needs(needs: Sequence[SecretNeed]) -> str:
    if not needs:
        return "no run spec references a secret record\n"
    rows = [
        (n.spec_id, n.name, _mark(n.workspace), _mark(n.personal), n.referenced_by + ("  MISSING" if n.missing else ""))
        for n in needs
    ]
    out = table(HEADERS, rows)
    missing = sorted({n.name for n in needs if n.missing})
    if missing:
        out += f"missing: {', '.join(missing)}; create each with `reconciler secrets set NAME` (value on stdin)\n"
    else:
        out += "every record the specs need exists\n"
    return out


def needs_json(needs: Sequence[SecretNeed]) -> str:
    return json_document(
        "secrets",
        {
            "records": [{**n.model_dump(mode="json"), "missing": n.missing} for n in needs],
            "missing": sorted({n.name for n in needs if n.missing}),
        },
    )
