"""The Benchmarks page's leaderboard rules, one table per rule, each citing the page's sentence.

Expected ranks are read off the rule by hand; McNemar p-values are written out in comments.
"""

from __future__ import annotations

import re
from typing import Any, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.core.scoring import Entrant, LeaderboardEntry, RankBy, leaderboard, pass_at_k_curve
from reconciler.render.leaderboard import order_rows, parse_rows, render_markdown

Z = 1.9599639845400536


def entrant(
    model: str,
    firsts: str = "",
    *,
    outcomes: dict[str, list[bool]] | None = None,
    task_set: str = "full",
    cost: float | None = None,
    seconds: float | None = None,
    tokens: float | None = None,
) -> Entrant:
    """Task `t<i>` has one attempt, passed when `firsts[i] == "1"` (unless `outcomes` is given)."""
    return Entrant.model_validate(
        {
            "harness": "terminus-2",
            "model": model,
            "task_set": task_set,
            "resolved_version": "v1",
            "outcomes": outcomes if outcomes is not None else {f"t{i:02d}": [c == "1"] for i, c in enumerate(firsts)},
            "cost_per_task": cost,
            "mean_duration_seconds": seconds,
            "tokens_per_task": tokens,
            "run_id": f"run-{model}",
            "run_name": f"name-{model}",
            "completed_at": "2026-01-01T00:00:00Z",
        }
    )


def ranks(board: list[LeaderboardEntry]) -> list[tuple[str, int, bool]]:
    return [(row.model, row.rank, row.tied) for row in board]


ALL20, HALF20, OTHER_HALF20 = "1" * 20, "1" * 10 + "0" * 10, "0" * 10 + "1" * 10
# 40 tasks: a passes 20; b passes 14 of a's (b = 6, c = 0: p = 2/64 = 0.031 < 0.05, separable);
# c passes 5 of a's and 8 others (b = 15, c = 8: p = 0.21 >= 0.05, cannot be separated from a).
A40 = "1" * 20 + "0" * 20
B40 = "1" * 14 + "0" * 26
C40 = "1" * 5 + "0" * 15 + "1" * 8 + "0" * 12

# "Ranks are competition ranks: tied entrants share a rank, so ranks can skip (1, 1, 3)."
COMPETITION_RANKS = [
    pytest.param(
        # a vs b and a vs c: b = 10, c = 0, p = 2/1024 < 0.05; b and c have the same pass@1
        [entrant("a", ALL20), entrant("b", HALF20), entrant("c", OTHER_HALF20), entrant("d", "0" * 20)],
        "pass_at_1",
        [("a", 1, False), ("b", 2, True), ("c", 2, True), ("d", 4, False)],
        id="equal-pass-at-1-below-the-best",
    ),
    pytest.param(
        [entrant("a", "1", cost=0.1), entrant("b", "1", cost=0.2), entrant("c", "1", cost=0.2), entrant("d", "1")],
        "cost_per_task",
        [("a", 1, False), ("b", 2, True), ("c", 2, True), ("d", 4, False)],
        id="equal-cost-below-the-cheapest",
    ),
    pytest.param(
        [entrant("a", "1", seconds=9.0), entrant("b", "1", seconds=5.0), entrant("c", "1", seconds=9.0)],
        "time_per_task",
        [("b", 1, False), ("a", 2, True), ("c", 2, True)],
        id="equal-time-below-the-fastest",
    ),
    pytest.param(
        [entrant("a", "1", tokens=7.0), entrant("b", "1", tokens=7.0), entrant("c", "1", tokens=3.0)],
        "tokens_per_task",
        [("c", 1, False), ("a", 2, True), ("b", 2, True)],
        id="equal-tokens-below-the-fewest",
    ),
]


@pytest.mark.parametrize(("entrants", "rank_by", "expected"), COMPETITION_RANKS)
def test_tied_entrants_share_a_competition_rank_anywhere_in_the_list(
    entrants: list[Entrant], rank_by: RankBy, expected: list[tuple[str, int, bool]]
) -> None:
    assert ranks(leaderboard(entrants, rank_by)) == expected


# "Every eligible entrant ranks in the same list, sorted by the selected metric. Task set and
# benchmark version enter only the tie test: ... a parity sample and a full run ... are never
# marked as tied." and "an agent the test can't separate from the best one shares rank 1".
SAME_LIST = [
    pytest.param(
        [entrant("a", A40), entrant("b", B40, task_set="parity"), entrant("c", C40)],
        [("a", 1, True), ("b", 1, False), ("c", 1, True)],
        id="parity-entrant-between-the-best-and-one-tied-with-it",
    ),
    pytest.param(
        [entrant("a", A40), entrant("b", B40), entrant("c", C40)],
        [("a", 1, True), ("b", 1, False), ("c", 1, True)],
        id="separable-entrant-listed-above-one-tied-with-the-best",
    ),
    pytest.param(
        [entrant("a", HALF20), entrant("b", HALF20, task_set="parity")],
        [("a", 1, False), ("b", 2, False)],
        id="equal-values-of-different-task-sets-never-tie",
    ),
    pytest.param(
        [entrant("a", A40), entrant("b", B40, task_set="parity"), entrant("c", "0" * 40)],
        [("a", 1, False), ("b", 2, False), ("c", 3, False)],
        id="nobody-tied-with-the-best",
    ),
]


@pytest.mark.parametrize(("entrants", "expected"), SAME_LIST)
def test_one_list_sorted_by_the_metric_with_the_tie_with_the_best_rule(
    entrants: list[Entrant], expected: list[tuple[str, int, bool]]
) -> None:
    board = leaderboard(entrants, "pass_at_1")
    assert ranks(board) == expected
    values = [row.pass_at_1.value or 0.0 for row in board]
    assert values == sorted(values, reverse=True)


# The issue: "A column names one k; an entrant without that k shows an empty cell, never a
# different k." pass@k ranks only entrants that have the list's k.
ONE_K = [
    pytest.param(
        # one: 1 attempt, all pass (pass@1 = 1); two: 2 attempts, one task of two solved (pass@2 = 0.5)
        [
            entrant("one", outcomes={"t1": [True], "t2": [True]}),
            entrant("two", outcomes={"t1": [False, True], "t2": [False, False]}),
        ],
        [("two", 1, False, 0.5), ("one", 2, False, None)],
        id="k2-beats-no-k2",
    ),
    pytest.param(
        [
            entrant("three", outcomes={"t1": [False, False, True], "t2": [False, False, False]}),
            entrant("two", outcomes={"t1": [True, True], "t2": [True, True]}),
        ],
        [("three", 1, False, 0.5), ("two", 2, False, None)],
        id="the-deepest-k-of-the-list-is-the-column",
    ),
]


@pytest.mark.parametrize(("entrants", "expected"), ONE_K)
def test_pass_at_k_ranks_only_at_the_lists_one_k(
    entrants: list[Entrant], expected: list[tuple[str, int, bool, float | None]]
) -> None:
    board = leaderboard(entrants, "pass_at_k")
    k = max(row.pass_at_k[-1].k for row in board)
    at_k = [next((p.value for p in row.pass_at_k if p.k == k), None) for row in board]
    assert [(row.model, row.rank, row.tied, v) for row, v in zip(board, at_k, strict=True)] == expected


def test_the_markdown_pass_at_k_column_leaves_an_entrant_without_that_k_empty() -> None:
    one = entrant("one", outcomes={"t1": [True], "t2": [True]})
    two = entrant("two", outcomes={"t1": [False, True], "t2": [False, False]})
    rows = parse_rows([row.model_dump(mode="json") for row in leaderboard([one, two], "pass_at_k")])
    text = render_markdown(title="T", benchmark_key="k", spec_path="s", rows=rows, rank_by="pass_at_k", scope="x")
    table = {
        line.split(" | ")[1]: line.split(" | ") for line in text.splitlines() if line.startswith("| ") and "(" in line
    }
    assert "pass@2 (95% CI)" in text
    assert table["one (terminus-2)"][3] == "–"  # never its pass@1 in the pass@2 column
    assert table["two (terminus-2)"][3].startswith("50%")


# "Pass@1 is the first-try rate; pass@k is the rate of solving a task within k tries. Both are
# reported with a 95% confidence interval". pass@k, k > 1: mean ± z·s/√T over per-task
# estimates, clipped to [0, 1].
PASS_AT_K_INTERVALS = [
    pytest.param(
        # per-task estimates at k = 2: 1, 0, 1; mean 2/3; s² = (1/9 + 4/9 + 1/9)/2 = 1/3; s/√3 = 1/3
        {"t1": [True, False], "t2": [False, False], "t3": [True, True]},
        2,
        (2 / 3, 2 / 3 - Z / 3, 1.0),
        id="clustered-normal-clipped-at-1",
    ),
    pytest.param(
        # estimates at k = 2: 1 − C(2,2)/C(3,2) = 2/3 and 0; mean 1/3; s² = (1/9 + 1/9)/1 = 2/9; s/√2 = 1/3
        {"t1": [True, False, False], "t2": [False, False, False]},
        2,
        (1 / 3, 0.0, 1 / 3 + Z / 3),
        id="clipped-at-0",
    ),
    pytest.param({"t1": [True, False]}, 2, (1.0, None, None), id="one-task-has-no-interval"),
]


@pytest.mark.parametrize(("outcomes", "k", "expected"), PASS_AT_K_INTERVALS)
def test_pass_at_k_has_a_95_percent_interval(
    outcomes: dict[str, list[bool]], k: int, expected: tuple[float, float | None, float | None]
) -> None:
    point = next(p for p in pass_at_k_curve(outcomes) if p.k == k)
    value, low, high = expected
    assert point.value == pytest.approx(value, rel=1e-12)
    assert point.ci_low == (pytest.approx(low, rel=1e-12, abs=1e-15) if low is not None else None)
    assert point.ci_high == (pytest.approx(high, rel=1e-12) if high is not None else None)
    assert point.method == "cluster-normal"


def test_the_pass_at_1_point_of_the_curve_carries_pass_at_1s_interval() -> None:
    (point,) = pass_at_k_curve({"t1": [True], "t2": [False], "t3": [True]})
    # Wilson, 2 of 3 (the interval pass@1 reports): d = 1 + z²/3, centre = (2/3 + z²/6)/d,
    # half = z/d · √(2/27 + z²/36) -> 0.2076596008 .. 0.9385080553
    assert (point.k, point.method) == (1, "wilson")
    assert point.ci_low == pytest.approx(0.2076596008020478, rel=1e-12)
    assert point.ci_high == pytest.approx(0.9385080552796038, rel=1e-12)


# --- the property ---------------------------------------------------------------------------

METRIC_PLACES = st.sampled_from([None, 0.1, 0.2, 0.3])


@st.composite
def entrant_sets(draw: st.DrawFn) -> list[Entrant]:
    tasks = draw(st.integers(min_value=1, max_value=6))
    count = draw(st.integers(min_value=1, max_value=6))
    out = []
    for i in range(count):
        attempts = draw(st.integers(min_value=1, max_value=3))
        outcomes = {f"t{t}": draw(st.lists(st.booleans(), min_size=attempts, max_size=attempts)) for t in range(tasks)}
        out.append(
            entrant(
                f"m{i}",
                outcomes=outcomes,
                task_set=draw(st.sampled_from(["full", "parity"])),
                cost=draw(METRIC_PLACES),
                seconds=draw(METRIC_PLACES),
                tokens=draw(METRIC_PLACES),
            )
        )
    return out


def _ranked_value(row: Any, rank_by: str, k: int | None) -> float | None:
    if rank_by == "pass_at_1":
        value: float | None = row.pass_at_1.value
        return value
    if rank_by == "pass_at_k":
        return next((p.value for p in row.pass_at_k if p.k == k), None)
    return getattr(row, "mean_duration_seconds" if rank_by == "time_per_task" else rank_by)  # type: ignore[no-any-return]


RANK_COLUMN = re.compile(r"^\| (\d+)(\\\*)? \| (\S+) \(")


@settings(max_examples=150, deadline=None)
@given(entrants=entrant_sets(), rank_by=st.sampled_from(get_args(RankBy)))
def test_rendered_order_is_sorted_by_the_metric_and_ranks_are_competition_ranks_of_it(
    entrants: list[Entrant], rank_by: RankBy
) -> None:
    # what the renderer receives: the platform's default (pass@1) leaderboard as JSON
    api = [entry.model_dump(mode="json") for entry in leaderboard(entrants, "pass_at_1")]
    rows = order_rows(parse_rows(api), rank_by)
    k = max((r.pass_at_k[-1].k for r in rows if r.pass_at_k), default=None)
    values = [_ranked_value(r, rank_by, k) for r in rows]
    present = [v for v in values if v is not None]
    assert values == present + [None] * (len(values) - len(present))  # missing last
    descending = rank_by in ("pass_at_1", "pass_at_k")
    assert present == sorted(present, reverse=descending)
    text = render_markdown(title="T", benchmark_key="k", spec_path="s", rows=rows, rank_by=rank_by, scope="x")
    shown = [(int(m[1]), m[3]) for line in text.splitlines() if (m := RANK_COLUMN.match(line))]
    assert [model for _, model in shown] == [r.model for r in rows]
    rendered_ranks = [rank for rank, _ in shown]
    # competition ranks of the listed order: each rank repeats its predecessor's or is its position
    assert rendered_ranks[0] == 1
    for position in range(1, len(rendered_ranks)):
        assert rendered_ranks[position] in (rendered_ranks[position - 1], position + 1)
    # and the platform, ranking by the same metric, lists the same entrants with the same ranks
    platform = leaderboard(entrants, rank_by)
    assert [(r.model, r.rank, r.tied) for r in platform] == [(r.model, r.rank, r.tied) for r in rows]
