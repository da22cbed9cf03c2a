"""Limits a spec must respect before it is parsed at all.

A TOML parser and everything after it (the position scanner, pydantic, deep copies) work in
time and memory that grow with a document's size and with how deep its keys and values nest:
a 200 KB file holding one dotted key of 100,000 parts costs tens of gigabytes, and arrays
nested 500 deep overflow the interpreter's stack. Real specs are a few kilobytes and a handful
of levels deep, so the limits below sit far above any of them and far below any harm.

`check_depth` is a single regular-expression pass over the text: strings and comments are
skipped whole, and only the tokens that change depth (brackets, braces, dots in keys, `=`,
`,`, newlines) are looked at. It need not be a full TOML grammar: it runs before the parser,
which still reports every syntax error; it only has to count depth the way the parser nests.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

MAX_SPEC_BYTES = 1024 * 1024
MAX_DEPTH = 64

_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?"""(?!")'  # multi-line basic string
    r"|'''.*?'''(?!')"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*"'  # basic string
    r"|'[^'\n]*'"  # literal string
    r"|#[^\n]*"  # comment
    r"|[\[\]{}.=,\n]",
    re.DOTALL,
)


class BoundExceeded(BaseModel):
    """Where a document first goes deeper than allowed: 1-based line and column, and why."""

    model_config = ConfigDict(frozen=True)

    line: int
    col: int
    message: str


def check_depth(text: str, limit: int = MAX_DEPTH) -> BoundExceeded | None:
    """The first place where keys plus nested values go deeper than `limit`, or None.

    Depth counts what the parsed document would nest: the parts of a table header, then the
    parts of a dotted key under it, then one level per array or inline table around a value.
    """
    # every level past a key's first part is a `.`, `[` or `{` somewhere in the text (the
    # header's first part is its `[`): a document with fewer of them cannot go deeper, and
    # counting three characters costs about a microsecond where the scan costs 30-50
    if text.count(".") + text.count("[") + text.count("{") + 1 <= limit:
        return None
    return scan_depth(text, limit)


def scan_depth(text: str, limit: int = MAX_DEPTH) -> BoundExceeded | None:
    """`check_depth` by a full scan of the tokens, without the shortcut for small documents."""
    # Each open `[`/`{` of a value remembers the depth its contents start at and whether
    # its contents are keys (inline table) or values (array).
    stack: list[tuple[int, bool]] = []
    table_depth = 0  # parts of the last top-level [table] header
    base = 0  # depth at which the key being read starts
    parts = 1  # parts of the key being read so far
    in_key = True
    in_header = False
    at_line_start = True
    for match in _TOKENS.finditer(text):
        token = match.group()
        depth = 0
        if token[0] in "\"'#":
            at_line_start = False
            continue
        if token == "\n":
            if not stack and not in_header:
                in_key, base, parts, at_line_start = True, table_depth, 1, True
            continue
        if token == "." and (in_key or in_header):
            parts += 1
            depth = base + parts
        elif token == "[" and not stack and in_key and at_line_start:
            in_header, parts, base = True, 1, 0
        elif token == "]" and in_header:
            if not text.startswith("]", match.end()):  # `]]` closes an array-of-tables header
                in_header, table_depth = False, parts
                in_key, base, parts = True, table_depth, 1
        elif token == "=" and in_key:
            in_key = False
            depth = base + parts
        elif token in "[{" and not in_key:
            inner = (stack[-1][0] if stack and not stack[-1][1] else base + parts) + 1
            stack.append((inner, token == "{"))
            depth = inner
            if token == "{":
                in_key, base, parts = True, inner - 1, 1
        elif token in "]}" and stack:
            stack.pop()
            in_key = False
            if stack and stack[-1][1]:
                # back inside an inline table: the next `,` starts a key at that table's depth
                base, parts = stack[-1][0] - 1, 1
        elif token == "," and stack and stack[-1][1]:
            in_key, base, parts = True, stack[-1][0] - 1, 1
        at_line_start = False
        if depth > limit:
            line = text.count("\n", 0, match.start()) + 1
            col = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            return BoundExceeded(
                line=line,
                col=col,
                message=f"nests deeper than {limit} levels (keys and values together); flatten it",
            )
    return None
