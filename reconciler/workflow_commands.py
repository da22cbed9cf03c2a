"""GitHub Actions workflow commands (`::warning file=F,line=L::message`): pure text, used by every layer.

Kept below the GitHub adapter: spec diagnostics and the engine write annotations too, and
neither may import reconciler.github.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def in_actions(env: Mapping[str, str] | None = None) -> bool:
    """Whether this process runs as a GitHub Actions step."""
    env = os.environ if env is None else env
    return env.get("GITHUB_ACTIONS") == "true"


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(
    level: str,
    message: str,
    *,
    file: str | None = None,
    line: int | None = None,
    col: int | None = None,
    title: str | None = None,
) -> str:
    """One workflow command line: `::error file=F,line=L,col=C,title=T::message`."""
    if level not in ("error", "warning", "notice"):
        raise ValueError(f"annotation level must be error, warning or notice, not {level!r}")
    props = []
    if file:
        props.append(f"file={escape_property(file)}")
    if line is not None:
        props.append(f"line={line}")
    if col is not None:
        props.append(f"col={col}")
    if title:
        props.append(f"title={escape_property(title)}")
    head = f"::{level} {','.join(props)}" if props else f"::{level}"
    return f"{head}::{escape_data(message)}"
