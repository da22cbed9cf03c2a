"""Which names a leaderboard marker block can have: one rule for `validate` and for finding markers.

The name sits in `<!-- reconciler:leaderboard NAME -->`. Whitespace would end it early, `>` would
end the comment, and `--` is not allowed inside an HTML comment (Markdown then shows the line as
text). A `[leaderboard] name` holding any of them could never match its marker, and render would
ask for the very lines already in the file.
"""

from __future__ import annotations

import re

# the name inside a marker comment, for render/markers.py's pattern: no whitespace, no `>`, no `--`
MARKER_NAME_PATTERN = r"(?:[^\s>-]|-(?!-))+"
MARKER_NAME_RULE = "use printable characters other than whitespace and >, with no -- (such as tb-main or hle@v2)"
_WHOLE_NAME = re.compile(MARKER_NAME_PATTERN)


def marker_name_problem(name: str) -> str | None:
    """Why `name` cannot be a marker block's name, or None when it can."""
    # printable too: an invisible or bidi character would make the marker read as another name
    if _WHOLE_NAME.fullmatch(name) is None or not name.isprintable():
        return f"{name!r} cannot name a marker block; {MARKER_NAME_RULE}"
    return None
