"""What a plan says about a submit: its cost estimate per attempt and the basis of it, and a
warning when an agent's harness is not the one the benchmark's published scores used."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from reconciler.core.cost import estimate_cost
from reconciler.core.identity import fingerprint
from reconciler.core.plan import ActionKind, plan
from reconciler.core.world import Desired, DesiredRun, Observed
from reconciler.engine.observe import benchmark_state
from reconciler.osmosis.models import BenchmarkDetail
from reconciler.render.plan_text import render_text
from reconciler.specs.models import ReconcileTable, RunSpec
from reconciler.specs.run_config import RunConfig


def config(attempts: int = 1, harness: str | None = None, models: tuple[str, ...] = ("openai/gpt-5.2",)) -> RunConfig:
    agents = "".join(
        "[[agents]]\n"
        + (f'harness = "{harness}"\n' if harness else "")
        + f'[agents.model]\ntype = "provider"\nmodel = "{m}"\napi_key_secret = "OPENAI_API_KEY"\n'
        for m in models
    )
    text = f'[experiment]\nbenchmark = "tb"\n{agents}[execution]\nattempts_per_task = {attempts}\n'
    return RunConfig.model_validate(tomllib.loads(text))


def entry(model: str, cost_per_task: float, attempts: int, run_id: str) -> dict[str, Any]:
    ks = {1: [1], 2: [1, 2], 3: [1, 2, 3]}[attempts]  # the platform's k values for that many attempts
    return {
        "rank": 1,
        "tied": False,
        "task_set": "full",
        "resolved_version": "1",
        "harness": "terminus-2",
        "model": model,
        "pass_at_1": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 10, "method": "cluster-normal"},
        "pass_at_k": [{"k": k, "value": 0.5} for k in ks],
        "cost_per_task": cost_per_task,
        "mean_duration_seconds": 10.0,
        "tokens_per_task": 100.0,
        "run": {"id": run_id, "name": run_id, "platform_url": None},
    }


def detail(*entries: dict[str, Any], default_harness: str | None = "terminus-2") -> BenchmarkDetail:
    return BenchmarkDetail.model_validate(
        {
            "id": "b1",
            "name": "Terminal-Bench 2.1",
            "source_type": "osmosis_managed",
            "source_ref": "tb",
            "task_count": 10,
            "category_count": 0,
            "runner_family": "harbor",
            "supports_harness": True,
            "requires_harness": False,
            "requires_judge_model": False,
            "pass_threshold": 1.0,
            "default_harness": default_harness,
            "tasks": [{"name": f"t{i}"} for i in range(10)],
            "leaderboard": list(entries),
        }
    )


# The issue: "Estimate per attempt from history, multiply by the attempts the spec asks for, and
# show the basis". History's cost per task sums a task's attempts (the leaderboard footnote).
ESTIMATES = [
    pytest.param([entry("openai/gpt-5.2", 0.9, 3, "r1")], 1, 3.0, "from 1 finished run of this agent", id="3-to-1"),
    pytest.param([entry("openai/gpt-5.2", 0.9, 3, "r1")], 3, 9.0, "from 1 finished run of this agent", id="3-to-3"),
    pytest.param([entry("openai/gpt-5.2", 0.2, 1, "r1")], 2, 4.0, "from 1 finished run of this agent", id="1-to-2"),
    pytest.param([entry("openai/gpt-5.2", 0.4, 2, "r1")], 1, 2.0, "from 1 finished run of this agent", id="2-to-1"),
]


@pytest.mark.parametrize(("entries", "attempts", "usd", "basis"), ESTIMATES)
def test_the_estimate_is_per_attempt_from_history_times_the_attempts_asked_for(
    entries: list[dict[str, Any]], attempts: int, usd: float, basis: str
) -> None:
    cost = estimate_cost(config(attempts), benchmark_state("tb", detail(*entries)))
    # 10 tasks × `attempts` attempts × (history cost per task ÷ history attempts per task)
    assert (cost.attempts, cost.estimated_usd, cost.basis) == (10 * attempts, usd, basis)


def test_the_basis_counts_distinct_runs_and_names_agents_without_history() -> None:
    bench = benchmark_state(
        "tb",
        detail(
            entry("openai/gpt-5.2", 0.3, 1, "r1"),
            entry("openai/gpt-5-mini", 0.1, 1, "r1"),
            entry("openai/o3", 0.5, 1, "r2"),
        ),
    )
    both = estimate_cost(config(models=("openai/gpt-5.2", "openai/gpt-5-mini", "openai/o3")), bench)
    assert (both.estimated_usd, both.basis) == (9.0, "from 2 finished runs of these agents")
    partial = estimate_cost(config(models=("openai/gpt-5.2", "openai/unknown")), bench)
    assert partial.basis == "from 1 finished run of 1 of the 2 agents; no cost history for the others"
    assert not partial.estimate_complete


def desired(cfg: RunConfig) -> Desired:
    run_spec = RunSpec(id="runs/a", path="specs/runs/a.toml", config=cfg, reconcile=ReconcileTable())
    return Desired(runs=(DesiredRun(spec=run_spec, fingerprint=fingerprint(cfg)),))


def observed(bench_detail: BenchmarkDetail) -> Observed:
    return Observed(
        owner="acme/bench",
        benchmarks={"tb": benchmark_state("tb", bench_detail)},
        secrets=frozenset({"OPENAI_API_KEY"}),
    )


def test_the_plan_text_shows_the_estimate_with_its_basis() -> None:
    p = plan(desired(config(3)), observed(detail(entry("openai/gpt-5.2", 0.9, 3, "r1"))))
    assert "est. $9.00 (from 1 finished run of this agent)" in render_text(p)


# "When a benchmark's published scores were measured on a specific harness, that harness is
# reported as the default. Terminal-Bench 2.1's is `terminus-2`, and a run on another harness is
# not comparable with those scores." (the CLI page, Benchmarks)
HARNESS_WARNINGS = [
    pytest.param("codex", "terminus-2", True, id="another-harness"),
    pytest.param("terminus-2", "terminus-2", False, id="the-default-harness"),
    pytest.param(None, "terminus-2", False, id="harness-omitted"),
    pytest.param("codex", None, False, id="benchmark-without-a-default"),
]


@pytest.mark.parametrize(("harness", "default", "warned"), HARNESS_WARNINGS)
def test_a_non_default_harness_is_a_plan_warning_on_that_agent(
    harness: str | None, default: str | None, warned: bool
) -> None:
    p = plan(desired(config(harness=harness)), observed(detail(default_harness=default)))
    (action,) = p.actions
    assert action.kind is ActionKind.SUBMIT  # a warning never blocks
    expected = (
        (
            "agents[0].harness: Terminal-Bench 2.1's published scores were measured on terminus-2;"
            " a run on codex is not comparable with them (omit harness to use the default)",
        )
        if warned
        else ()
    )
    assert action.warnings == expected
    assert ("warning: agents[0].harness" in render_text(p)) is warned
