"""Fold the state files of sharded reconcile jobs back into one.

Each matrix job of the sharded workflow reconciles its own specs and leaves its own copy of the
state file; the last job merges them into the checked-out one before it renders and commits:

    specs       one rule per record a shard changed from the base (`_merged_record`): which run
                is current is the shard's when it moved the spec to another run, else what the
                target holds (a shard that only learned more of a run never undoes a newer record
                of another job); what is known of one run (the commit credited with it, the run
                it replaced) only accumulates. A record a shard moved to the spec's new id (its
                file was renamed: the run is now in `moved`) leaves the old id, as it did in the shard
    markers     the union (a run's marker never changes once the run exists); two files that
                disagree about one run both lose it: the next read asks the platform, which
                alone knows (one of them was edited by hand)
    moved, run_agents, adopted, benchmark_ids
                the union: facts about one run or spec that no shard takes back (without the
                renames, the next edit of a renamed spec submitted beside its old run)
    intents     the union, less a base intent a shard settled (it recorded that spec's run with
                the intent's fingerprint); an intent left by a shard that died mid-submit stays
                and is adopted later
    rendered, generated
                the base's: shard jobs do not render; the last job does
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..settings import Project
from .state import SpecRecord, State


def merge_states(base: State, shards: Sequence[State], *, onto: State | None = None) -> tuple[State, list[str]]:
    """The merged state and the spec ids whose record changed (or left), sorted.

    What each shard changed from `base` is applied to `onto` (default: `base`): a job whose
    push was rejected applies its own changes to the state the other job pushed."""
    target = base if onto is None else onto
    specs = dict(target.specs)
    markers = dict(target.markers)
    facts: dict[str, dict[str, Any]] = {name: dict(getattr(target, name)) for name in _FACTS}
    intents = list(target.intents)
    conflicted: set[str] = set()
    for shard in shards:
        renamed = {run_id: spec_id for run_id, spec_id in shard.moved.items() if base.moved.get(run_id) != spec_id}
        for spec_id, record in base.specs.items():
            if renamed.get(record.run_id, spec_id) != spec_id and spec_id not in shard.specs:
                specs.pop(spec_id, None)
        for spec_id, record in shard.specs.items():
            if (start := base.specs.get(spec_id)) != record:
                merged_record = _merged_record(start, record, specs.get(spec_id))
                if merged_record is None:
                    specs.pop(spec_id, None)
                else:
                    specs[spec_id] = merged_record
        for run_id, marker in shard.markers.items():
            if base.markers.get(run_id) == marker and run_id in markers:
                continue  # not the shard's news: what the target holds stands
            if markers.get(run_id, marker) != marker:
                conflicted.add(run_id)
            markers[run_id] = marker
        for name in _FACTS:
            known = getattr(base, name)
            # only what the shard learned since the base: onto another job's state, an entry the
            # shard merely carried over must not undo that job's newer one
            facts[name].update({k: v for k, v in getattr(shard, name).items() if known.get(k) != v})
        settled = [
            intent
            for intent in base.intents
            if intent not in shard.intents
            and (done := shard.specs.get(intent.spec_id)) is not None
            and done.fingerprint == intent.fingerprint
        ]
        # a shard's own intents only: every shard starts from the base, so each lists the base's
        new = [i for i in shard.intents if i not in base.intents and i not in intents]
        intents = [i for i in intents if i not in settled] + new
    for run_id in conflicted:  # only positive facts are cached: an unknown marker is read again
        del markers[run_id]
    merged = target.model_copy(update={"specs": specs, "markers": markers, "intents": intents, **facts})
    changed = {s for s in specs.keys() | target.specs.keys() if specs.get(s) != target.specs.get(s)}
    return merged, sorted(changed)


def _merged_record(base: SpecRecord | None, mine: SpecRecord, theirs: SpecRecord | None) -> SpecRecord | None:
    """A spec's record after a shard changed it from `base` to `mine`, where the target holds
    `theirs` (None: no record).

    The current run is the shard's when the shard moved the spec to another run, or when the
    target still holds the base's record; otherwise the target's, which moved on (or dropped the
    record) after the base, and `mine` only learned more of the run it left behind: a job whose
    first plan rebuilt a record from the run's marker (no commit) would otherwise undo the
    credit the job that submitted the run pushed. Where both records name the same run, what
    either knows of it is kept (the target's where both know one): a lost commit is a pull
    request that never gets its results, a lost `replaced` one that never gets its last."""
    shards_news = base is None or mine.run_id != base.run_id or theirs == base
    current = mine if shards_news else theirs
    if current is None or theirs is None or theirs.run_id != mine.run_id:
        return current
    return current.model_copy(
        update={"commit": theirs.commit or mine.commit, "replaced": theirs.replaced or mine.replaced}
    )


_FACTS = ("moved", "run_agents", "adopted", "benchmark_ids")


def reapply_own_changes(project: Project, since: str, upto: str) -> list[str]:
    """After a rejected push, put back on the state file now checked out (the other job's) what
    this job's commits `since..upto` changed in it: a rebase that conflicted on the state file
    resets to the other job's copy, which knows nothing of the runs this job submitted (their
    records, the commits they are credited to). Returns the spec ids put back."""
    from ..safe_paths import writable_path
    from ..vcs.commit import committed_text
    from .state import load_state, save_state, state_from_text

    rel = project.settings.state_file
    path = writable_path(project.root, rel)
    mine_text = committed_text(project.root, rel, upto)
    if mine_text is None:
        return []
    start_text = committed_text(project.root, rel, since)
    start = state_from_text(start_text, path) if start_text is not None else State()
    merged, changed = merge_states(start, [state_from_text(mine_text, path)], onto=load_state(path))
    save_state(path, merged, below=project.root)
    return changed
