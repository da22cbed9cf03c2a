"""`apply --replace SPEC_ID`: submit a spec's current config again, on purpose.

Normally a config that already has a run is never submitted again (a failed or stopped run
stays as it is until the spec changes). A replace request overrides exactly that, for the
named specs and this apply only: an active run of the config is stopped first (so the spec's
`protect` applies), a terminal one is left as it is, and the new submit is paid like any other.
"""

from __future__ import annotations

from .world import ObservedRun

REASON = "replace requested"


def replace_reason(latest: ObservedRun) -> str:
    if latest.active:
        return f"{REASON}: stop {latest.name} ({latest.status}), submit the same config again"
    return f"{REASON}: {latest.name} is {latest.status}; submit the same config again"
