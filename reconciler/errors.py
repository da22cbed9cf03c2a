"""One error tree for the whole tool, and the exit codes it maps to.

    ReconcilerError                 exit 1, shown as one line, never a traceback
    ├── UsageError                  a bad flag or argument combination (exit 64)
    ├── ConfigError                 reconciler.toml or the environment is wrong
    ├── SpecError                   one or more specs failed validation (carries diagnostics)
    ├── PlatformError               the Osmosis platform answered with an error (reconciler.osmosis.errors)
    ├── StalePlanError              a saved plan no longer matches specs or platform state
    ├── LockedError                 another reconciler holds the repository lock
    ├── PartialFailure              some actions failed; the report says which
    └── Blocked                     apply or reconcile left blocked specs behind (exit 3)

Anything that is not a ReconcilerError is a bug, and the CLI says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum


class ExitCode(IntEnum):
    """Every code the command exits with; scripts and the shipped workflows rely on them."""

    OK = 0  # done; with `plan --detailed-exitcode`: the platform matches the specs
    ERROR = 1
    CHANGES_PENDING = 2  # only with `plan --detailed-exitcode`
    # `plan --detailed-exitcode`, `apply`, `reconcile`: some action cannot be carried out as
    # specified (apply and reconcile carried out everything else)
    BLOCKED = 3
    USAGE = 64  # a bad command line (sysexits EX_USAGE), distinct from CHANGES_PENDING
    INTERRUPTED = 130


EXIT_CODES_HELP = (
    "Exit codes: 0 ok (with plan --detailed-exitcode: in sync), 1 error, 2 changes pending (only with"
    " plan --detailed-exitcode), 3 blocked (that plan, apply and reconcile), 64 usage error, 130 interrupted."
)


class ReconcilerError(Exception):
    """An expected failure with a message a user can act on."""

    exit_code: int = ExitCode.ERROR
    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint

    def render(self) -> str:
        text = f"error: {self.message}"
        if self.hint:
            text += f"\nhint: {self.hint}"
        return text


class UsageError(ReconcilerError):
    exit_code = ExitCode.USAGE


class ConfigError(ReconcilerError):
    pass


class SpecError(ReconcilerError):
    pass


class StalePlanError(ReconcilerError):
    pass


class UnsafePathError(ReconcilerError):
    """A write that would leave the work tree, enter .git, follow a symlink or clobber another's file."""


class BoardRefused(ReconcilerError):
    """A leaderboard's files would be refused at render time (a chart over a file reconciler did
    not write, a broken marker block): the repository's own content, found before anything acts."""


class LockedError(ReconcilerError):
    pass


class PartialFailure(ReconcilerError):
    pass


class Blocked(ReconcilerError):
    """Apply or reconcile did everything it could, but some specs are blocked: they need a person."""

    exit_code = ExitCode.BLOCKED


def blocked_error(specs: Sequence[str]) -> Blocked:
    """The one message for specs an apply left blocked."""
    shown = ", ".join(specs[:5]) + (f" and {len(specs) - 5} more" if len(specs) > 5 else "")
    return Blocked(
        f"{len(specs)} spec(s) blocked, not applied: {shown}",
        hint="the plan above gives the reason next to each; fix it, then run `reconciler plan` again",
    )


class CommandExit(Exception):
    """A command finished and already said everything; `cli.main` exits with `exit_code` and prints nothing.

    For outcomes that are not errors (plan's `CHANGES_PENDING`, validate's findings, a cancelled prompt):
    commands raise this rather than leave the process themselves, so the exit happens in one place.
    """

    def __init__(self, exit_code: ExitCode) -> None:
        super().__init__(f"exit {int(exit_code)}")
        self.exit_code = exit_code
