"""The jinja2 environment: templates from the repository's `templates/` first, then the packaged defaults."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from ..core.cells import cell, code_cell
from ..errors import ConfigError
from ..specs.visible import visible
from .sandbox import RepositoryLoader, SandboxedEnvironment


def xml_text(value: object) -> Markup:
    """Text for SVG/XML: markup escaped, and control and bidi characters shown as escapes (XML 1.0
    forbids most controls outright; an override would reverse a label)."""
    if isinstance(value, Markup):  # already markup: escaping it again would double it
        return Markup(visible(value))
    return escape(visible(str(value)))


def money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}"


def environment(repo_root: Path | None = None, *, templates: Mapping[str, str] | None = None) -> jinja2.Environment:
    """A sandboxed environment: the repository's `templates/` first, then the packaged defaults.
    `templates` (name -> text, a base commit's `templates/`) takes the place of the folder.

    A repository template is code from whoever can open a pull request; it renders in jinja2's
    immutable sandbox with no way to the environment, files or Python internals, and any error
    (syntax, a missing name, a refused attribute) is a ConfigError naming the template.
    """
    loaders: list[jinja2.BaseLoader] = []
    if templates is not None:
        loaders.append(jinja2.DictLoader(dict(templates)))
    elif repo_root is not None:
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
