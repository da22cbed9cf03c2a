"""A plan for terminals and for machines."""

from __future__ import annotations

from typing import Any, TextIO

from ..core.plan import Action, ActionKind, Plan
from ..specs.visible import visible
from .json_stream import write_indented

SYMBOLS = {
    ActionKind.SUBMIT: "+",
    ActionKind.REPLACE: "-/+",
    ActionKind.STOP: "-",
    ActionKind.DOWNLOAD: "<=",
    ActionKind.RENDER: "~",
    ActionKind.WAIT: "..",
    ActionKind.BLOCKED: "!",
    ActionKind.ORPHAN: "?",
    ActionKind.MOVED: "->",
    ActionKind.NOOP: "=",
    ActionKind.IMPORT: "<-",
}
COLORS = {
    ActionKind.SUBMIT: "green",
    ActionKind.REPLACE: "yellow",
    ActionKind.STOP: "red",
    ActionKind.BLOCKED: "red",
    ActionKind.ORPHAN: "magenta",
    ActionKind.DOWNLOAD: "cyan",
    ActionKind.RENDER: "cyan",
    ActionKind.MOVED: "blue",
}


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def cost_text(action: Action) -> str:
    c = action.cost
    if c is None:
        return ""
    text = f"{c.tasks} tasks × {c.agents} agents × {c.attempts_per_task} attempts = {c.attempts} attempts"
    if c.estimated_usd is not None:
        text += f", est. {money(c.estimated_usd)}" + (f" ({c.basis})" if c.basis else "")
    else:
        text += ", cost unknown (no history for these agents)"
    return text


def action_line(action: Action, style: Any = None) -> str:
    """One action for a terminal. Names and reasons may hold the platform's text (a run's name):
    control and bidi characters are shown as escapes, so the line reads as what it acts on."""
    symbol = SYMBOLS[action.kind]
    head = f"{symbol:>3} {action.kind.value:<8} {visible(action.spec_id or action.run_name or '')}"
    if style is not None and action.kind in COLORS:
        head = style(head, fg=COLORS[action.kind])
    parts = [head]
    if action.run_name and action.kind is not ActionKind.SUBMIT:
        parts.append(f"[{visible(action.run_name)}]")
    parts.append(f"— {visible(action.reason)}")
    line = " ".join(parts)
    cost = cost_text(action)
    if cost and action.kind is not ActionKind.BLOCKED:
        line += f"\n      {cost}"
    for warning in action.warnings:
        line += f"\n      warning: {visible(warning)}"
    return line


def summary_line(plan: Plan) -> str:
    counts = plan.counts()
    order = ["submit", "replace", "stop", "download", "render", "import", "wait", "blocked", "orphan", "moved", "noop"]
    parts = [f"{counts[k]} {k}" for k in order if counts.get(k)]
    text = "Plan: " + (", ".join(parts) if parts else "no specs")
    if plan.paid_attempts:
        text += f". Paid: {plan.paid_attempts} attempts, est. {money(plan.estimated_cost_usd)}"
    return text + "."


def blocked_line(plan: Plan) -> str:
    """Names every blocked spec; empty when nothing is blocked."""
    if not plan.blocked:
        return ""
    return f"Blocked ({len(plan.blocked)}): {', '.join(plan.blocked)}; see each reason above."


def render_text(
    plan: Plan,
    *,
    style: Any = None,
    show_noop: bool = True,
    next_step: bool = True,
    apply_command: str = "reconciler apply",
) -> str:
    """The plan for a terminal; `apply_command` is what `Next:` tells the user to run (with the plan's own flags)."""
    lines = [action_line(a, style) for a in plan.actions if show_noop or a.kind is not ActionKind.NOOP]
    if plan.unmanaged_runs:
        lines.append(
            f"  ({plan.unmanaged_runs} runs on these benchmarks are not owned by this repository; never touched)"
        )
    lines.append(summary_line(plan))
    if plan.blocked:
        lines.append(blocked_line(plan))
    if plan.has_changes:
        if next_step:
            lines.append(f"Next: `{apply_command}` to carry this out.")
    elif not plan.blocked:
        lines.append("No changes: the platform matches the specs.")
    return "\n".join(lines) + "\n"


def fresh_local_note(plan: Plan) -> str:
    """Why apply will not touch the leaderboards a fresh clone carries; empty when it has none to render."""
    if not any(a.kind is ActionKind.RENDER for a in plan.actions):
        return ""
    return (
        "Note: the local platform is fresh (no runs yet), so its leaderboards are empty; apply leaves the"
        " leaderboard files already in the repository as they are (`reconciler render` rewrites them).\n"
    )


def plan_document(plan: Plan) -> dict[str, Any]:
    """The versioned JSON form (`schema_version`), stable for machines and for `apply PLAN.json`."""
    doc = plan.model_dump(mode="json")
    doc["counts"] = plan.counts()
    return doc


def write_json(plan: Plan, out: TextIO) -> None:
    """`plan --format json`, written an action at a time (render/json_stream.py)."""
    write_indented(plan_document(plan), out)
    out.write("\n")
