"""Marker blocks: generated text between `<!-- reconciler:leaderboard NAME -->` and its closing marker.

Text outside the markers is never touched. A missing, doubled, unclosed or nested marker is
an error naming the file and line, never a guess.
"""

from __future__ import annotations

import re

from ..errors import ReconcilerError
from ..specs.marker_names import MARKER_NAME_PATTERN


class MarkerError(ReconcilerError):
    pass


_ANY_MARKER = re.compile(rf"<!--\s*(/?)reconciler:leaderboard\s+({MARKER_NAME_PATTERN})\s*-->")


def begin_marker(name: str) -> str:
    return f"<!-- reconciler:leaderboard {name} -->"


def end_marker(name: str) -> str:
    return f"<!-- /reconciler:leaderboard {name} -->"


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def replace_block(text: str, name: str, content: str, *, path: str) -> str:
    """`text` with the block `name` holding exactly `content` (framed by newlines)."""
    opens: list[re.Match[str]] = []
    closes: list[re.Match[str]] = []
    depth_stack: list[re.Match[str]] = []
    for m in _ANY_MARKER.finditer(text):
        closing, marker_name = m.group(1) == "/", m.group(2)
        if not closing:
            if depth_stack:
                raise MarkerError(
                    f"{path}:{_line_of(text, m.start())}: marker block {marker_name!r} opens inside block"
                    f" {depth_stack[-1].group(2)!r}; blocks cannot nest"
                )
            depth_stack.append(m)
        else:
            if not depth_stack or depth_stack[-1].group(2) != marker_name:
                raise MarkerError(
                    f"{path}:{_line_of(text, m.start())}: closing marker for {marker_name!r} has no opening marker"
                )
            depth_stack.pop()
        if marker_name == name:
            (closes if closing else opens).append(m)
    if depth_stack:
        m = depth_stack[-1]
        raise MarkerError(
            f"{path}:{_line_of(text, m.start())}: marker block {m.group(2)!r} is never closed; add {end_marker(m.group(2))}"
        )
    if not opens:
        raise MarkerError(
            f"{path}: no marker block {name!r}",
            hint=f"add the two lines {begin_marker(name)} and {end_marker(name)} where the leaderboard should go",
        )
    if len(opens) > 1:
        lines = ", ".join(str(_line_of(text, m.start())) for m in opens)
        raise MarkerError(f"{path}: marker block {name!r} appears {len(opens)} times (lines {lines}); keep one")
    forged = _ANY_MARKER.search(content)
    if forged:  # the next render would find the block broken, or another block moved
        raise MarkerError(
            f"{path}: the leaderboard generated for block {name!r} contains a marker comment ({forged.group(0)});"
            " a template may not write one",
            hint="remove the marker comment from the template's output",
        )
    start, end = opens[0].end(), closes[0].start()
    body = "\n" + content.strip("\n") + "\n"
    return text[:start] + body + text[end:]
