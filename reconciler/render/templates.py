"""The jinja2 environment: templates from the repository's `templates/` first, then the packaged defaults."""

from __future__ import annotations

import re
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from ..core.visible import visible
from ..errors import ConfigError
from .sandbox import RepositoryLoader, SandboxedEnvironment

_CELL_ESCAPES = {"|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]"}
_CELL_PATTERN = re.compile("|".join(re.escape(k) for k in _CELL_ESCAPES))


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell: no pipe, newline, code span or HTML (so no forged
    marker), and no control or bidi character (shown as `\\u202e`, so a name reads as it is)."""
    text = visible(" ".join(str(value).split()))
    return _CELL_PATTERN.sub(lambda m: _CELL_ESCAPES[m.group(0)], text)


def code_cell(value: object) -> str:
    """Identifiers shown as-is in a cell, still unable to break the table, open HTML or hide characters."""
    text = visible(" ".join(str(value).split()))
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("`", "'")


def xml_text(value: object) -> Markup:
    """Text for SVG/XML: markup escaped, and control and bidi characters shown as escapes (XML 1.0
    forbids most controls outright; an override would reverse a label)."""
    if isinstance(value, Markup):  # already markup: escaping it again would double it
        return Markup(visible(value))
    return escape(visible(str(value)))


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def environment(repo_root: Path | None = None) -> jinja2.Environment:
    """A sandboxed environment: the repository's `templates/` first, then the packaged defaults.

    A repository template is code from whoever can open a pull request; it renders in jinja2's
    immutable sandbox with no way to the environment, files or Python internals, and any error
    (syntax, a missing name, a refused attribute) is a ConfigError naming the template.
    """
    loaders: list[jinja2.BaseLoader] = []
    if repo_root is not None:
        folder = repo_root / "templates"
        if folder.is_symlink():
            raise ConfigError(
                "templates/ is a symlink; repository templates must live in the repository",
                hint="replace the link with a folder of templates, or remove it to use the packaged ones",
            )
        if folder.is_dir():
            loaders.append(RepositoryLoader(repo_root))
    loaders.append(jinja2.PackageLoader("reconciler.render", "templates"))
    env = SandboxedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,  # Markdown; every interpolated cell goes through `cell`
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    env.filters["cell"] = cell
    env.filters["e"] = env.filters["escape"] = xml_text
    env.filters["code"] = code_cell
    env.globals["money"] = money
    return env
