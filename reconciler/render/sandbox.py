"""Repository templates run in a sandbox: they are code from whoever can open a pull request.

`SandboxedEnvironment` is jinja2's immutable sandbox (no attribute that starts with `_`, no
mutation of what a template is given) with bounds on `*`, `**`, `%`, on what `~` and `+` join
(MAX_OUTPUT_CHARS), and on the widths a padding filter or string method may be asked for
(`center`, `ljust`, `format`, ...). A render is streamed and stopped as soon as its output passes
MAX_OUTPUT_CHARS, or once it runs longer than MAX_RENDER_SECONDS (on the main thread, where every
render runs). `RepositoryLoader` reads only regular files under `templates/`, never through a
symlink. Every failure of a template, from a syntax error or one nested too deeply to compile, to a
refused attribute, is a ConfigError that names it and its line.

Every operator and method call returns at most MAX_OUTPUT_CHARS characters (or items), so text
doubled step by step (`%`, `.format`, `.replace`) stops there too. Not bounded: one step that makes
a huge value from values under the bound (`s.replace("x", s)`, a repeated list written out
`{{ [s] * 100000 }}`, the `join` filter); and output captured before it is written (a macro, a
`{% set %}`, `{% filter %}` or `{% call %}` block, `self.name()`, an imported template) is
assembled in full before it is counted. The deadline stops these only between steps, never
inside one.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import jinja2
from jinja2.compiler import CodeGenerator, Frame, optimizeconst
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import soft_str
from pydantic import BaseModel

from ..errors import ConfigError
from ..safe_paths import UnsafePathError, read_repo_file

MAX_TEMPLATE_BYTES = 256 * 1024
_MAX_REPEAT = 100_000  # jinja2's own bound on range()
_MAX_EXPONENT = 1000
_MAX_WIDTH = re.compile(r"%[-#0 +]*(?:\d{6,}|\d*\.\d{6,})")  # `"%300000000s" % x`: a width of a million or more
MAX_OUTPUT_CHARS = 8_000_000  # a leaderboard of thousands of rows is well under a million
MAX_RENDER_SECONDS = 20.0  # a leaderboard of thousands of rows renders in well under a second
_MAX_PAD = 1_000_000  # no padding filter or string method is asked for a million characters
_PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})
_FORMAT_METHODS = frozenset({"format", "format_map"})
_BIG_FORMAT_WIDTH = re.compile(r"\{[^{}]*:[^{}]*\d{7,}[^{}]*\}")  # "{:>1000000000}"
# pydantic's own methods and attributes, on every model (a field of the same name stays readable)
# (reading a model as a dict or JSON text stays allowed: those only return its own values)
_MODEL_API = frozenset(name for name in dir(BaseModel) if not name.startswith("_")) - {"model_dump", "model_dump_json"}
_WIDTH_FROM_ARGS = re.compile(r"%[-#0 +]*\*|\{[^{}]*:[^{}]*\{")  # "%*s", "{:>{}}": the width is a value


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


class _TooLong(SecurityError):
    pass


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Stop the code inside after `seconds` (a SecurityError raised where it runs); only on the
    main thread, where signals are delivered, and where there is an interval timer."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:  # someone else's alarm is set: never reset it
        yield
        return
    armed = [True]

    def stop(_signum: int, _frame: object) -> None:
        if armed[0]:
            raise _TooLong(f"it ran for over {seconds:g} seconds")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class _Template(jinja2.Template):
    def render(self, *args: Any, **kwargs: Any) -> str:
        """The output, written piece by piece and counted as it is: a loop that would write
        gigabytes stops one piece past MAX_OUTPUT_CHARS, not after it has written them all."""
        name = self.name or "template"
        pieces: list[str] = []
        size = 0
        try:
            with _deadline(MAX_RENDER_SECONDS):
                stream = cast(Generator[str, None, None], self.generate(*args, **kwargs))
                try:
                    for piece in stream:
                        size += len(piece)
                        if size > MAX_OUTPUT_CHARS:
                            break
                        pieces.append(piece)
                finally:
                    stream.close()
        except Exception as exc:  # a template is code: whatever it raises (1/0, a self-include) is its failure
            raise _template_failure(name, self.filename, exc) from None
        if size > MAX_OUTPUT_CHARS:
            raise _template_failure(
                name,
                self.filename,
                SecurityError(f"its output is over {MAX_OUTPUT_CHARS // 1_000_000} million characters"),
            )
        text = "".join(pieces)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise _template_failure(name, self.filename, exc) from None
        return text


class _CodeGenerator(CodeGenerator):
    """jinja2's code, with `a ~ b ~ c` joined by SandboxedEnvironment.join (a concatenation is no
    binary operator that `intercepted_binops` could reach)."""

    @optimizeconst
    def visit_Concat(self, node: jinja2.nodes.Concat, frame: Frame) -> None:
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        elif frame.eval_ctx.autoescape:
            join = "markup_join"
        else:
            join = "str_join"
        self.write(f"environment.join({join}, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


def _bounded_result(value: Any) -> Any:
    """What one operator or call made, refused when it is longer than a whole output may be: text
    doubled step by step with `%`, `.format`, `.replace` or an escaping `+` grows only to the
    bound's twice, never to gigabytes (the checks before the step stop what can be foreseen)."""
    if isinstance(value, str | list | tuple):
        _refuse_over_bound(len(value), "characters" if isinstance(value, str) else "items", "a value of over")
    return value


def _check_concatenation(size: int, unit: str) -> None:
    _refuse_over_bound(size, unit, "a concatenation longer than")


def _refuse_over_bound(size: int, unit: str, what: str) -> None:
    """The one size rule of a value a template makes: no longer than its whole output may be."""
    if size > MAX_OUTPUT_CHARS:
        raise SecurityError(f"{what} {MAX_OUTPUT_CHARS // 1_000_000} million {unit} is not allowed in a template")


class SandboxedEnvironment(ImmutableSandboxedEnvironment):
    """A sandbox: templates see only what they are given, and no attribute that starts with `_`,
    so `cycler.__init__.__globals__` (the route to os.environ, files and commands) is closed.

    Nor pydantic's own API on the models a template is given (`_MODEL_API`): a template reads a
    model's fields and our properties, never `parse_file` (which reads any file, and unpickles
    one when asked), `model_validate` and the like."""

    template_class = _Template
    code_generator_class = _CodeGenerator
    # `"x" * 10**10`, `2 ** 10**8` or `"%300000000s" % x` would exhaust memory or time before any
    # output; `s + s` doubled in a few lines would exhaust memory
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def join(self, join: Callable[[Any], str], values: tuple[Any, ...]) -> str:
        """`a ~ b`: each value as text, refused before they are joined if together they are longer
        than MAX_OUTPUT_CHARS (and after, if escaping grew them past it)."""
        texts = [soft_str(v) for v in values]
        _check_concatenation(sum(map(len, texts)), "characters")
        joined = join(texts)
        _check_concatenation(len(joined), "characters")
        return joined

    def call_binop(self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "+" and isinstance(left, str | list | tuple) and isinstance(right, str | list | tuple):
            _check_concatenation(len(left) + len(right), "characters" if isinstance(left, str) else "items")
        if operator == "**" and isinstance(right, int) and abs(right) > _MAX_EXPONENT:
            raise SecurityError(f"an exponent above {_MAX_EXPONENT} is not allowed in a template")
        if operator == "%":
            _check_widths(left, right if isinstance(right, tuple) else (right,), {}, widths_in_args=False)
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) and len(seq) * times > _MAX_REPEAT:
                    raise SecurityError(f"a repetition longer than {_MAX_REPEAT} items is not allowed in a template")
        return _bounded_result(super().call_binop(context, operator, left, right))

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        model = obj if isinstance(obj, type) else type(obj)
        if attr in _MODEL_API and issubclass(model, BaseModel) and attr not in model.model_fields:
            return False
        return bool(super().is_safe_attribute(obj, attr, value))

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        method = getattr(__obj, "__wrapped__", __obj)  # jinja wraps str.format for its own checks
        name = getattr(method, "__name__", "")
        if isinstance(getattr(method, "__self__", None), str) and name in _PADDING_METHODS | _FORMAT_METHODS:
            _check_widths(method.__self__, args, kwargs, widths_in_args=name in _PADDING_METHODS)
        return _bounded_result(super().call(__context, __obj, *args, **kwargs))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in ("center", "indent"):
            self.filters[name] = _bounded(self.filters[name], widths_in_args=True)
        self.filters["format"] = _bounded(self.filters["format"], widths_in_args=False)

    def get_template(self, *args: Any, **kwargs: Any) -> jinja2.Template:
        try:
            return super().get_template(*args, **kwargs)
        except jinja2.TemplateError as exc:
            name = args[0] if args and isinstance(args[0], str) else "template"
            raise _template_failure(name, getattr(exc, "filename", None), exc) from None
        except (RecursionError, SyntaxError, MemoryError) as exc:
            # nested too deeply for the parser or for Python's compiler: still the template's
            # failure, with no line (a SyntaxError's line is of the code jinja2 generated)
            name = args[0] if args and isinstance(args[0], str) else "template"
            raise _template_failure(name, "", exc, line=False) from None


def _check_widths(text: object, args: tuple[Any, ...], kwargs: dict[str, Any], *, widths_in_args: bool) -> None:
    """The one width rule, for padding (`center(n)`: `args` are widths) and for formatting (`%`,
    `format`: `args` are values, widths only where the format takes them from the values, as
    `%*s` and `{:>{}}` do). A big number formatted is fine; a big width is not."""
    if isinstance(text, str):
        if _BIG_FORMAT_WIDTH.search(text) or _MAX_WIDTH.search(text):
            raise SecurityError("a format width of a million or more is not allowed in a template")
        widths_in_args = widths_in_args or bool(_WIDTH_FROM_ARGS.search(text))
    if widths_in_args and any(isinstance(v, int) and v > _MAX_PAD for v in (*args, *kwargs.values())):
        raise SecurityError(f"a width of {_MAX_PAD:,} characters or more is not allowed in a template")


def _bounded(jinja_filter: Callable[..., Any], *, widths_in_args: bool) -> Callable[..., Any]:
    """A padding or format filter under the one width rule (`_check_widths`)."""

    def bounded(value: Any, *args: Any, **kwargs: Any) -> Any:
        _check_widths(value, args, kwargs, widths_in_args=widths_in_args)
        return jinja_filter(value, *args, **kwargs)

    return bounded


def _template_failure(name: str, filename: str | None, exc: BaseException, *, line: bool = True) -> ConfigError:
    where = f"templates/{name}" if filename is None or "reconciler/render/templates" not in filename else name
    line_no = (getattr(exc, "lineno", None) or _line_in_traceback(exc, filename)) if line else None
    at = f":{line_no}" if line_no else ""
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
