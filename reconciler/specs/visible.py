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

# Every character Unicode 14 (Python 3.11's tables) files as an invisible format control (Cf):
# the bidi marks, embeddings, overrides and isolates, zero-width spaces and joiners, the soft
# hyphen, word joiner and invisible operators, the byte-order mark, the tag characters; then
# what else takes no room of its own: variation selectors, the combining grapheme joiner and
# the Hangul fillers; the line and paragraph separators (a new line to many viewers); DEL and
# the C1 controls. `_ALL` adds the C0 controls.
_FORMAT = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef"
    "\u2028\u2029\x7f-\x9f"
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
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """`text` with every control, bidi and line-separator character written as its escape."""
    return _ALL.sub(_shown, text)


def visible_keep_whitespace(text: str) -> str:
    """As `visible`, but tab, newline and carriage return stay (for HTML and multi-line logs)."""
    return _BUT_WHITESPACE.sub(_shown, text)
