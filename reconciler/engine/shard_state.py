"""Fold the state files of sharded reconcile jobs back into one.

Each matrix job of the sharded workflow reconciles its own specs and leaves its own copy of the
state file; the last job merges them into the checked-out one before it renders and commits:

    specs       a record a shard changed (another run, or a submitting commit) replaces the base
                record; shards own disjoint specs, and for the same spec the later file wins
    markers     the union (a run's marker never changes once the run exists); two files that
                disagree about one run both lose it: the next read asks the platform, which
                alone knows (one of them was edited by hand)
    benchmark_ids, intents
                the union (an intent left by a shard that died mid-submit is adopted later)
    rendered, generated
                the base's: shard jobs do not render; the last job does
"""

from __future__ import annotations

from collections.abc import Sequence

from .state import State


def merge_states(base: State, shards: Sequence[State]) -> tuple[State, list[str]]:
    """The merged state and the spec ids whose record changed, sorted."""
    specs = dict(base.specs)
    markers = dict(base.markers)
    benchmark_ids = dict(base.benchmark_ids)
    intents = list(base.intents)
    changed: set[str] = set()
    conflicted: set[str] = set()
    for shard in shards:
        for spec_id, record in shard.specs.items():
            if base.specs.get(spec_id) != record:
                specs[spec_id] = record
                changed.add(spec_id)
        for run_id, marker in shard.markers.items():
            if markers.get(run_id, marker) != marker:
                conflicted.add(run_id)
            markers[run_id] = marker
        benchmark_ids.update(shard.benchmark_ids)
        intents += [i for i in shard.intents if i not in intents]
    for run_id in conflicted:  # only positive facts are cached: an unknown marker is read again
        del markers[run_id]
    merged = base.model_copy(
        update={"specs": specs, "markers": markers, "benchmark_ids": benchmark_ids, "intents": intents}
    )
    return merged, sorted(changed)
