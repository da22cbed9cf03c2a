"""The files and workflow commands GitHub Actions reads from a step.

    GITHUB_STEP_SUMMARY   Markdown appended here shows on the run's summary page (up to 1 MiB per step)
    GITHUB_OUTPUT         step outputs, one `name<<DELIMITER` block each, so values may span lines
    stdout                `::error file=F,line=L::message` lines become annotations on the diff

Every output uses the delimiter form with a random delimiter that does not occur in the value,
which is the multiline-safe syntax GitHub documents; a value can never inject another output.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError

SUMMARY_LIMIT = 1024 * 1024  # bytes GitHub accepts per step summary


def _env_file(name: str, env: Mapping[str, str] | None) -> Path | None:
    env = os.environ if env is None else env
    value = env.get(name, "").strip()
    return Path(value) if value else None


def output_block(name: str, value: str, delimiter: str | None = None) -> str:
    """`name<<D\\nvalue\\nD\\n` with a delimiter D that is not a line of `value`."""
    if not name or any(c in name for c in "\r\n=<"):
        raise ValueError(f"invalid output name {name!r}")
    while delimiter is None or delimiter in value:
        delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def set_outputs(values: Mapping[str, str], env: Mapping[str, str] | None = None) -> bool:
    """Append outputs to GITHUB_OUTPUT; False (and nothing written) when it is not set."""
    path = _env_file("GITHUB_OUTPUT", env)
    if path is None:
        return False
    try:
        with path.open("a", encoding="utf-8") as fh:
            for name, value in values.items():
                fh.write(output_block(name, value))
    except OSError as exc:
        raise _unwritable("GITHUB_OUTPUT", path, exc) from None
    return True


def fit_summary(markdown: str, limit: int = SUMMARY_LIMIT) -> str:
    """The summary as is, or cut at a line boundary with a note when it exceeds GitHub's size limit."""
    data = markdown.encode("utf-8")
    if len(data) <= limit:
        return markdown
    note = (
        "\n\n_The plan was cut to fit the job summary's 1 MiB limit; `reconciler plan --format json` has all of it._\n"
    )
    head = data[: limit - len(note.encode("utf-8"))].decode("utf-8", errors="ignore")
    return head[: head.rfind("\n") + 1] + note


def append_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Append Markdown to GITHUB_STEP_SUMMARY; False when it is not set."""
    path = _env_file("GITHUB_STEP_SUMMARY", env)
    if path is None:
        return False
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(fit_summary(markdown if markdown.endswith("\n") else markdown + "\n"))
    except OSError as exc:
        raise _unwritable("GITHUB_STEP_SUMMARY", path, exc) from None
    return True


def _unwritable(variable: str, path: Path, exc: OSError) -> ConfigError:
    return ConfigError(
        f"{variable} names {path}, which cannot be written: {exc.strerror or exc}",
        hint=f"point {variable} at a file (GitHub Actions sets it for every step)",
    )
