"""A plan as Markdown, for pull-request comments and job summaries."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..core.plan import Plan
from ..errors import ConfigError
from .plan_text import SYMBOLS
from .templates import environment


def render_markdown(
    plan: Plan,
    *,
    repo_root: Path | None = None,
    templates: Mapping[str, str] | None = None,
    title: str = "",
    show_noop: bool = False,
    review: str | None = None,
) -> str:
    """The plan table; `review` (Markdown from `render.review`) is placed after it when given.
    `templates` (a base commit's `templates/`) replaces the repository's folder when given."""
    template = environment(repo_root, templates=templates).get_template("plan.md.j2")
    return template.render(plan=plan, symbols=SYMBOLS, title=title, show_noop=show_noop, review=review or "")


def render_for_reviewers(
    plan: Plan,
    *,
    repo_root: Path,
    base_templates: Mapping[str, str] | None,
    base: str | None,
    show_noop: bool = False,
    review: str | None = None,
) -> str:
    """The plan as a pull request's reviewers are shown it: drawn by the base commit's templates
    (`base_templates`; None when they could not be read: the packaged ones), never by the pull
    request's own. A pull request's `templates/plan.md.j2` is code from its author, and could
    otherwise make the comment say "No changes" over a paid submit.

    The pull request's templates still render first, so one that fails fails the plan as it
    would after merge; when they draw the plan differently, a note says so above it."""
    own = render_markdown(plan, repo_root=repo_root, show_noop=show_noop, review=review)
    if base and base_templates:
        where = f"of the base commit {base[:12]}"
    elif base and base_templates is not None:
        where = f"packaged with reconciler (the base commit {base[:12]} has none of its own)"
    else:
        where = "packaged with reconciler"
    try:
        shown = render_markdown(plan, templates=base_templates or {}, show_noop=show_noop, review=review)
    except ConfigError as exc:  # the base's own template fails: the packaged one still draws the plan
        shown = render_markdown(plan, templates={}, show_noop=show_noop, review=review)
        where = f"packaged with reconciler (the base's fails: {exc.message})"
    if own == shown:
        return shown
    return (
        f"> [!NOTE]\n> This pull request's `templates/` draw this plan differently. It is shown with the templates"
        f" {where}; the pull request's apply once it is merged.\n\n{shown}"
    )
