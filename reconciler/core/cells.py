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
    """An identifier as an inert Markdown code span (`` `runs/tb smoke@1` ``; "" for no text).

    A spec id or path is a file name, so it may read `![No changes](x.png)`, `[Approved](..)`,
    `**b**` or `@octo-org/team`; a code span is the one container GitHub never turns into an
    image, link, emphasis or mention. Inside it: a backtick (which would close the span) becomes
    `'`; `|` becomes `\\|`, which GFM resolves at the table level, so the span cannot split a
    table row; `<` and `>` stay entities, so the same text is safe inside an HTML comment (a raw
    `-->` would end it); control and bidi characters are shown as escapes."""
    return code_span(str(value).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;"))


def code_span(value: object) -> str:
    """Text as an inert code span in a Markdown line that is no table row and no HTML comment
    (a run's failure reason from its logs): only a backtick, which would close it, becomes `'`, so
    `<module>` and `a | b` read as they are (in a code span GitHub decodes no `&lt;` or `\\|`)."""
    text = visible(" ".join(str(value).split()))
    return f"`{text.replace('`', chr(39))}`" if text else ""
