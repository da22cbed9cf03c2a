"""Indented JSON written a piece at a time, byte for byte what `json.dumps(indent=2, sort_keys=True)` gives.

`plan --format json` prints a document of 1,000 actions. `json.dump` would hand the stream some
70,000 fragments (each a call through `sys.stdout`), and `json.dumps` would hold the whole text
(2 MiB for such a plan) at once. Here each item of the top level's lists is encoded on its own
and written in one call, then let go.
"""

from __future__ import annotations

import json
import math
from typing import Any, TextIO

INDENT = "  "


def write_indented(value: Any, out: TextIO) -> None:
    """`out.write(json.dumps(value, indent=2, sort_keys=True))`, written item by item."""
    if not isinstance(value, dict) or not value or not all(isinstance(k, str) for k in value):
        out.write(_dumps(value, 0))  # a key that is not a string sorts and prints as json does
        return
    out.write("{")
    for n, (key, item) in enumerate(sorted(value.items())):
        head = f"{',' if n else ''}\n{INDENT}{json.dumps(key)}: "
        if isinstance(item, list) and item:
            out.write(head + "[")
            for m, element in enumerate(item):
                out.write(f"{',' if m else ''}\n{INDENT * 2}{_dumps(element, 2)}")
            out.write(f"\n{INDENT}]")
        else:
            out.write(head + _dumps(item, 1))
    out.write("\n}")


def _dumps(value: Any, level: int) -> str:
    """`json.dumps(value, indent=2, sort_keys=True)`, indented to start at `level`.

    Python's encoder has no C path once it indents: a plan of 1,000 actions took 24-52 ms there.
    Values made only of dicts with string keys, lists, tuples, strings, ints, floats, booleans
    and None (every plan document) are joined here from C-encoded strings in a third of that;
    anything else (a subclass, a key that is not a string, a cycle) goes to `json.dumps`."""
    parts: list[str] = []
    try:
        _encode(value, level, parts)
    except (_Unusual, RecursionError):
        # a JSON text holds no raw line break (strings escape theirs), so each one starts a line to indent
        return json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n" + INDENT * level)
    return "".join(parts)


class _Unusual(Exception):
    pass


_string = json.encoder.encode_basestring_ascii  # C, and what json.dumps uses with ensure_ascii


def _encode(value: Any, level: int, parts: list[str]) -> None:
    kind = type(value)
    if kind is list or kind is tuple:
        if not value:
            parts.append("[]")
            return
        inner = "\n" + INDENT * (level + 1)
        head = "[" + inner
        for element in value:
            scalar = _scalar(element)
            if scalar is None:
                parts.append(head)
                _encode(element, level + 1, parts)
            else:
                parts.append(head + scalar)
            head = "," + inner
        parts.append("\n" + INDENT * level + "]")
    elif kind is dict:
        if not value:
            parts.append("{}")
            return
        if not all(type(key) is str for key in value):
            raise _Unusual  # json converts such keys to strings before it writes them
        inner = "\n" + INDENT * (level + 1)
        head = "{" + inner
        for key in sorted(value):
            element = value[key]
            scalar = _scalar(element)
            if scalar is None:
                parts.append(head + _string(key) + ": ")
                _encode(element, level + 1, parts)
            else:
                parts.append(head + _string(key) + ": " + scalar)
            head = "," + inner
        parts.append("\n" + INDENT * level + "}")
    else:
        scalar = _scalar(value)
        if scalar is None:
            raise _Unusual
        parts.append(scalar)


def _scalar(value: Any) -> str | None:
    """A string, number, boolean or null as json.dumps spells it; None for anything else."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    if kind is float:
        return _float(value)
    return None


def _float(number: float) -> str:
    # json.dumps's own spelling, allow_nan included
    if number != number:
        return "NaN"
    if number == math.inf:
        return "Infinity"
    if number == -math.inf:
        return "-Infinity"
    return float.__repr__(number)
