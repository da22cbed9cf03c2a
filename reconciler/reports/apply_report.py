"""What an apply did, action by action."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine.apply import ApplyReport
    from ..engine.operations import ApplyResult


def render_report(report: ApplyReport) -> str:
    lines = []
    for r in report.results:
        mark = "ok  " if r.ok else "FAIL"
        lines.append(f"{mark} {r.action.kind.value:<8} {r.action.spec_id or r.action.run_name or ''}: {r.message}")
    ok = len(report.results) - len(report.failed)
    lines.append(f"Apply: {ok} succeeded, {len(report.failed)} failed.")
    return "\n".join(lines) + "\n"


def render_report_json(result: ApplyResult) -> str:
    doc = {
        "schema_version": 1,
        "plan": result.plan.plan.model_dump(mode="json"),
        "applied": result.report is not None,
        "results": [r.model_dump(mode="json") for r in result.report.results] if result.report else [],
        "failed": len(result.report.failed) if result.report else 0,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
