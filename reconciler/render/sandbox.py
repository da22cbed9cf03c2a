"""Repository templates run in a sandbox: they are code from whoever can open a pull request.

`SandboxedEnvironment` is jinja2's immutable sandbox (no attribute that starts with `_`, no
mutation of what a template is given) with bounds on `*` and `**`; `RepositoryLoader` reads only
regular files under `templates/`, never through a symlink. Every failure of a template, from a
syntax error to a refused attribute, is a ConfigError that names it and its line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ..errors import ConfigError
from ..safe_paths import UnsafePathError, read_repo_file

MAX_TEMPLATE_BYTES = 256 * 1024
_MAX_REPEAT = 100_000  # jinja2's own bound on range()
_MAX_EXPONENT = 1000
_MAX_WIDTH = re.compile(r"%[-#0 +]*(?:\d{6,}|\d*\.\d{6,})")  # `"%300000000s" % x`: a width of a million or more
MAX_OUTPUT_CHARS = 8_000_000  # a leaderboard of thousands of rows is well under a million


class RepositoryLoader(jinja2.BaseLoader):
    """Templates from a repository's `templates/` folder, read by the one rule for repository code
    (safe_paths.read_repo_file): regular files only, never through a symlink, bounded in size.

    A symlink (or a FIFO, or a device) in a pull request could otherwise hand a template
    `/proc/self/environ` or a private key to `{% include %}`, or hang the render.
    """

    def __init__(self, repo_root: Path) -> None:
        self.repo_root = repo_root

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)  # refuses `..`
        if not pieces:
            raise jinja2.TemplateNotFound(template)
        rel = "/".join(["templates", *pieces])
        try:
            data = read_repo_file(self.repo_root, rel, limit=MAX_TEMPLATE_BYTES)
        except UnsafePathError as exc:
            raise jinja2.TemplateError(exc.message) from None
        if data is None:
            raise jinja2.TemplateNotFound(template)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise jinja2.TemplateError(f"it cannot be read as UTF-8 text ({exc})") from None
        return text, str(self.repo_root / rel), lambda: False


class _Template(jinja2.Template):
    def render(self, *args: Any, **kwargs: Any) -> str:
        name = self.name or "template"
        try:
            text = super().render(*args, **kwargs)
        except Exception as exc:  # a template is code: whatever it raises (1/0, a self-include) is its failure
            raise _template_failure(name, self.filename, exc) from None
        if len(text) > MAX_OUTPUT_CHARS:
            raise _template_failure(
                name,
                self.filename,
                SecurityError(f"its output is over {MAX_OUTPUT_CHARS // 1_000_000} million characters"),
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _template_failure(name, self.filename, exc) from None
        return text


class SandboxedEnvironment(ImmutableSandboxedEnvironment):
    """A sandbox: templates see only what they are given, and no attribute that starts with `_`,
    so `cycler.__init__.__globals__` (the route to os.environ, files and commands) is closed."""

    template_class = _Template
    # `"x" * 10**10`, `2 ** 10**8` or `"%300000000s" % x` would exhaust memory or time before any output
    intercepted_binops = frozenset({"*", "**", "%"})

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and isinstance(right, int) and abs(right) > _MAX_EXPONENT:
            raise SecurityError(f"an exponent above {_MAX_EXPONENT} is not allowed in a template")
        if operator == "%" and isinstance(left, str) and _MAX_WIDTH.search(left):
            raise SecurityError("a format width of a million or more is not allowed in a template")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) and len(seq) * times > _MAX_REPEAT:
                    raise SecurityError(f"a repetition longer than {_MAX_REPEAT} items is not allowed in a template")
        return super().call_binop(context, operator, left, right)

    def get_template(self, *args: Any, **kwargs: Any) -> jinja2.Template:
        try:
            return super().get_template(*args, **kwargs)
        except jinja2.TemplateError as exc:
            name = args[0] if args and isinstance(args[0], str) else "template"
            raise _template_failure(name, getattr(exc, "filename", None), exc) from None


def _template_failure(name: str, filename: str | None, exc: BaseException) -> ConfigError:
    where = f"templates/{name}" if filename is None or "reconciler/render/templates" not in filename else name
    line = getattr(exc, "lineno", None) or _line_in_traceback(exc, filename)
    at = f":{line}" if line else ""
    if isinstance(exc, jinja2.TemplateError):
        why = exc.message or type(exc).__name__
    else:
        why = f"{type(exc).__name__}: {str(exc)[:200]}" if str(exc) else type(exc).__name__
    return ConfigError(
        f"template {where}{at} cannot be rendered: {why}",
        hint=f"fix {where}, or delete it to use the packaged template",
    )


def _line_in_traceback(exc: BaseException, filename: str | None) -> int | None:
    """jinja2 rewrites tracebacks so a template's frames carry its file and line."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if filename is not None and tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
