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


def lock_timeout_option(default: float = 0.0) -> Callable[[F], F]:
    """`--lock-timeout`: every command that writes the state file holds the repository's lock."""
    from ._params import SECONDS

    return click.option(
        "--lock-timeout",
        type=SECONDS,
        default=default,
        show_default=True,
        help="Seconds to wait for another reconciler's lock.",
    )


class Interrupted(ReconcilerError):
    """Ctrl-C: one line and exit 130, never a traceback (click would turn it into a bare `Abort`)."""

    exit_code = ExitCode.INTERRUPTED

    def render(self) -> str:
        return self.message


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion; Ctrl-C becomes `Interrupted`.

    The result travels outside the task: on Python 3.11, `asyncio.run` formats the repr of its
    main task (result included) when it restores the SIGINT handler, which for a 10,000-run
    plan cost about 0.1 s and 11 MiB.
    """
    box: list[T] = []

    async def main() -> None:
        box.append(await coro)

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        raise Interrupted("interrupted") from None
    return box[0]


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()
