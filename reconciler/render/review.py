"""The review of a pull request's spec changes, next to each spec's planned action and cost.

Data in (`core.review.Review`, `core.plan.Plan`), text out: a Markdown section for the PR
comment and job summary, and plain lines for the terminal (`reconciler plan --base REF`).
Field diffs sit in code fences longer than any backtick run in them, so no value in a spec
can close the fence and inject Markdown or HTML (such as a forged comment marker).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..core.cells import cell, code_cell
from ..core.plan import Action, ActionKind, Plan
from ..core.review import Review, SpecChange, format_value
from ..specs.visible import visible
from .plan_text import SYMBOLS, money

MAX_FIELDS = 60  # per spec; the rest is counted, not listed
_BACKTICKS = re.compile(r"`+")


def _actions_for(change: SpecChange, plan: Plan | None) -> list[Action]:
    if plan is None:
        return []
    ids = set(change.ids)
    return [a for a in plan.actions if a.spec_id in ids]


def action_summary(action: Action) -> str:
    """`-/+ replace: 90 attempts, est. $12.00 (config changed: ...)` in plain text."""
    text = f"{SYMBOLS[action.kind]} {action.kind.value}"
    if action.cost is not None and action.kind is not ActionKind.BLOCKED:
        text += f": {action.cost.attempts} attempts, est. {money(action.cost.estimated_usd)}"
    return f"{text} ({action.reason})"


def _headline(change: SpecChange, name: Callable[[str], str]) -> str:
    """`edited specs/runs/x.toml`, each path shown by `name` (a code span in Markdown)."""
    if change.status == "renamed":
        return f"renamed from {name(change.old_path or '')} to {name(change.path)}"
    return f"{change.status} {name(change.path)}"


def _notes(change: SpecChange, name: Callable[[str], str], text: Callable[[str], str]) -> list[str]:
    """Notes on a change: ids shown by `name`, everything else by `text` (escaped Markdown, or
    terminal text), so an id is a code span in a comment and never live Markdown."""
    notes = []
    if change.old_spec_id and change.old_spec_id != change.spec_id:
        notes.append(
            f"{text('the spec id changes from')} {name(change.old_spec_id)} {text('to')} {name(change.spec_id)}"
            + text(": the new id is a new spec (its old runs become orphans); set [reconcile] id to keep the old one")
        )
    if change.error:
        notes.append(text(f"no field diff: {change.error}"))
    elif change.status in ("edited", "renamed") and not change.fields:
        notes.append(text("no field changes (comments or formatting only)"))
    return notes


def _field_lines(change: SpecChange) -> list[str]:
    if change.status == "deleted":
        return []
    lines = [
        f"{f.key}: {format_value(f.new)}" if change.status == "added" else f.line() for f in change.fields[:MAX_FIELDS]
    ]
    if len(change.fields) > MAX_FIELDS:
        lines.append(f"... and {len(change.fields) - MAX_FIELDS} more field(s)")
    return lines


def _fence(lines: Sequence[str]) -> str:
    longest = max((len(m.group(0)) for line in lines for m in _BACKTICKS.finditer(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence, *lines, fence])


def render_review_markdown(review: Review, plan: Plan | None) -> str:
    """A `#### Spec changes` section: one entry per changed spec, fields in a fence, its plan actions."""
    head = (
        f"#### Spec changes against {code_cell(review.base_ref)}"
        f" (merge base `{review.merge_base[:12]}`): {len(review.changes)}"
    )
    if not review.changes:
        return head + "\n\nNo spec file changed."
    parts = [head]
    for change in review.changes:
        actions = _actions_for(change, plan)
        planned = "; ".join(cell(action_summary(a)) for a in actions if a.kind is not ActionKind.NOOP)
        if not planned:
            planned = "no action" if plan is not None else "not planned"
        entry = [f"**{code_cell(change.spec_id)}** ({change.kind} spec) {_headline(change, code_cell)}", ""]
        entry.append(f"Plan: {planned}")
        entry += [f"\n_{n}_" for n in _notes(change, code_cell, cell)]
        lines = _field_lines(change)
        if lines:
            entry += ["", _fence(lines)]
        parts.append("\n".join(entry))
    return "\n\n".join(parts)


def render_review_text(review: Review, plan: Plan | None) -> str:
    """The same review for a terminal: a heading, then per spec its headline, plan and field lines."""
    # every name is shown through `visible`, as the plan's own lines are: an id from the base
    # branch, or from a spec older than the id rules, may hold a newline (a forged `+ submit` line)
    # or a bidi override (another id than the one planned)
    out = [
        f"Spec changes against {visible(review.base_ref)} (merge base {review.merge_base[:12]}): {len(review.changes)}"
    ]
    for change in review.changes:
        out.append(f"  {visible(change.spec_id)}: {_headline(change, visible)}")
        actions = [a for a in _actions_for(change, plan) if a.kind is not ActionKind.NOOP]
        out += [f"    plan: {visible(action_summary(a))}" for a in actions]
        out += [f"    note: {n}" for n in _notes(change, visible, visible)]
        out += [f"      {visible(line)}" for line in _field_lines(change)]
    return "\n".join(out) + "\n"
