"""Which spec ids can exist: the one rule shared by the loader and the ownership marker.

A spec id comes from `[reconcile] id` or from the file's path under the specs dir, so it
may hold spaces, `@` and any letter. It travels to the platform inside the run's
environment and must come back unchanged, so it may not be empty and may not hold
characters that do not survive as text (control characters, lone surrogates, line and
paragraph separators). It is also what a reviewer reads in a plan, so it may not hold
invisible formatting characters either: a right-to-left override (U+202E) in a file name
would make the plan show another id than the one it acts on.
"""

from __future__ import annotations

import unicodedata

MAX_SPEC_ID_LENGTH = 512
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_INVISIBLE = "Cf"  # bidirectional overrides and isolates, zero-width characters, soft hyphens


def spec_id_problem(spec_id: str) -> str | None:
    """Why `spec_id` cannot be a spec id, or None when it can."""
    if not spec_id.strip():
        return "is empty"
    if len(spec_id) > MAX_SPEC_ID_LENGTH:
        return f"is longer than {MAX_SPEC_ID_LENGTH} characters"
    for ch in spec_id:
        category = unicodedata.category(ch)
        if category in _UNSAFE_CATEGORIES:
            return f"holds the control character U+{ord(ch):04X}"
        if category == _INVISIBLE:
            return f"holds the invisible formatting character U+{ord(ch):04X}, which hides what a plan shows"
    return None
