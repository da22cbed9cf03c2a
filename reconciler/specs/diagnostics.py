"""A problem found in a spec, pinned to a file position and a dotted key."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from ..workflow_commands import annotation
from .visible import visible

KeyPath = tuple[str | int, ...]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


def dotted(path: KeyPath) -> str:
    """`("agents", 1, "model", "model")` -> `agents[1].model.model`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out or "(file)"


class Diagnostic(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    col: int
    key: str
    message: str
    code: str
    severity: Severity = Severity.ERROR
    hint: str | None = None

    def render(self) -> str:
        """One line, `file:line:col: key: [warning: ]message (hint)`.

        Paths, keys and messages quote what a spec holds; any control or bidi character in
        them is shown as its escape, so a key with a newline cannot print a line of its own.
        """
        prefix = f"{self.file}:{self.line}:{self.col}: {self.key}: "
        if self.severity is Severity.WARNING:
            prefix += "warning: "
        text = prefix + self.message
        if self.hint:
            text += f" ({self.hint})"
        return visible(text)

    def github_annotation(self) -> str:
        level = "error" if self.severity is Severity.ERROR else "warning"
        body = f"{self.key}: {self.message}"
        if self.hint:
            body += f" ({self.hint})"
        return annotation(level, visible(body), file=visible(self.file), line=self.line, col=self.col, title=self.code)
