"""Scoring: estimators, intervals, McNemar ties and leaderboard ranks.

Expected numbers are written out as literals, each with its derivation; they were computed
by hand or in a scratch session from the explicit formulas, never by calling the module.
z = 1.9599639845400536 (the 0.975 normal quantile) throughout.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from reconciler.core.scoring import (
    Z95,
    Entrant,
    LeaderboardEntry,
    TaskSelection,
    discordant_pairs,
    first_attempts,
    indistinguishable,
    is_eligible,
    ks_for,
    leaderboard,
    mcnemar_exact_p,
    pass_at_1,
    pass_at_k_curve,
    pass_at_k_unbiased,
    wilson_interval,
)

REL = 1e-12  # values reached by a different float path than the literal may differ in the last bits


def entrant(
    model: str,
    firsts: str = "",
    *,
    outcomes: dict[str, list[bool]] | None = None,
    harness: str | None = "terminus-2",
    task_set: str = "full",
    version: str = "v1",
    run_id: str | None = None,
    completed_at: str = "2025-01-01T00:00:00Z",
    cost: float | None = None,
) -> Entrant:
    """An entrant whose task `t<i>` has one attempt, passed when `firsts[i] == "1"`."""
    if outcomes is None:
        outcomes = {f"t{i:02d}": [flag == "1"] for i, flag in enumerate(firsts)}
    return Entrant.model_validate(
        {
            "harness": harness,
            "model": model,
            "task_set": task_set,
            "resolved_version": version,
            "outcomes": outcomes,
            "cost_per_task": cost,
            "run_id": run_id or f"run-{model}",
            "run_name": f"name-{run_id or model}",
            "completed_at": completed_at,
        }
    )


def ranks(board: list[LeaderboardEntry]) -> list[tuple[str, int, bool]]:
    return [(row.model, row.rank, row.tied) for row in board]


# --- Wilson ----------------------------------------------------------------------------------


def test_z95_is_the_two_sided_95_percent_normal_quantile() -> None:
    assert NormalDist().inv_cdf(0.975) == Z95


def test_wilson_zero_of_ten() -> None:
    # p = 0, z²/n = 0.38415..., centre = (z²/20)/(1 + z²/10) = 0.138766...; half = centre,
    # so low = 0 exactly and high = 2 · centre = 0.2775327998628891.
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.27753279986288915, rel=REL)


def test_wilson_seven_of_ten() -> None:
    # p = 0.7: centre = (0.7 + z²/20)/(1 + z²/10) = 0.644494...,
    # half = z/(1 + z²/10) · √(0.21/10 + z²/400) = 0.247715...
    low, high = wilson_interval(7, 10)
    assert low == pytest.approx(0.39677814746114537, rel=REL)
    assert high == pytest.approx(0.8922087325936989, rel=REL)


def test_wilson_ten_of_ten() -> None:
    # Mirror image of 0/10: low = 1 − 0.27753279986288915, high = 1 exactly.
    low, high = wilson_interval(10, 10)
    assert low == pytest.approx(0.7224672001371109, rel=REL)
    assert high == 1.0


def test_wilson_rejects_zero_trials() -> None:
    with pytest.raises(ValueError, match="at least one trial"):
        wilson_interval(0, 0)


def test_wilson_rejects_more_successes_than_trials() -> None:
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(11, 10)


@given(st.integers(min_value=1, max_value=500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_point_estimate_within_unit_interval(case: tuple[int, int]) -> None:
    successes, trials = case
    low, high = wilson_interval(successes, trials)
    assert 0.0 <= low <= successes / trials <= high <= 1.0


# --- pass@k ----------------------------------------------------------------------------------


def test_pass_at_k_n5_c2_k2_is_0_7() -> None:
    # 1 − C(3, 2)/C(5, 2) = 1 − 3/10 = 0.7
    assert pass_at_k_unbiased(5, 2, 2) == 0.7


def test_pass_at_k_without_passes_is_0() -> None:
    # 1 − C(4, k)/C(4, k) = 0 for every k
    assert [pass_at_k_unbiased(4, 0, k) for k in (1, 2, 3, 4)] == [0.0, 0.0, 0.0, 0.0]


def test_pass_at_k_with_only_passes_is_1() -> None:
    # n − c = 0 < k: every draw contains a pass
    assert [pass_at_k_unbiased(4, 4, k) for k in (1, 2, 3, 4)] == [1.0, 1.0, 1.0, 1.0]


def test_pass_at_k_is_1_when_k_exceeds_the_failures() -> None:
    # n = 4, c = 3, k = 2: only one failure, so any 2 attempts include a pass
    assert pass_at_k_unbiased(4, 3, 2) == 1.0


def test_pass_at_k_with_k_1_is_c_over_n() -> None:
    # 1 − C(6, 1)/C(7, 1) = 1 − 6/7 = 1/7
    assert pass_at_k_unbiased(7, 1, 1) == 1 / 7


def test_pass_at_k_stays_exact_for_large_n() -> None:
    # C(999, 500)/C(1000, 500) = (1000 − 500)/1000 = 1/2, so pass@500 = 0.5 exactly,
    # although C(1000, 500) has 300 digits and overflows a float.
    assert pass_at_k_unbiased(1000, 1, 500) == 0.5


def test_pass_at_k_rejects_k_above_n() -> None:
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k_unbiased(3, 1, 4)


@given(st.integers(min_value=1, max_value=40).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_at_k_never_decreases_with_k(case: tuple[int, int]) -> None:
    n, c = case
    values = [pass_at_k_unbiased(n, c, k) for k in range(1, n + 1)]
    assert values == sorted(values)
    assert values[0] == c / n


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (1, [1]),
        (2, [1, 2]),
        (3, [1, 2, 3]),
        (4, [1, 2, 4]),
        (5, [1, 2, 4, 5]),
        (8, [1, 2, 4, 8]),
        (10, [1, 2, 4, 8, 10]),
    ],
)
def test_ks_for_is_powers_of_two_up_to_n_plus_n(n: int, expected: list[int]) -> None:
    assert ks_for(n) == expected


def test_ks_for_rejects_zero_attempts() -> None:
    with pytest.raises(ValueError, match="at least one attempt"):
        ks_for(0)


# --- pass@1 interval and pass@k curve ---------------------------------------------------------


def test_pass_at_1_with_single_attempts_is_wilson_over_tasks() -> None:
    # 7 of 10 tasks pass on their only attempt: value 0.7 and the Wilson 7/10 bounds above.
    interval = pass_at_1({f"t{i}": [i < 7] for i in range(10)})
    assert interval.method == "wilson"
    assert interval.n == 10
    assert interval.value == 0.7
    assert interval.ci_low == pytest.approx(0.39677814746114537, rel=REL)
    assert interval.ci_high == pytest.approx(0.8922087325936989, rel=REL)


def test_pass_at_1_cluster_normal_three_tasks_two_attempts() -> None:
    # Per-task means 1, 1/2, 1/2; mean = 2/3.
    # s² = ((1/3)² + (1/6)² + (1/6)²)/(3 − 1) = (6/36)/2 = 1/12; s/√T = √(1/36) = 1/6.
    # low = 2/3 − z/6 = 0.3400060025766577, high = 2/3 + z/6 = 0.9933273307566756.
    interval = pass_at_1({"a": [True, True], "b": [True, False], "c": [False, True]})
    assert interval.method == "cluster-normal"
    assert interval.n == 3
    assert interval.value == pytest.approx(2 / 3, rel=REL)
    assert interval.ci_low == pytest.approx(0.3400060025766577, rel=REL)
    assert interval.ci_high == pytest.approx(0.9933273307566756, rel=REL)


def test_pass_at_1_cluster_normal_is_clipped_to_one() -> None:
    # Per-task means 1, 1, 1/2; mean = 5/6, s/√T = 1/6 (same spread as above).
    # low = (5 − z)/6 = 0.5066726692433244; high = (5 + z)/6 = 1.1599... clipped to 1.
    interval = pass_at_1({"a": [True, True], "b": [True, True], "c": [True, False]})
    assert interval.ci_low == pytest.approx(0.5066726692433244, rel=REL)
    assert interval.ci_high == 1.0


def test_pass_at_1_with_mixed_attempt_counts_is_cluster_normal() -> None:
    # Not every task has exactly one attempt, so Wilson does not apply.
    assert pass_at_1({"a": [True], "b": [True, False]}).method == "cluster-normal"


def test_pass_at_1_cluster_normal_over_one_task_has_no_bounds() -> None:
    # The sample sd needs T − 1 > 0.
    interval = pass_at_1({"a": [True, False, False, False]})
    assert (interval.value, interval.ci_low, interval.ci_high, interval.n) == (0.25, None, None, 1)


def test_pass_at_1_of_no_tasks_is_none() -> None:
    interval = pass_at_1({})
    assert interval.model_dump() == {"value": None, "ci_low": None, "ci_high": None, "n": 0, "method": "wilson"}


def test_pass_at_1_rejects_a_task_without_attempts() -> None:
    with pytest.raises(ValueError, match="no attempts"):
        pass_at_1({"a": []})


def test_pass_at_k_curve_averages_the_estimator_over_tasks() -> None:
    # n = 4 per task, ks = 1, 2, 4.
    # task a (c = 1): k=1 1/4; k=2 1 − C(3,2)/C(4,2) = 1 − 3/6 = 1/2; k=4 1.
    # task b (c = 0): 0, 0, 0.
    # means: 1/8, 1/4, 1/2.
    curve = pass_at_k_curve({"a": [False, True, False, False], "b": [False] * 4})
    assert [(point.k, point.value) for point in curve] == [(1, 0.125), (2, 0.25), (4, 0.5)]


def test_pass_at_k_curve_stops_at_the_fewest_attempts() -> None:
    # min attempts = 3, so ks = 1, 2, 3.
    curve = pass_at_k_curve({"a": [True, False, False], "b": [False, False, False, True]})
    assert [point.k for point in curve] == [1, 2, 3]


def test_pass_at_k_curve_at_k_1_equals_pass_at_1() -> None:
    outcomes = {"a": [True, False, True], "b": [False, False, True], "c": [True, True, True]}
    assert pass_at_k_curve(outcomes)[0].value == pass_at_1(outcomes).value


def test_pass_at_k_curve_of_no_tasks_is_empty() -> None:
    assert pass_at_k_curve({}) == []


# --- McNemar ---------------------------------------------------------------------------------


def test_mcnemar_three_against_one_is_not_significant() -> None:
    # X ~ Bin(4, 1/2): P(X ≤ 1) = (1 + 4)/16 = 5/16; p = 2 · 5/16 = 0.625
    assert mcnemar_exact_p(3, 1) == 0.625


def test_mcnemar_ten_against_zero_is_significant() -> None:
    # X ~ Bin(10, 1/2): P(X ≤ 0) = 1/1024; p = 2/1024 = 0.001953125
    assert mcnemar_exact_p(10, 0) == 0.001953125


def test_mcnemar_without_discordant_pairs_is_1() -> None:
    assert mcnemar_exact_p(0, 0) == 1.0


def test_mcnemar_caps_at_1() -> None:
    # b = c = 2: 2 · P(X ≤ 2 | Bin(4, 1/2)) = 2 · 11/16 > 1, so 1
    assert mcnemar_exact_p(2, 2) == 1.0


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_is_symmetric_and_a_probability(b: int, c: int) -> None:
    p = mcnemar_exact_p(b, c)
    assert p == mcnemar_exact_p(c, b)
    assert 0.0 < p <= 1.0


def test_discordant_pairs_count_only_tasks_both_ran() -> None:
    a = {"x": True, "y": True, "z": False, "only-a": True}
    b = {"x": True, "y": False, "z": True, "only-b": False}
    assert discordant_pairs(a, b) == (1, 1)


def test_first_attempts_take_attempt_zero() -> None:
    assert first_attempts({"a": [False, True], "b": [True, False]}) == {"a": False, "b": True}


def test_indistinguishable_when_mcnemar_cannot_separate() -> None:
    # b = 3, c = 1: p = 0.625 ≥ 0.05
    a = {"t1": True, "t2": True, "t3": True, "t4": False}
    b = {"t1": False, "t2": False, "t3": False, "t4": True}
    assert indistinguishable(a, b)


def test_distinguishable_when_mcnemar_separates() -> None:
    # b = 10, c = 0: p = 0.001953125 < 0.05
    a = {f"t{i}": True for i in range(10)}
    b = {f"t{i}": False for i in range(10)}
    assert not indistinguishable(a, b)


# --- eligibility -----------------------------------------------------------------------------


def test_finished_complete_full_run_is_eligible() -> None:
    assert is_eligible(
        run_status="finished", agent_status="finished", task_selection="full", expected_results=30, produced_results=30
    )


@pytest.mark.parametrize(
    ("run_status", "agent_status", "task_selection", "expected", "produced"),
    [
        pytest.param("failed", "finished", "full", 30, 30, id="run-failed"),
        pytest.param("stopped", "finished", "full", 30, 30, id="run-stopped"),
        pytest.param("finished", "running", "full", 30, 30, id="agent-unfinished"),
        pytest.param("finished", "finished", "filtered", 30, 30, id="filtered-tasks"),
        pytest.param("finished", "finished", "parity", 30, 29, id="missing-result"),
        pytest.param("finished", "finished", "full", 0, 0, id="no-pass-at-1"),
    ],
)
def test_run_is_ineligible(
    run_status: str, agent_status: str, task_selection: TaskSelection, expected: int, produced: int
) -> None:
    assert not is_eligible(
        run_status=run_status,
        agent_status=agent_status,
        task_selection=task_selection,
        expected_results=expected,
        produced_results=produced,
    )


# --- leaderboard -----------------------------------------------------------------------------


def test_empty_leaderboard() -> None:
    assert leaderboard([]) == []


def test_ranks_1_1_3_when_the_runner_up_ties_with_the_leader() -> None:
    # A passes 8/10, B 7/10, C 1/10 (first attempts, same tasks).
    # B vs A: b = 1, c = 0 -> p = 2 · 1/2 = 1 ≥ 0.05: tied, rank 1.
    # C vs A: b = 7, c = 0 -> p = 2/128 = 0.015625 < 0.05: rank 1 + 2 entrants before = 3.
    board = leaderboard(
        [entrant("c", "1000000000"), entrant("a", "1111111100"), entrant("b", "1111111000")],
    )
    assert ranks(board) == [("a", 1, True), ("b", 1, True), ("c", 3, False)]


def test_leader_is_untied_when_nobody_ties_with_it() -> None:
    # b = 10, c = 0: p = 0.001953125 < 0.05
    board = leaderboard([entrant("a", "1111111111"), entrant("b", "0000000000")])
    assert ranks(board) == [("a", 1, False), ("b", 2, False)]


def test_entrants_of_different_task_sets_are_never_tied() -> None:
    # Identical outcomes (p = 1), but one ran the full set and the other the parity set.
    board = leaderboard([entrant("a", "1111100000"), entrant("b", "1111100000", task_set="parity")])
    assert ranks(board) == [("a", 1, False), ("b", 2, False)]


def test_entrants_of_different_benchmark_versions_are_never_tied() -> None:
    board = leaderboard([entrant("a", "1111100000"), entrant("b", "1111100000", version="v2")])
    assert ranks(board) == [("a", 1, False), ("b", 2, False)]


def test_entrant_between_the_best_and_one_tied_with_it_also_ranks_1_untied() -> None:
    # 40 tasks; A passes t00..t19 (0.5).
    # B passes t00..t13 (0.35): b = 6, c = 0 -> p = 2/64 = 0.03125 < 0.05: separable.
    # C passes t00..t04 and t20..t27 (0.325): b = 15, c = 8 -> p = 0.2100... ≥ 0.05: tied.
    # The list stays sorted by pass@1 (A, B, C); C shares rank 1, so B, listed above C, ranks 1
    # too, but B was separated from A by the test, so it is not marked tied.
    a = "1" * 20 + "0" * 20
    b = "1" * 14 + "0" * 26
    c = "1" * 5 + "0" * 15 + "1" * 8 + "0" * 12
    board = leaderboard([entrant("a", a), entrant("b", b), entrant("c", c)])
    assert ranks(board) == [("a", 1, True), ("b", 1, False), ("c", 1, True)]


def test_latest_run_of_an_entrant_wins() -> None:
    older = entrant("m", "0000", run_id="r1", completed_at="2025-01-01T00:00:00Z")
    newer = entrant("m", "1111", run_id="r2", completed_at="2025-02-01T00:00:00Z")
    for entrants in ([older, newer], [newer, older]):
        board = leaderboard(entrants)
        assert [(row.run.id, row.pass_at_1.value) for row in board] == [("r2", 1.0)]


def test_latest_run_compares_instants_not_strings() -> None:
    # 10:00+02:00 is 08:00Z, earlier than 09:00Z although its text sorts later.
    early = entrant("m", "0000", run_id="r1", completed_at="2025-01-01T10:00:00+02:00")
    late = entrant("m", "1111", run_id="r2", completed_at="2025-01-01T09:00:00Z")
    assert [row.run.id for row in leaderboard([early, late])] == ["r2"]


def test_same_model_with_different_harnesses_are_separate_entrants() -> None:
    board = leaderboard([entrant("m", "1100", harness=None), entrant("m", "1100", harness="codex")])
    assert [(row.model, row.harness) for row in board] == [("m", None), ("m", "codex")]


def test_rank_by_pass_at_k_uses_the_deepest_k() -> None:
    # x: pass@1 = (1/4 + 1/4)/2 = 0.25, pass@4 = (1 + 1)/2 = 1.
    # y: pass@1 = (3/4 + 0)/2 = 0.375, pass@4 = (1 + 0)/2 = 0.5.
    # Different versions, so no tie test: pass@k ranks x first, pass@1 ranks y first.
    x = entrant("x", outcomes={"t1": [True, False, False, False], "t2": [False, True, False, False]})
    y = entrant("y", outcomes={"t1": [True, True, True, False], "t2": [False] * 4}, version="v2")
    assert ranks(leaderboard([x, y], rank_by="pass_at_k")) == [("x", 1, False), ("y", 2, False)]
    assert ranks(leaderboard([x, y], rank_by="pass_at_1")) == [("y", 1, False), ("x", 2, False)]


def test_rank_by_cost_is_ascending_with_shared_ranks_and_missing_last() -> None:
    # 0.2, 0.2 share rank 1 (tied); 0.5 is 1 + 2 = 3; the two without cost share rank 4, untied.
    board = leaderboard(
        [
            entrant("b", "1111", cost=0.5),
            entrant("e", "1111", cost=None),
            entrant("d", "0000", cost=0.2),
            entrant("c", "1111", cost=None),
            entrant("a", "0000", cost=0.2),
        ],
        rank_by="cost_per_task",
    )
    assert [(row.model, row.cost_per_task, row.rank, row.tied) for row in board] == [
        ("a", 0.2, 1, True),
        ("d", 0.2, 1, True),
        ("b", 0.5, 3, False),
        ("c", None, 4, False),
        ("e", None, 4, False),
    ]


def test_leaderboard_is_deterministic() -> None:
    entrants = [
        entrant("c", "1000000000", cost=0.3),
        entrant("a", "1111111100", cost=0.1),
        entrant("b", "1111111000", cost=0.3, task_set="parity"),
        entrant("a", "1111111111", harness=None),
    ]
    first = [row.model_dump() for row in leaderboard(entrants)]
    again = [row.model_dump() for row in leaderboard(entrants)]
    reversed_input = [row.model_dump() for row in leaderboard(list(reversed(entrants)))]
    assert first == again == reversed_input


def test_leaderboard_entry_has_the_contract_json_shape() -> None:
    (row,) = leaderboard([entrant("a", "10")])
    dumped = row.model_dump(mode="json")
    assert list(dumped) == [
        "rank",
        "tied",
        "task_set",
        "resolved_version",
        "harness",
        "model",
        "pass_at_1",
        "pass_at_k",
        "cost_per_task",
        "mean_duration_seconds",
        "tokens_per_task",
        "run",
    ]
    assert list(dumped["pass_at_1"]) == ["value", "ci_low", "ci_high", "n", "method"]
    # two tasks, one attempt each: the k = 1 point carries pass@1's Wilson interval
    assert dumped["pass_at_k"] == [
        {
            "k": 1,
            "value": 0.5,
            "ci_low": dumped["pass_at_1"]["ci_low"],
            "ci_high": dumped["pass_at_1"]["ci_high"],
            "method": "wilson",
        }
    ]
    assert dumped["run"] == {"id": "run-a", "name": "name-a", "platform_url": None}


def test_entrant_rejects_a_task_without_attempts() -> None:
    with pytest.raises(ValidationError, match="tasks without attempts: t1"):
        entrant("a", outcomes={"t1": [], "t2": [True]})


def test_entrant_rejects_a_timestamp_that_is_not_iso_8601() -> None:
    with pytest.raises(ValidationError, match="not an ISO-8601 timestamp"):
        entrant("a", "1", completed_at="yesterday")


def test_entrant_rejects_a_non_finite_cost() -> None:
    with pytest.raises(ValidationError):
        entrant("a", "1", cost=math.nan)
