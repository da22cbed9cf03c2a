"""Reading what each spec's `[reconcile] adopt` names: one run-detail request per adopting spec.

The decision (does the run become the spec's?) is core/adopt.py's; this module fetches the
run's submitted config, records an adoption in the state file (a cache: git holds `adopt`),
and marks adopted runs as owned in the observed world.
"""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from ..core import adopt
from ..core.identity import FINGERPRINT_LENGTH, canonical_json
from ..core.world import Adoption, Desired, DesiredRun, Observed, ObservedRun
from ..osmosis.client import OsmosisClient
from ..osmosis.errors import NotFound
from ..outputs.layout import run_dir_name, types_on_disk
from .observe import marker_of, observed_run
from .state import SpecRecord, State


def payload_fingerprint(payload: object) -> str:
    """The fingerprint `core.identity.fingerprint` gives a config whose payload is this one."""
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()[:FINGERPRINT_LENGTH]


def adoption_entry(spec_id: str, run_fingerprint: str) -> str:
    """What `State.adopted` keeps for a run the spec adopted: `<spec id>@<the run's own config
    fingerprint>`. Once recorded, the run is the spec's even after a config edit (a replace stops
    it), and an unmarked run carries no marker to say so: the entry counts only for the very run
    whose config matched the spec when it was adopted. One added by hand that names another run
    (or an entry of an older reconciler, without the fingerprint) counts for nothing, and the
    config must match again."""
    return f"{spec_id}@{run_fingerprint}"


async def _adoption(client: OsmosisClient, d: DesiredRun, observed: Observed, state: State) -> Adoption:
    ref = d.spec.reconcile.adopt
    assert ref is not None
    known = next((r for r in observed.runs if ref in (r.id, r.name)), None)
    try:
        detail = await client.get_run(known.id if known else ref)
    except NotFound:
        return Adoption(spec_id=d.spec.id, ref=ref)
    run: ObservedRun = known or observed_run(detail.benchmark_run, None)
    payload = adopt.comparable_payload(detail.configuration.config)
    run_fingerprint = payload_fingerprint(payload)
    return Adoption(
        spec_id=d.spec.id,
        ref=ref,
        run=run.model_copy(update={"marker": None}),
        marker=marker_of(detail),
        differences=tuple(adopt.differences(payload, adopt.comparable_payload(d.spec.config.to_payload()))),
        fingerprint=run_fingerprint,
        recorded=state.adopted.get(run.id) == adoption_entry(d.spec.id, run_fingerprint),
        recorded_by_older=state.adopted.get(run.id) == d.spec.id,
    )


async def with_adoptions(
    client: OsmosisClient, desired: Desired, observed: Observed, state: State, outputs_root: Path
) -> Observed:
    """`observed` with each adopting spec's run looked up and, where it may be, claimed as owned."""
    adopting = [d for d in desired.runs if d.spec.reconcile.adopt]
    if not adopting:
        return observed
    found = await asyncio.gather(*(_adoption(client, d, observed, state) for d in adopting))
    adoptions = {a.spec_id: a for a in found}
    claimed = adopt.claim(
        observed.model_copy(update={"adoptions": adoptions}), {d.spec.id: d.fingerprint for d in desired.runs}
    )
    downloaded = dict(claimed.downloaded)
    for a in found:
        if a.run is None or adopt.blocker(a, observed.owner) is not None:
            continue
        marker = next(r.marker for r in claimed.runs if r.id == a.run.id and r.marker)
        # losing this record loses nothing: git holds `adopt`, the plan shows the import once more
        assert a.fingerprint is not None  # set with every run found (`_adoption`)
        state.adopted[a.run.id] = adoption_entry(a.spec_id, a.fingerprint)
        state.specs.setdefault(
            a.spec_id,
            SpecRecord(
                run_id=a.run.id, run_name=a.run.name, fingerprint=marker.fingerprint, benchmark_id=a.run.benchmark_id
            ),
        )
        if a.run.terminal and a.run.id not in downloaded:
            done = types_on_disk(outputs_root / run_dir_name(a.run.name, a.run.id), a.run.id)
            if done:
                downloaded[a.run.id] = done
    return claimed.model_copy(update={"downloaded": downloaded})
