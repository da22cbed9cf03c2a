"""A plan as Markdown, for pull-request comments and job summaries."""

from __future__ import annotations

from pathlib import Path

from ..core.plan import Plan
from .plan_text import SYMBOLS
from .templates import environment


def render_markdown(
    plan: Plan,
    *,
    repo_root: Path | None = None,
    title: str = "",
    show_noop: bool = False,
    review: str | None = None,
) -> str:
    """The plan table; `review` (Markdown from `render.review`) is placed after it when given."""
    template = environment(repo_root).get_template("plan.md.j2")
    return template.render(plan=plan, symbols=SYMBOLS, title=title, show_noop=show_noop, review=review or "")
