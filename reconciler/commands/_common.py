"""Options and plumbing shared by the commands that talk to the platform."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import click

from ..errors import ExitCode, ReconcilerError

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


class Seconds(click.ParamType[float]):
    """A duration in seconds: zero or more, `inf` for no limit; never NaN, which compares false with
    every deadline and so would wait forever while reading as a number."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            seconds = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number of seconds", param, ctx)
        if seconds != seconds or seconds < 0:  # NaN is the one float unequal to itself
            self.fail(f"{value!r} is not a number of seconds (0 or more, or inf)", param, ctx)
        return seconds


SECONDS = Seconds()


def platform_options(func: F) -> F:
    func = click.option(
        "--workspace",
        metavar="NAME",
        help="Workspace name sent as X-Osmosis-Workspace (default: OSMOSIS_WORKSPACE, reconciler.toml, else the git origin).",
    )(func)
    func = click.option(
        "--platform",
        metavar="URL",
        help='Platform URL or "local" (default: OSMOSIS_PLATFORM_URL, then reconciler.toml).',
    )(func)
    return func


def target_option(func: F) -> F:
    return click.option(
        "--target",
        "targets",
        multiple=True,
        metavar="ID",
        help="Act only on this spec id (repeatable). Default: every spec.",
    )(func)


class Interrupted(ReconcilerError):
    """Ctrl-C: one line and exit 130, never a traceback (click would turn it into a bare `Abort`)."""

    exit_code = ExitCode.INTERRUPTED

    def render(self) -> str:
        return self.message


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(coro)
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()
