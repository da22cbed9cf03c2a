"""The versioned JSON documents of `wait`, `render`, `reconcile` and `init` (`--format json`).

Each is one object with `schema_version` (1) and `kind`; fields are only ever added within a version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..render.tables import json_document

if TYPE_CHECKING:
    from ..core.world import Observed
    from ..engine.apply import ApplyReport
    from ..engine.reconcile import ReconcileResult
    from ..engine.rendering import RenderOutcome


def wait_text(observed: Observed, targets: Sequence[str]) -> str:
    """The last line of `wait`: what this repository's runs (of `targets`, if given) are, once none
    is left to wait for, or that there is none yet."""
    statuses: dict[str, int] = {}
    for r in observed.runs:
        if r.marker is not None and r.marker.owner == observed.owner and (not targets or r.marker.spec_id in targets):
            statuses[r.status] = statuses.get(r.status, 0) + 1
    if not statuses:
        return "No run of these specs on the platform yet: `reconciler plan` shows what apply would submit.\n"
    counts = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
    return f"Nothing left to wait for. Runs of these specs: {counts}.\n"


def wait_json(observed: Observed) -> str:
    """The specs' owned runs once nothing is active any more."""
    runs = [
        {
            "spec_id": r.marker.spec_id if r.marker else None,
            "id": r.id,
            "name": r.name,
            "status": r.status,
            "ingested": r.ingested,
            "expected": r.expected,
            "best_pass_at_1": r.best_pass_at_1,
            "platform_url": r.platform_url,
        }
        for r in sorted(observed.runs, key=lambda r: (r.marker.spec_id if r.marker else "", r.id))
        if r.marker is not None and r.marker.owner == observed.owner
    ]
    return json_document("wait", {"runs": runs})


def _leaderboards(outcomes: Sequence[RenderOutcome], check: bool) -> list[dict[str, Any]]:
    changed_word = "would change" if check else "updated"
    return [
        {
            "spec_id": o.spec_id,
            "error": o.error,
            "files": [{"path": f, "state": changed_word if f in o.changed else "unchanged"} for f in o.files],
        }
        for o in outcomes
    ]


def render_json(outcomes: Sequence[RenderOutcome], check: bool) -> str:
    return json_document("render", {"check": check, "leaderboards": _leaderboards(outcomes, check)})


def _results(report: ApplyReport | None) -> list[dict[str, Any]]:
    return [r.model_dump(mode="json") for r in report.results] if report else []


def reconcile_json(result: ReconcileResult, commit: dict[str, Any] | None) -> str:
    return json_document(
        "reconcile",
        {
            "plan": result.plan.plan.model_dump(mode="json"),
            "applied": _results(result.applied),
            "downloads": _results(result.downloads),
            "leaderboards": _leaderboards(result.rendered, False),
            "commit": commit,
            "failures": result.failures,
        },
    )


def init_json(directory: str, files: Sequence[tuple[str, str]], next_steps: Sequence[str]) -> str:
    return json_document(
        "init",
        {"directory": directory, "files": [{"path": p, "action": a} for p, a in files], "next": list(next_steps)},
    )
