"""Pull-request comment bodies, and the pure cutter that fits them into GitHub's limit.

GitHub rejects an issue comment longer than 65,536 characters. A long plan is cut at the last
*safe point* that fits: a line boundary outside any code fence (``` or ~~~), any `<details>`
block and any HTML comment, so the visible part always renders as intended, and a pointer to
the full plan in the job summary is appended. Cutting never splits a line.

    safe_points(text)          offsets where a cut leaves nothing open
    cut_to_fit(text, limit)    the text itself, or its longest safe prefix plus the pointer
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.cells import cell, code_cell
from ..core.plan import Action, ActionKind, Plan
from ..specs.diagnostics import Diagnostic

COMMENT_LIMIT = 65_536
PLAN_MARKER = "<!-- reconciler:plan -->"

_FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_DETAILS_OPEN = re.compile(r"<details(?=[\s>])", re.IGNORECASE)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.IGNORECASE)


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip("\r\n")
    body = stripped.lstrip(" ")
    if len(stripped) - len(body) > 3:
        return False
    run = len(body) - len(body.lstrip(fence[0]))
    return run >= len(fence) and not body[run:].strip()


def safe_points(text: str) -> list[int]:
    """Every offset at which `text[:offset]` leaves no fence, <details> or HTML comment open.

    Offsets sit just after a newline (and at the end, if the end is safe); 0 is always safe.
    """
    points = [0]
    offset = 0
    fence: str | None = None
    depth = 0  # <details> nesting
    in_comment = False
    for line in text.splitlines(keepends=True):
        offset += len(line)
        if fence is not None:
            if _closes(line, fence):
                fence = None
        elif in_comment:
            if "-->" in line:
                in_comment = False
                rest = line.split("-->", 1)[1]
                depth = max(0, depth + len(_DETAILS_OPEN.findall(rest)) - len(_DETAILS_CLOSE.findall(rest)))
        else:
            match = _FENCE_OPEN.match(line.rstrip("\r\n"))
            if match and not (match.group("fence")[0] == "`" and "`" in match.group("info")):
                fence = match.group("fence")
            else:
                visible = re.sub(r"<!--.*?-->", "", line)
                if "<!--" in visible:
                    in_comment = True
                    visible = visible.split("<!--", 1)[0]
                depth = max(0, depth + len(_DETAILS_OPEN.findall(visible)) - len(_DETAILS_CLOSE.findall(visible)))
        if fence is None and depth == 0 and not in_comment and (line.endswith("\n") or offset == len(text)):
            points.append(offset)
    return points


def truncation_notice(shown: int, total: int, run_url: str | None, what: str = "plan") -> str:
    where = f"the [job summary]({run_url}) of this workflow run" if run_url else "this workflow run's job summary"
    this = "These results are" if what == "results" else f"This {what} is"
    return (
        f"> [!NOTE]\n> **{this} too long for one comment.** It shows the first {shown:,} of {total:,}"
        f" characters; the full {what} {'are' if what == 'results' else 'is'} in {where}.\n"
    )


def cut_to_fit(text: str, limit: int = COMMENT_LIMIT, *, run_url: str | None = None, what: str = "plan") -> str:
    """`text` if it fits in `limit` characters, else its longest safe prefix and a pointer to the
    full `what` ("plan" or "results") in the job summary."""
    if len(text) <= limit:
        return text
    widest = "\n\n" + truncation_notice(len(text), len(text), run_url, what)  # the notice at its longest
    budget = limit - len(widest)
    if budget < 0:
        raise ValueError(f"limit {limit} is too small for the truncation notice")
    cut = max(p for p in safe_points(text) if p <= budget)
    head = text[:cut].rstrip("\n")
    return head + "\n\n" + truncation_notice(len(head), len(text), run_url, what)


# --- bodies -------------------------------------------------------------------------------------


def _footer(head_sha: str | None, run_url: str | None) -> str:
    parts = ["posted by `reconciler plan --github-comment`"]
    if head_sha:
        parts.append(f"for commit {head_sha[:12]}")
    if run_url:
        parts.append(f"[workflow run]({run_url})")
    return "\n\n<sub>" + " · ".join(parts) + "</sub>\n"


def with_marker(
    body: str,
    *,
    marker: str = PLAN_MARKER,
    head_sha: str | None = None,
    run_url: str | None = None,
    keep: str = "",
) -> str:
    """The marker first (how the comment is found again), then the body cut to fit, then a footer.
    `keep` (Markdown that must survive a cut, such as `paid_actions`) is placed first when, and
    only when, the body does not fit."""
    footer = _footer(head_sha, run_url)
    room = COMMENT_LIMIT - len(marker) - 1 - len(footer)
    text = body.rstrip("\n") + "\n"
    if len(text) > room and keep:
        kept = keep.rstrip("\n") + "\n\n"
        text = kept + cut_to_fit(text, room - len(kept), run_url=run_url)
    else:
        text = cut_to_fit(text, room, run_url=run_url)
    return f"{marker}\n{text.rstrip(chr(10))}{footer}"


PAID_KINDS = (ActionKind.SUBMIT, ActionKind.REPLACE, ActionKind.STOP)
PAID_SHARE = 3  # the list takes at most a third of a comment: the plan's own table keeps the rest


def paid_actions(plan: Plan, limit: int = COMMENT_LIMIT // PAID_SHARE) -> str:
    """Every submit, replace and stop of the plan, one line each, in at most `limit` characters:
    what a cut comment must still show, whatever template drew it and whatever came first in it
    (a long list of blocked specs, say). "" when the plan has none."""
    paid = [a for a in plan.actions if a.kind in PAID_KINDS]
    if not paid:
        return ""
    head = f"**Runs this plan submits or stops ({len(paid)})**, listed first because the plan is cut below:"
    lines = [head]
    used = len(head) + 1
    for shown, action in enumerate(paid):
        line = f"- {action.kind.value} {code_cell(action.spec_id or '')}{_paid_cost(action)}"
        more = f"- and {len(paid) - shown} more: every one is in the job summary"
        if used + len(line) + 1 + len(more) > limit:
            lines.append(more)
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines) + "\n"


def _paid_cost(action: Action) -> str:
    if action.cost is None or action.kind is ActionKind.STOP:
        return ""
    usd = "unknown" if action.cost.estimated_usd is None else f"${action.cost.estimated_usd:,.2f}"
    return f": {action.cost.attempts} attempts, est. {usd}"


def no_changes_body() -> str:
    return "### reconciler plan\n\n**No changes.** The platform matches the specs in this pull request.\n"


def validation_failed_body(diagnostics: Sequence[Diagnostic]) -> str:
    errors = [d for d in diagnostics if d.severity.value == "error"]
    lines = [
        "### reconciler plan: validation failed",
        "",
        f"**{len(errors)} error(s)** in the specs; nothing was planned. Fix them and push again"
        " (`reconciler validate` shows the same list locally).",
        "",
    ]
    for d in diagnostics:
        level = "error" if d.severity.value == "error" else "warning"
        text = f"{d.key}: {d.message}" + (f" ({d.hint})" if d.hint else "")
        lines.append(f"- **{level}** {code_cell(f'{d.file}:{d.line}:{d.col}')}: {cell(text)}")
    return "\n".join(lines) + "\n"


def plan_failed_body(message: str) -> str:
    return (
        "### reconciler plan: failed\n\n"
        "The plan could not be computed:\n\n"
        + "\n".join(f"> {cell(line)}" for line in message.splitlines() or [""])
        + "\n"
    )
