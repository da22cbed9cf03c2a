"""Which spec ids can exist: the one rule shared by the loader and the ownership marker.

A spec id comes from `[reconcile] id` or from the file's path under the specs dir, so it
may hold spaces, `@` and any letter. It travels to the platform inside the run's
environment and must come back unchanged, so it may not be empty and may not hold
characters that do not survive as text (control characters, lone surrogates, line and
paragraph separators). It is also what a reviewer reads in a plan, so it may not hold
invisible formatting characters either: a right-to-left override (U+202E) in a file name
would make the plan show another id than the one it acts on.

Nor may it hold a comma or begin or end with whitespace: the reconcile workflow's dispatch inputs
`targets` and `replace` are one line of text (GitHub's input box), a list of ids split on commas
with the spaces around each trimmed. An id that a comma or a trim could change would be read as
other ids there: `replace: "runs/a,b"` replacing `runs/a` (paid).

An id with a word that mixes Latin, Cyrillic and Greek letters is accepted with a warning
(`spec_id_warning`): those scripts share letters that look the same (Latin `o`, Cyrillic `о`,
Greek `ο`), so such an id can look like another one in a plan. Words in one script each
(`runs/тест`, a Russian name in the runs folder) are not flagged.
"""

from __future__ import annotations

import unicodedata

MAX_SPEC_ID_LENGTH = 512
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_INVISIBLE = "Cf"  # bidirectional overrides and isolates, zero-width characters, soft hyphens
_LOOKALIKE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")  # as Unicode names their letters
_LIST_SEPARATOR = ","  # of ids in the reconcile workflow's dispatch inputs


def spec_id_problem(spec_id: str) -> str | None:
    """Why `spec_id` cannot be the id of a spec, or None when it can."""
    problem = marker_spec_id_problem(spec_id)
    if problem is not None:
        return problem
    for ch in spec_id:
        if unicodedata.category(ch) == _INVISIBLE:
            return f"holds the invisible formatting character U+{ord(ch):04X}, which hides what a plan shows"
    if _LIST_SEPARATOR in spec_id:
        return "holds a comma, which separates spec ids in the reconcile workflow's `targets` and `replace` inputs"
    if spec_id != spec_id.strip():
        return "begins or ends with whitespace, which the reconcile workflow's `targets` and `replace` inputs trim"
    return None


def marker_spec_id_problem(spec_id: str) -> str | None:
    """Why `spec_id` cannot come back from the platform in a marker, or None when it can.

    Looser than `spec_id_problem`: a marker is a fact about a run that exists, written perhaps
    by a version that accepted invisible characters; refusing it would make that run nobody's,
    and its config would be submitted again. Plans show such ids with escapes (specs/visible.py).
    """
    if not spec_id.strip():
        return "is empty"
    if len(spec_id) > MAX_SPEC_ID_LENGTH:
        return f"is longer than {MAX_SPEC_ID_LENGTH} characters"
    for ch in spec_id:
        if unicodedata.category(ch) in _UNSAFE_CATEGORIES:
            return f"holds the control character U+{ord(ch):04X}"
    return None


def spec_id_warning(spec_id: str) -> str | None:
    """Why `spec_id` may mislead a reviewer though it is a valid id (a word, a run of letters,
    that mixes Latin, Cyrillic and Greek letters), or None. Words are judged one by one: in
    `runs/тест` the folder is Latin and the name Cyrillic, and nothing looks like anything else."""
    if spec_id.isascii():  # Latin letters only: most ids, and a plan loads a thousand of them
        return None
    first: str | None = None
    for ch in spec_id:
        if not ch.isalpha():
            first = None  # a new word starts after any non-letter
            continue
        script = next((s for s in _LOOKALIKE_SCRIPTS if unicodedata.name(ch, "").startswith(s + " ")), None)
        if script is None:
            continue
        if first is None:
            first = script
        elif script != first:
            letter = f"U+{ord(ch):04X} {unicodedata.name(ch)}"
            return (
                f"mixes {first.title()} and {script.title()} letters in one word ({letter}), so it can look"
                " like another id in a plan; spell each word in one script"
            )
    return None
