"""A plan never shows a stop of a run newer than the checkout (engine/operations.guarded_plan),
whatever budget a refused stop frees, and a run it cannot read never fails the plan."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from hypothesis import given
from hypothesis import strategies as st

from reconciler.core.plan import ActionKind
from reconciler.core.world import Desired, Policy
from reconciler.engine.operations import guarded_plan, stop_targets
from reconciler.engine.stale_checkout import CheckoutHistory
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.errors import NotFound
from reconciler.vcs.history import is_behind
from tests.git_cli import commit_all, git
from tests.unit.test_plan import SMOKE, observed, run, spec

NEWER = "c" * 40
TASKS = ('["t1", "t3"]', '["t1", "t2"]', '["t2", "t3"]')


def world(n: int) -> tuple[Desired, Any]:
    """n specs, each edited since its run r<i> (each replace costs 2 attempts)."""
    specs = tuple(spec(SMOKE.replace('["t1"]', TASKS[i]), f"runs/s{i}") for i in range(n))
    runs = [run(f"runs/s{i}", f"{i}" * 16, run_id=f"r{i}") for i in range(n)]
    return Desired(runs=specs), observed(*runs)


def guarded(desired: Desired, obs: Any, policy: Policy, newer: set[str]) -> tuple[Any, set[str]]:
    asked: set[str] = set()

    async def newer_runs(ids: set[str]) -> dict[str, str]:
        asked.update(ids)
        return {r: NEWER for r in ids if r in newer}

    planned, _ = asyncio.run(guarded_plan(desired, obs, policy, newer_runs))
    return planned, asked


def test_a_replace_the_budget_let_in_after_a_refused_stop_is_asked_about_too() -> None:
    # the first plan replaces s0 and blocks s1 over budget; s0's stop refused frees the budget,
    # and s1's replace, whose run is newer too, must not be shown as a replace
    desired, obs = world(2)
    planned, asked = guarded(desired, obs, Policy(max_attempts_per_apply=2), {"r0", "r1"})
    assert asked == {"r0", "r1"}
    assert [a.blocked_by for a in planned.actions] == ["stale_checkout", "stale_checkout"]


@given(newer=st.sets(st.sampled_from(["r0", "r1", "r2"])), budget=st.sampled_from([None, 2, 4]))
def test_no_run_newer_than_the_checkout_is_ever_planned_to_stop(newer: set[str], budget: int | None) -> None:
    desired, obs = world(3)
    planned, asked = guarded(desired, obs, Policy(max_attempts_per_apply=budget), newer)
    stopping = set(stop_targets(planned))
    assert stopping <= asked and not stopping & newer
    assert all(a.kind is ActionKind.BLOCKED for a in planned.actions if a.run_id in newer)


def test_a_run_that_cannot_be_read_is_left_out_and_the_others_are_still_told(tmp_path: Path) -> None:
    class Platform:
        async def get_run(self, run_id: str) -> Any:
            raise NotFound(f"Benchmark run not found: {run_id}")

    found = asyncio.run(CheckoutHistory(tmp_path).newer_runs(cast(OsmosisClient, Platform()), ["gone"]))
    assert found == {}


def test_a_repository_with_no_commit_yet_is_behind_nothing(tmp_path: Path) -> None:
    # its origin has the run's commit, so the fetch succeeds and only HEAD is missing
    origin, empty = tmp_path / "origin", tmp_path / "empty"
    origin.mkdir()
    (origin / "a.txt").write_text("a\n")
    commit = commit_all(origin)
    git(tmp_path, "init", "-q", str(empty))
    git(empty, "remote", "add", "origin", str(origin))
    assert is_behind(empty, commit) is None
