"""Indented JSON written a piece at a time, byte for byte what `json.dumps(indent=2, sort_keys=True)` gives.

`plan --format json` prints a document of 1,000 actions. `json.dump` would hand the stream some
70,000 fragments (each a call through `sys.stdout`), and `json.dumps` would hold the whole text
(2 MiB for such a plan) at once. Here each item of the top level's lists is encoded on its own
and written in one call, then let go.
"""

from __future__ import annotations

import json
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
    # a JSON text holds no raw line break (strings escape theirs), so each one starts a line to indent
    return json.dumps(value, indent=2, sort_keys=True).replace("\n", "\n" + INDENT * level)
