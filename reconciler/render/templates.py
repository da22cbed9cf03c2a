"""The jinja2 environment: templates from the repository's `templates/` first, then the packaged defaults."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2

_CELL_ESCAPES = {"|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]"}
_CELL_PATTERN = re.compile("|".join(re.escape(k) for k in _CELL_ESCAPES))


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell: no pipe, newline, code span or HTML (so no forged marker)."""
    text = " ".join(str(value).split())
    return _CELL_PATTERN.sub(lambda m: _CELL_ESCAPES[m.group(0)], text)


def code_cell(value: object) -> str:
    """Identifiers shown as-is in a cell, still unable to break the table or open HTML."""
    text = " ".join(str(value).split())
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("`", "'")


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def environment(repo_root: Path | None = None) -> jinja2.Environment:
    loaders: list[jinja2.BaseLoader] = []
    if repo_root is not None and (repo_root / "templates").is_dir():
        from .repo_templates import RepoTemplates

        loaders.append(RepoTemplates(repo_root))  # never through a symlink: see safe_paths.read_repo_file
    loaders.append(jinja2.PackageLoader("reconciler.render", "templates"))
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,  # Markdown; every interpolated cell goes through `cell`
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters["cell"] = cell
    env.filters["code"] = code_cell
    env.globals["money"] = money
    return env
