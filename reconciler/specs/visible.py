"""Characters that change how text reads without being seen, made visible.

A run, model or spec name is text from someone else. Bidi overrides and isolates (U+202A-U+202E,
U+2066-U+2069) and bidi marks reorder what follows them, so `evil\u202eexe.txt` reads as
`evil` + `txt.exe`; a raw newline in a key name lets a spec print a forged line of `validate`
output; terminal escapes recolour or erase it; a zero-width space makes `run.toml` and
`run\u200b.toml` two specs that read the same. Each such character is shown as its escape
(`\\u202e`, `\\n`, `\\x1b`) instead, so what a reader sees is what is there.
"""

from __future__ import annotations

import re

# The bidi marks, embeddings, overrides and isolates, and the line and paragraph separators
# (a new line to many viewers); the characters that take no space at all (soft hyphen, zero
# width space, joiners, word joiner and invisible operators, byte-order mark), so two names that
# differ by one of them never look the same; then DEL and the C1 controls, then the C0 controls.
_FORMAT = (
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\x7f-\x9f"
)
_ALL = re.compile(f"[{_FORMAT}\x00-\x1f]")
# Where line breaks and tabs carry no meaning an attacker can use (HTML, where they are
# whitespace, and `<pre>` logs, where they are the log's own), tab, LF and CR stay.
_BUT_WHITESPACE = re.compile(f"[{_FORMAT}\x00-\x08\x0b\x0c\x0e-\x1f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control, bidi and line-separator character written as its escape."""
    return _ALL.sub(_shown, text)


def visible_keep_whitespace(text: str) -> str:
    """As `visible`, but tab, newline and carriage return stay (for HTML and multi-line logs)."""
    return _BUT_WHITESPACE.sub(_shown, text)
