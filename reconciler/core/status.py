"""The rows of `reconciler status`: each spec's run and whether the plan would change it."""

from __future__ import annotations

from dataclasses import dataclass

from .plan import Action, Plan
from .world import Observed


@dataclass(frozen=True)
class StatusRow:
    spec_id: str | None
    run_id: str | None
    run_name: str | None
    status: str | None
    ingested: int
    expected: int
    best_pass_at_1: float | None
    sync: str  # "in sync", "pending: submit", "unmanaged", "orphan", ...
    platform_url: str | None = None


def rows_for(plan: Plan, observed: Observed, owner: str) -> list[StatusRow]:
    """One row per spec that has actions (its current run, or its newest owned run, and whether the
    plan would change it), then one `unmanaged` row per run another owner (or nobody) made, newest first."""
    by_spec: dict[str, list[Action]] = {}
    for a in plan.actions:
        if a.spec_id:
            by_spec.setdefault(a.spec_id, []).append(a)
    runs = {r.id: r for r in observed.runs}
    rows: list[StatusRow] = []
    for spec_id, actions in sorted(by_spec.items()):
        main = actions[-1]
        if main.kind.value == "render":
            continue
        run = runs.get(main.run_id) if main.run_id else None
        if run is None:
            owned = [r for r in observed.runs if r.marker and r.marker.owner == owner and r.marker.spec_id == spec_id]
            run = max(owned, key=lambda r: (r.created_at or "", r.id)) if owned else None
        kinds = {a.kind.value for a in actions} - {"import"}  # adopting a run changes nothing
        if kinds <= {"noop", "wait"}:
            sync = "in sync" if "wait" not in kinds else "in sync (running)"
        elif "orphan" in kinds:
            sync = "orphan"
        else:
            sync = "pending: " + ", ".join(sorted(kinds - {"noop"}))
        rows.append(
            StatusRow(
                spec_id=spec_id,
                run_id=run.id if run else None,
                run_name=run.name if run else None,
                status=run.status if run else None,
                ingested=run.ingested if run else 0,
                expected=run.expected if run else 0,
                best_pass_at_1=run.best_pass_at_1 if run else None,
                sync=sync,
                platform_url=run.platform_url if run else None,
            )
        )
    for run in sorted(observed.runs, key=lambda r: (r.created_at or "", r.id), reverse=True):
        if run.marker is None or run.marker.owner != owner:
            rows.append(
                StatusRow(
                    None,
                    run.id,
                    run.name,
                    run.status,
                    run.ingested,
                    run.expected,
                    run.best_pass_at_1,
                    "unmanaged",
                    run.platform_url,
                )
            )
    return rows
