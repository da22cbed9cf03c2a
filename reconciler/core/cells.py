"""Text for one cell of a Markdown table: nothing a value holds can break the table, open HTML or
hide characters. Shared by the leaderboards, the plan and the pull-request comments."""

from __future__ import annotations

import re

from ..specs.visible import visible

_CELL_ESCAPES = {"|": "\\|", "`": "\\`", "<": "&lt;", ">": "&gt;", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]"}
_CELL_PATTERN = re.compile("|".join(re.escape(k) for k in _CELL_ESCAPES))


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell: no pipe, newline, code span or HTML (so no forged
    marker), and no control or bidi character (shown as `\\u202e`, so a name reads as it is)."""
    text = visible(" ".join(str(value).split()))
    return _CELL_PATTERN.sub(lambda m: _CELL_ESCAPES[m.group(0)], text)


def code_cell(value: object) -> str:
    """Identifiers shown as-is in a cell, still unable to break the table, open HTML or hide characters."""
    text = visible(" ".join(str(value).split()))
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("`", "'")
