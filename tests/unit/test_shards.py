"""The shards of the scheduled job, and the state files of shard jobs folded back into one."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from reconciler.core.identity import Marker
from reconciler.core.shards import OLD_WORKFLOW_TARGET, Shard, by_benchmark, by_spec_id, matrix_json
from reconciler.core.world import RunAgents
from reconciler.engine.shard_state import merge_states
from reconciler.engine.state import Intent, Replaced, SpecRecord, State
from reconciler.specs.spec_ids import spec_id_problem

spec_ids = st.sets(st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), max_size=60)


def test_one_shard_per_benchmark_in_ref_order() -> None:
    shards = by_benchmark(
        [("tb-smoke", "terminal-bench-2-1"), ("hle-parity", "hle"), ("tb-compare", "terminal-bench-2-1")]
    )
    assert shards == [
        Shard(name="hle-721c8aa9", targets=("hle-parity",)),
        Shard(name="terminal-bench-2-1-7e2d31cc", targets=("tb-compare", "tb-smoke")),
    ]


def test_a_benchmark_ref_becomes_a_lowercase_name_fit_for_a_concurrency_group() -> None:
    [shard] = by_benchmark([("a", "Org/Bench 2")])
    assert shard.name == "org-bench-2-be4011c8"


def test_refs_that_clean_up_to_the_same_name_stay_apart() -> None:
    names = [s.name for s in by_benchmark([("a", "x/y"), ("b", "x y")])]
    assert len(set(names)) == 2


def test_a_ref_that_cleans_up_to_another_refs_numbered_name_stays_apart() -> None:
    # numbered in ref order, `a/b` became `a-b-2`, which `a-b-2` was already named
    names = [s.name for s in by_benchmark([("s1", "a/b"), ("s2", "a-b"), ("s3", "a-b-2")])]
    assert len(set(names)) == 3


# any text TOML can hold (no lone surrogate), often one that cleans up like another ref: case, `/`, `@`, `-`, digits
refs = st.text(st.sampled_from("aAbB/-_ .@12") | st.characters(exclude_categories=["Cs"]), max_size=12)


@given(st.sets(refs, max_size=20))
def test_no_two_benchmarks_share_a_shard_name_even_ignoring_case(benchmarks: set[str]) -> None:
    names = [s.name for s in by_benchmark((f"spec-{i}", ref) for i, ref in enumerate(benchmarks))]
    assert len({n.casefold() for n in names}) == len(benchmarks)


@given(st.sets(refs, max_size=20), refs)
def test_a_benchmark_that_comes_renames_no_other_benchmarks_shard(benchmarks: set[str], new: str) -> None:
    def names(refs: set[str]) -> dict[str, str]:
        return {s.targets[0]: s.name for s in by_benchmark((ref, ref) for ref in refs)}  # the ref as its spec id

    before, after = names(benchmarks), names(benchmarks | {new})
    assert {ref: after[ref] for ref in before} == before


@given(refs)
def test_a_shard_name_holds_only_lowercase_letters_digits_and_dashes(ref: str) -> None:
    [shard] = by_benchmark([("a", ref)])
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", shard.name)


@given(spec_ids, st.integers(min_value=1, max_value=9))
def test_every_spec_lands_in_exactly_one_nonempty_shard(ids: set[str], count: int) -> None:
    shards = by_spec_id(ids, count)
    placed = [t for s in shards for t in s.targets]
    assert sorted(placed) == sorted(ids)
    assert all(s.targets for s in shards) and len(shards) <= count


@given(spec_ids, st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True), st.integers(min_value=1, max_value=9))
def test_adding_a_spec_moves_no_other_spec(ids: set[str], new: str, count: int) -> None:
    def where(shards: list[Shard]) -> dict[str, str]:
        return {t: s.name for s in shards for t in s.targets}

    before, after = where(by_spec_id(ids, count)), where(by_spec_id(ids | {new}, count))
    assert {k: after[k] for k in before} == before


def test_zero_shards_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        by_spec_id(["a"], 0)


def test_the_matrix_is_githubs_include_list_with_one_target_a_line() -> None:
    text = matrix_json([Shard(name="tb", targets=("runs/smoke tb-smoke", "tb-smoke"))])
    assert json.loads(text) == {
        "include": [{"shard": "tb", "ids": "runs/smoke tb-smoke\ntb-smoke", "targets": OLD_WORKFLOW_TARGET}]
    }
    assert "\n" not in text


@given(st.lists(st.text(min_size=1, max_size=30).filter(lambda i: spec_id_problem(i) is None), min_size=1, unique=True))
def test_every_spec_id_the_loader_accepts_comes_back_from_the_matrix_as_one_target(ids: list[str]) -> None:
    # the workflow reads `targets` with `mapfile -t`: one --target per line
    [entry] = json.loads(matrix_json([Shard(name="s", targets=tuple(ids))]))["include"]
    assert entry["ids"].split("\n") == ids


def test_no_specs_give_an_empty_include_list() -> None:
    assert json.loads(matrix_json(by_benchmark([]))) == {"include": []}


def record(run: str, commit: str | None = None) -> SpecRecord:
    return SpecRecord(run_id=run, run_name=f"name-{run}", fingerprint="f", commit=commit)


def marker(spec: str) -> Marker:
    return Marker(owner="acme/evals", spec_id=spec, fingerprint="f")


def test_merged_state_takes_each_shards_new_records_and_keeps_the_rest() -> None:
    base = State(specs={"a": record("1"), "b": record("2"), "c": record("3")}, rendered={"tb": "digest"})
    one = base.model_copy(update={"specs": {**base.specs, "a": record("10", "m" * 40)}, "markers": {"10": marker("a")}})
    two = base.model_copy(update={"specs": {**base.specs, "b": record("20")}, "markers": {"20": marker("b")}})
    merged, changed = merge_states(base, [one, two])
    assert merged.specs == {"a": record("10", "m" * 40), "b": record("20"), "c": record("3")}
    assert set(merged.markers) == {"10", "20"}
    assert merged.rendered == {"tb": "digest"}
    assert changed == ["a", "b"]


def test_an_intent_left_by_a_shard_survives_the_merge_once() -> None:
    intent = Intent(spec_id="a", fingerprint="f")
    shard = State(intents=[intent])
    merged, _ = merge_states(State(), [shard, shard])
    assert merged.intents == [intent]


def test_merging_nothing_changes_nothing() -> None:
    base = State(specs={"a": record("1")})
    assert merge_states(base, []) == (base, [])


def test_two_state_files_that_disagree_about_a_runs_marker_both_lose_it() -> None:
    # a run's marker never changes: one of the two was edited by hand, and only the platform knows
    ours = Marker(owner="acme/evals", spec_id="tb-compare", fingerprint="f" * 16)
    forged = ours.model_copy(update={"spec_id": "other"})
    kept = Marker(owner="acme/evals", spec_id="hle", fingerprint="e" * 16)
    base = State(markers={"r1": ours, "r2": kept})
    merged, _ = merge_states(base, [State(markers={"r1": forged, "r2": kept})])
    assert merged.markers == {"r2": kept}


def test_a_rename_recorded_by_a_shard_survives_the_merge_and_leaves_the_old_id() -> None:
    """Without the rename, the next edit of the renamed spec submitted beside its old run."""
    base = State(specs={"runs/a": record("1"), "runs/c": record("3")})
    shard = State(specs={"runs/b": record("1"), "runs/c": record("3")}, moved={"1": "runs/b"})
    merged, changed = merge_states(base, [shard])
    assert merged.moved == {"1": "runs/b"}
    assert merged.specs == {"runs/b": record("1"), "runs/c": record("3")}
    assert changed == ["runs/a", "runs/b"]


def test_a_shard_that_knew_nothing_of_a_record_leaves_it_alone() -> None:
    base = State(specs={"runs/a": record("1"), "runs/z": record("9")})
    merged, _ = merge_states(base, [State(specs={"runs/a": record("1")})])
    assert merged.specs == base.specs  # a shard owns some specs only: absence is no deletion


def test_facts_about_runs_from_every_shard_are_kept() -> None:
    agents = RunAgents(selection=False, agents=(("codex", "openai/gpt-5"),))
    one = State(run_agents={"r1": agents}, adopted={"r7": "runs/old"}, benchmark_ids={"tb": "b-1"})
    two = State(moved={"r2": "runs/b"})
    merged, _ = merge_states(State(), [one, two])
    assert (merged.run_agents, merged.adopted, merged.moved, merged.benchmark_ids) == (
        {"r1": agents},
        {"r7": "runs/old"},
        {"r2": "runs/b"},
        {"tb": "b-1"},
    )


def test_an_intent_a_shard_settled_is_not_brought_back() -> None:
    intent = Intent(spec_id="a", fingerprint="f")
    base = State(intents=[intent])
    merged, _ = merge_states(base, [State(specs={"a": record("1")})])
    assert merged.intents == [] and merged.specs == {"a": record("1")}


def test_an_intent_one_shard_settled_is_not_brought_back_by_another_that_never_touched_it() -> None:
    intent = Intent(spec_id="a", fingerprint="f")
    base = State(intents=[intent])
    owner = State(specs={"a": record("1")})
    other = State(intents=[intent], specs={"b": record("2")})  # it started from the same base
    for order in ([owner, other], [other, owner]):
        merged, _ = merge_states(base, order)
        assert merged.intents == []


def test_a_job_applying_its_changes_onto_anothers_state_never_undoes_that_jobs_newer_facts() -> None:
    start = State(moved={"r1": "runs/b"}, benchmark_ids={"hle": "B1"}, specs={"a": record("1")})
    ours = start.model_copy(update={"specs": {"a": record("1"), "n": record("5", "c" * 40)}})
    theirs = State(moved={"r1": "runs/c"}, benchmark_ids={"hle": "B2"}, specs={"a": record("1")})
    merged, changed = merge_states(start, [ours], onto=theirs)
    assert (merged.moved, merged.benchmark_ids) == ({"r1": "runs/c"}, {"hle": "B2"})
    assert merged.specs == {"a": record("1"), "n": record("5", "c" * 40)} and changed == ["n"]


def test_a_job_that_only_rebuilt_a_record_keeps_the_commit_the_submitting_job_pushed() -> None:
    # the other job submitted r2 and credited it; this job rebuilt r2's record from its marker (no commit)
    start = State(specs={"x": record("r1", "c0")})
    ours = State(specs={"x": record("r2")})
    theirs = State(specs={"x": record("r2", "S1")})
    merged, changed = merge_states(start, [ours], onto=theirs)
    assert merged.specs == {"x": record("r2", "S1")} and changed == []


def test_a_job_that_only_credited_a_run_never_undoes_the_other_jobs_newer_run() -> None:
    start = State(specs={"x": record("r1")})
    ours = State(specs={"x": record("r1", "c1")})
    theirs = State(specs={"x": record("r2", "S1")})
    merged, _ = merge_states(start, [ours], onto=theirs)
    assert merged.specs == {"x": record("r2", "S1")}


def test_a_job_that_replaced_a_run_keeps_its_record_over_the_one_it_started_from() -> None:
    start = State(specs={"x": record("r1", "c0")})
    ours = State(specs={"x": record("r2", "c2")})
    merged, changed = merge_states(start, [ours], onto=start)
    assert merged.specs == {"x": record("r2", "c2")} and changed == ["x"]


def _record_of(run: str, commit: str | None, gone: Replaced | None) -> SpecRecord:
    return SpecRecord(run_id=run, run_name=f"name-{run}", fingerprint="f", commit=commit, replaced=gone)


records = st.builds(
    _record_of,
    st.sampled_from(["r1", "r2"]),
    st.sampled_from([None, "c0", "S1"]),
    st.sampled_from([None, Replaced(run_id="r0", run_name="name-r0", commit="c0")]),
)


@given(st.none() | records, records, st.none() | records)
def test_merging_a_changed_record_never_loses_a_commit_or_replaced_run_either_side_knew_of_the_run_kept(
    base: SpecRecord | None, mine: SpecRecord, theirs: SpecRecord | None
) -> None:
    assume(base != mine)  # a record the job left as it started is not its news: nothing of it is merged
    start = State(specs={"x": base} if base else {})
    onto = State(specs={"x": theirs} if theirs else {})
    merged = merge_states(start, [State(specs={"x": mine})], onto=onto)[0].specs.get("x")
    knew = [side for side in (mine, theirs) if side is not None and merged is not None and side.run_id == merged.run_id]
    if merged is None:  # only when origin dropped the record and this job moved it to no other run
        assert theirs is None and base is not None and mine.run_id == base.run_id
    else:
        assert knew  # the run kept is one of theirs or this job's, never the base's alone
    for side in knew:
        assert merged is not None
        assert side.commit is None or merged.commit is not None
        assert side.replaced is None or merged.replaced is not None
