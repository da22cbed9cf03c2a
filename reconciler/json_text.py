"""JSON read from outside the process (the platform's answers, GitHub's event file, our own files
that anyone may edit): one rule for what counts as malformed.

`json.loads` raises RecursionError, not ValueError, for arrays or objects nested deeper than the
interpreter's stack allows (a 200 KB file of `[` does it); every reader here treats that like
any other malformed input, so no such file can turn into an internal error.
"""

from __future__ import annotations

import json
from typing import Any


def loads(data: str | bytes) -> Any:
    """`json.loads`, but nesting too deep to parse is a ValueError like any other malformed input."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("nested too deeply to read") from None
