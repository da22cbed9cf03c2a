"""A run's results.csv read per agent, and the paired comparison with the previous run of a spec."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.core import scoring
from reconciler.core.run_results import ResultsError, compare, comparisons, parse_results

HEADER = (
    "result_id,agent_index,harness,model,task_name,category,difficulty,attempt,outcome,score,"
    "duration_seconds,input_tokens,output_tokens,cost_usd,started_at,completed_at\n"
)


def row(agent: int, task: str, attempt: int, outcome: str, *, model: str = "m", harness: str = "codex") -> str:
    return f"r,{agent},{harness},{model},{task},c,easy,{attempt},{outcome},1,10,100,50,0.5,t0,t1\n"


def csv_of(outcomes: dict[str, list[str]], **kw: str) -> str:
    return HEADER + "".join(row(0, t, k, o, **kw) for t, attempts in outcomes.items() for k, o in enumerate(attempts))


def test_errored_counts_as_a_fail_and_cancelled_is_left_out_of_pass_at_1() -> None:
    [agent] = parse_results(csv_of({"a": ["passed", "errored"], "b": ["cancelled"], "c": ["failed"]}))
    assert agent.outcomes == {"a": (True, False), "c": (False,)}
    assert agent.pass_at_1.value == pytest.approx((0.5 + 0.0) / 2)


def test_cost_tokens_and_time_per_task_sum_a_tasks_attempts() -> None:
    # README: "Cost, time and tokens are per task, all of a task's attempts summed."
    [agent] = parse_results(csv_of({"a": ["passed", "failed"], "b": ["passed", "cancelled"]}))
    # three non-cancelled rows of $0.5, 150 tokens and 10 s, over two tasks
    assert (agent.cost_per_task, agent.tokens_per_task, agent.mean_duration_seconds) == (0.75, 225.0, 15.0)


def test_rows_are_read_in_attempt_order_whatever_the_file_order() -> None:
    text = HEADER + row(0, "a", 1, "passed") + row(0, "a", 0, "failed")
    [agent] = parse_results(text)
    assert agent.outcomes == {"a": (False, True)}
    assert agent.first_attempts == {"a": False}


def test_agents_are_kept_apart_by_index() -> None:
    text = HEADER + row(0, "a", 0, "passed", model="x") + row(1, "a", 0, "failed", model="y")
    assert [(a.agent_index, a.model, a.outcomes) for a in parse_results(text)] == [
        (0, "x", {"a": (True,)}),
        (1, "y", {"a": (False,)}),
    ]


def test_a_missing_column_is_named() -> None:
    with pytest.raises(ResultsError, match=r"runs/x/results.csv: missing column\(s\) attempt, outcome"):
        parse_results("agent_index,task_name\n0,a\n", source="runs/x/results.csv")


def test_a_bad_number_names_its_line_and_column() -> None:
    with pytest.raises(ResultsError, match=r"line 3: attempt must be an integer, not 'one'"):
        parse_results(HEADER + row(0, "a", 0, "passed") + row(0, "b", 0, "passed").replace(",0,passed", ",one,passed"))


def test_the_comparison_pairs_first_attempts_on_shared_tasks_only() -> None:
    [now] = parse_results(csv_of({"a": ["passed"], "b": ["passed"], "c": ["failed"], "new": ["passed"]}))
    [before] = parse_results(csv_of({"a": ["failed"], "b": ["passed"], "c": ["passed"], "gone": ["failed"]}))
    result = compare(now, before, "run-1")
    assert (result.paired, result.b, result.c) == (3, 1, 1)
    assert result.p_value == scoring.mcnemar_exact_p(1, 1) == 1.0
    assert result.delta == pytest.approx(3 / 4 - 2 / 4)


def test_agents_pair_by_harness_and_model_not_by_position() -> None:
    now = parse_results(HEADER + row(0, "a", 0, "passed", model="x") + row(1, "a", 0, "passed", model="y"))
    before = parse_results(HEADER + row(0, "a", 0, "failed", model="y"))
    paired = comparisons(now, before, "run-1")
    assert set(paired) == {1}
    assert paired[1].b == 1


outcome_lists = st.dictionaries(
    st.sampled_from([f"t{i}" for i in range(12)]),
    st.lists(st.sampled_from(["passed", "failed", "errored"]), min_size=1, max_size=3),
    min_size=1,
)


@given(outcome_lists, outcome_lists)
def test_swapping_the_runs_negates_the_delta_and_keeps_the_p_value(
    x: dict[str, list[str]], y: dict[str, list[str]]
) -> None:
    [a] = parse_results(csv_of(x))
    [b] = parse_results(csv_of(y))
    ab, ba = compare(a, b, "b"), compare(b, a, "a")
    assert ab.delta == pytest.approx(-(ba.delta or 0.0))
    assert (ab.b, ab.c, ab.paired) == (ba.c, ba.b, ba.paired)
    assert ab.p_value == ba.p_value
    assert 0.0 < ab.p_value <= 1.0


@given(outcome_lists)
def test_a_run_compared_with_itself_shows_no_difference(x: dict[str, list[str]]) -> None:
    [a] = parse_results(csv_of(x))
    same = compare(a, a, "a")
    assert (same.delta, same.b, same.c, same.p_value, same.paired) == (0.0, 0, 0, 1.0, len(x))
