"""Markdown outside its code spans: where GitHub turns text into links, images, emphasis and @mentions.

A name (a spec id, a path) is inert in a comment only inside a code span. `assert_inert` renders
the same comment from hostile names and from plain ones and checks that, outside code spans,
the two read alike: the hostile names added no link, image, emphasis, mention or comment end.
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")
# a link destination, `](...)`: the URL is the comment's own (its path percent-encoded); a `)` or
# a space a name forged into it would end it early, and the rest would differ below
_DESTINATION = re.compile(r"\]\([^()\s]*\)")
# what a name may never add outside a code span: an image, a link, bold, strikethrough, an
# @mention, an HTML tag, comment or entity end, an autolink
DANGEROUS = re.compile(r"!\[|\]\(|\*\*|~~|@[\w-]|<|-->|https?:|www\.")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def outside_code_spans(markdown: str) -> str:
    """`markdown` with each code span replaced by `CODE` (CommonMark: a run of n backticks up to the
    next run of exactly n; within one line here, which is stricter than a paragraph)."""
    lines = []
    for line in markdown.split("\n"):
        out: list[str] = []
        at = 0
        while (opening := _BACKTICKS.search(line, at)) is not None:
            if opening.start() > 0 and line[opening.start() - 1] == "\\":  # `\``: a literal backtick
                out.append(line[at : opening.start() + 1])
                at = opening.start() + 1
                continue
            closing = next(
                (m for m in _BACKTICKS.finditer(line, opening.end()) if len(m.group()) == len(opening.group())), None
            )
            if closing is None:  # no closing run: the backticks are text
                out.append(line[at : opening.end()])
                at = opening.end()
                continue
            out.append(line[at : opening.start()] + "CODE")
            at = closing.end()
        out.append(line[at:])
        lines.append("".join(out))
    return "\n".join(lines)


def _shape(markdown: str) -> str:
    return _DESTINATION.sub("](URL)", outside_code_spans(markdown))


def assert_inert(hostile: str, plain: str) -> None:
    """`hostile` (a comment made from hostile names) holds them only inside code spans: outside
    them it reads as `plain` (the same comment from plain names), with no more dangerous
    constructs, and each table row keeps its cells (a `|` in a code span splits a GFM row)."""
    shown, expected = _shape(hostile), _shape(plain)
    assert DANGEROUS.findall(shown) == DANGEROUS.findall(expected), shown
    assert shown == expected
    rows = [line for line in hostile.split("\n") if line.startswith("|")]
    plain_rows = [line for line in plain.split("\n") if line.startswith("|")]
    assert [len(_UNESCAPED_PIPE.findall(r)) for r in rows] == [len(_UNESCAPED_PIPE.findall(r)) for r in plain_rows]
