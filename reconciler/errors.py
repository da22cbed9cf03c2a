"""One error tree for the whole tool, and the exit codes it maps to.

    ReconcilerError                 exit 1, shown as one line, never a traceback
    ├── UsageError                  a bad flag or argument combination
    ├── ConfigError                 reconciler.toml or the environment is wrong
    ├── SpecError                   one or more specs failed validation (carries diagnostics)
    ├── PlatformError               the Osmosis platform answered with an error (reconciler.osmosis.errors)
    ├── StalePlanError              a saved plan no longer matches specs or platform state
    ├── LockedError                 another reconciler holds the repository lock
    └── PartialFailure              some actions failed; the report says which

Anything that is not a ReconcilerError is a bug, and the CLI says so.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1
    CHANGES_PENDING = 2  # only with `plan --detailed-exitcode`
    USAGE = 2  # click's own code for a bad command line
    INTERRUPTED = 130


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


class LockedError(ReconcilerError):
    pass


class PartialFailure(ReconcilerError):
    pass
