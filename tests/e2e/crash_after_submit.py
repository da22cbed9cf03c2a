"""`reconciler` as a user runs it, except that the process dies (exit 70) right after the platform
accepted a submit and before the state file records it: the crash the adoption rule exists for.

    python tests/e2e/crash_after_submit.py apply --auto-approve ...
"""

from __future__ import annotations

import os
import sys

from reconciler import cli
from reconciler.engine.apply import Applier

CRASHED = 70


def _die(run_id: str) -> None:
    os._exit(CRASHED)


if __name__ == "__main__":
    Applier.after_submit = staticmethod(_die)
    cli.main(sys.argv[1:])
