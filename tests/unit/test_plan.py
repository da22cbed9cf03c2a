"""The planner, as a table of situations and the action each one must produce."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from reconciler.core.identity import Marker, fingerprint
from reconciler.core.plan import ActionKind, Plan, plan, render_digest
from reconciler.core.world import BenchmarkState, Desired, DesiredRun, Observed, ObservedRun, Policy, RunAgents
from reconciler.specs.models import BenchmarkDocument, BenchmarkSpec, ReconcileTable, RunSpec
from reconciler.specs.run_config import RunConfig

OWNER = "acme/benchmarks"

SMOKE = """
[experiment]
benchmark = "tb"
[tasks]
task_names = ["t1"]
[[agents]]
harness = "codex"
[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
"""

FULL = """
[experiment]
benchmark = "tb"
[[agents]]
[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
[[agents]]
[agents.model]
type = "provider"
model = "anthropic/claude-sonnet-4"
api_key_secret = "ANTHROPIC_API_KEY"
[execution]
attempts_per_task = 2
"""


def spec(text: str, spec_id: str = "runs/a", **reconcile: object) -> DesiredRun:
    config = RunConfig.model_validate(tomllib.loads(text))
    rs = RunSpec(id=spec_id, path=f"specs/{spec_id}.toml", config=config, reconcile=ReconcileTable(**reconcile))  # type: ignore[arg-type]
    return DesiredRun(spec=rs, fingerprint=fingerprint(config))


def bench(**kw: object) -> BenchmarkState:
    values: dict[str, object] = {
        "ref": "tb",
        "id": "b1",
        "key": "tb",
        "name": "TB",
        "task_count": 80,
        "cost_per_task": {"|openai/gpt-5.2": 0.5, "codex|openai/gpt-5.2": 0.25},
    }
    values.update(kw)
    return BenchmarkState.model_validate(values)


def run(
    spec_id: str,
    fp: str,
    status: str = "running",
    run_id: str = "r1",
    owner: str = OWNER,
    created: str = "2026-01-01T00:00:00Z",
) -> ObservedRun:
    return ObservedRun(
        id=run_id,
        name=f"run-{run_id}",
        status=status,
        created_at=created,
        marker=Marker(owner=owner, spec_id=spec_id, fingerprint=fp),
    )


def observed(
    *runs: ObservedRun, secrets: tuple[str, ...] = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"), **kw: object
) -> Observed:
    values: dict[str, object] = {
        "owner": OWNER,
        "runs": runs,
        "benchmarks": {"tb": bench()},
        "secrets": frozenset(secrets),
    }
    values.update(kw)
    return Observed.model_validate(values)


def kinds(p: Plan) -> list[str]:
    return [a.kind.value for a in p.actions]


def benchmark_spec(text: str) -> BenchmarkSpec:
    doc = BenchmarkDocument.model_validate(tomllib.loads(text))
    return BenchmarkSpec(
        id="benchmarks/tb",
        path="specs/benchmarks/tb.toml",
        benchmark=doc.benchmark,
        leaderboard=doc.leaderboard,
        policy=doc.policy,
    )


def test_a_spec_with_no_run_is_submitted_with_its_attempt_count_and_cost() -> None:
    d = spec(FULL)
    p = plan(Desired(runs=(d,)), observed())
    (action,) = p.actions
    assert action.kind is ActionKind.SUBMIT and action.paid
    assert action.cost is not None
    assert (action.cost.tasks, action.cost.agents, action.cost.attempts) == (80, 2, 320)
    # only gpt-5.2 on the default harness has a cost history: 160 attempts × $0.50
    assert action.cost.estimated_usd == 80.0 and not action.cost.estimate_complete
    assert p.paid_attempts == 320 and p.has_changes


def test_a_task_selection_counts_only_the_selected_tasks() -> None:
    p = plan(Desired(runs=(spec(SMOKE),)), observed())
    assert p.actions[0].cost is not None and p.actions[0].cost.attempts == 1
    assert p.actions[0].cost.estimated_usd == 0.25 and p.actions[0].cost.estimate_complete


def test_an_active_run_of_the_same_config_is_waited_on() -> None:
    d = spec(FULL)
    p = plan(Desired(runs=(d,)), observed(run("runs/a", d.fingerprint)))
    assert kinds(p) == ["wait"] and not p.has_changes


def test_a_finished_run_is_downloaded_once_then_in_sync() -> None:
    d = spec(FULL)
    obs = observed(run("runs/a", d.fingerprint, "finished"))
    first = plan(Desired(runs=(d,)), obs)
    assert kinds(first) == ["download"] and first.actions[0].download_types == ("summary", "results")
    done = obs.model_copy(update={"downloaded": {"r1": frozenset({"summary", "results"})}})
    assert kinds(plan(Desired(runs=(d,)), done)) == ["noop"]


def test_a_failed_run_is_not_resubmitted_automatically() -> None:
    d = spec(FULL)
    obs = observed(run("runs/a", d.fingerprint, "failed"), downloaded={"r1": frozenset({"summary", "results"})})
    (action,) = plan(Desired(runs=(d,)), obs).actions
    assert action.kind is ActionKind.NOOP and "not resubmitted" in action.reason


def test_a_changed_config_replaces_the_active_run() -> None:
    d = spec(FULL)
    (action,) = plan(Desired(runs=(d,)), observed(run("runs/a", "0" * 16))).actions
    assert action.kind is ActionKind.REPLACE and action.run_id == "r1" and action.paid
    assert action.previous_fingerprint == "0" * 16 and action.fingerprint == d.fingerprint


def test_a_changed_config_with_on_change_queue_waits_for_the_old_run() -> None:
    d = spec(FULL, on_change="queue")
    assert kinds(plan(Desired(runs=(d,)), observed(run("runs/a", "0" * 16)))) == ["wait"]


def test_a_changed_config_submits_when_the_old_run_already_ended() -> None:
    d = spec(FULL)
    assert kinds(plan(Desired(runs=(d,)), observed(run("runs/a", "0" * 16, "finished")))) == ["submit"]


def test_a_protected_spec_is_never_replaced_without_allow_protected() -> None:
    d = spec(FULL, protect=True)
    obs = observed(run("runs/a", "0" * 16))
    (blocked,) = plan(Desired(runs=(d,)), obs).actions
    assert blocked.kind is ActionKind.BLOCKED and blocked.blocked_by == "protected"
    assert kinds(plan(Desired(runs=(d,)), obs, Policy(allow_protected=True))) == ["replace"]


def test_state_stopped_stops_every_active_owned_run() -> None:
    d = spec(FULL, state="stopped")
    p = plan(Desired(runs=(d,)), observed(run("runs/a", d.fingerprint), run("runs/a", "0" * 16, "queued", "r2")))
    assert kinds(p) == ["stop", "stop"]


def test_state_stopped_with_nothing_active_is_a_noop() -> None:
    d = spec(FULL, state="stopped")
    assert kinds(plan(Desired(runs=(d,)), observed(run("runs/a", d.fingerprint, "finished")))) == ["noop"]


def test_an_owned_run_whose_spec_was_deleted_is_an_orphan_stopped_only_with_prune() -> None:
    obs = observed(run("runs/gone", "0" * 16))
    (orphan,) = plan(Desired(), obs).actions
    assert orphan.kind is ActionKind.ORPHAN and not orphan.will_stop and not plan(Desired(), obs).has_changes
    (pruned,) = plan(Desired(), obs, Policy(prune=True)).actions
    assert pruned.will_stop and plan(Desired(), obs, Policy(prune=True)).has_changes


def test_runs_of_another_owner_or_without_a_marker_are_never_acted_on() -> None:
    foreign = run("runs/a", "0" * 16, owner="someone/else")
    bare = ObservedRun(id="r9", name="manual", status="running")
    p = plan(Desired(), observed(foreign, bare), Policy(prune=True))
    assert p.actions == () and p.unmanaged_runs == 2


def test_a_run_of_another_owner_with_the_same_spec_id_does_not_satisfy_the_spec() -> None:
    d = spec(FULL)
    assert kinds(plan(Desired(runs=(d,)), observed(run("runs/a", d.fingerprint, owner="someone/else")))) == ["submit"]


@pytest.mark.parametrize(
    ("obs_kw", "code"),
    [
        ({"benchmarks": {}}, "benchmark_not_found"),
        ({"benchmarks": {"tb": bench(sync_status="syncing")}}, "benchmark_not_ready"),
        ({"secrets": ("OPENAI_API_KEY",)}, "secrets_missing"),
        ({"benchmarks": {"tb": bench(required_secret_names=("HF_TOKEN",))}}, "secrets_missing"),
    ],
)
def test_a_submit_is_blocked_with_the_reason(obs_kw: dict[str, Any], code: str) -> None:
    (action,) = plan(Desired(runs=(spec(FULL),)), observed(**obs_kw)).actions
    assert action.kind is ActionKind.BLOCKED and action.blocked_by == code and not action.paid


def test_missing_secrets_are_named_with_the_command_that_creates_them() -> None:
    (action,) = plan(Desired(runs=(spec(FULL),)), observed(secrets=("OPENAI_API_KEY",))).actions
    assert "ANTHROPIC_API_KEY" in action.reason and "reconciler secrets set ANTHROPIC_API_KEY" in action.reason


def test_a_run_over_max_attempts_per_run_is_blocked() -> None:
    b = benchmark_spec('[benchmark]\nref = "tb"\n[policy]\nmax_attempts_per_run = 100\n')
    (action,) = plan(Desired(runs=(spec(FULL),), benchmarks=(b,)), observed()).actions
    assert action.blocked_by == "over_run_limit" and "320 attempts" in action.reason


def test_require_smoke_blocks_a_full_run_until_each_agent_has_a_finished_smoke_run() -> None:
    b = benchmark_spec('[benchmark]\nref = "tb"\n[policy]\nrequire_smoke = true\n')
    smoke = spec(SMOKE.replace('harness = "codex"\n', ""), "runs/smoke")
    full = spec(
        FULL.replace(
            '[[agents]]\n[agents.model]\ntype = "provider"\nmodel = "anthropic/claude-sonnet-4"\napi_key_secret = "ANTHROPIC_API_KEY"\n',
            "",
        ),
        "runs/full",
    )
    desired = Desired(runs=(smoke, full), benchmarks=(b,))
    before = {a.spec_id: a for a in plan(desired, observed()).actions}
    assert before["runs/full"].blocked_by == "smoke_required"
    smoked = run("runs/smoke", smoke.fingerprint, "finished").model_copy(
        update={"benchmark_id": "b1", "ran": RunAgents(selection=True, agents=((None, "openai/gpt-5.2"),))}
    )
    after = {a.spec_id: a for a in plan(desired, observed(smoked)).actions}
    assert after["runs/full"].kind is ActionKind.SUBMIT


def test_the_apply_budget_blocks_what_does_not_fit() -> None:
    desired = Desired(runs=(spec(SMOKE, "runs/a"), spec(FULL, "runs/b")))
    p = plan(desired, observed(), Policy(max_attempts_per_apply=10))
    assert [(a.spec_id, a.kind.value) for a in p.actions] == [("runs/a", "submit"), ("runs/b", "blocked")]
    assert p.actions[1].blocked_by == "over_budget"


def test_targets_limit_the_plan_to_the_named_specs_and_skip_orphans() -> None:
    desired = Desired(runs=(spec(SMOKE, "runs/a"), spec(FULL, "runs/b")))
    p = plan(desired, observed(run("runs/gone", "0" * 16)), Policy(targets=frozenset({"runs/b"})))
    assert [(a.spec_id, a.kind.value) for a in p.actions] == [("runs/b", "submit")]


def test_a_rule_that_needs_the_benchmark_blocks_the_submit() -> None:
    from reconciler.specs.rules import BenchmarkFacts

    facts = BenchmarkFacts(key="tb", name="TB", requires_judge_api_key=True, requires_judge_model=True)
    (action,) = plan(Desired(runs=(spec(FULL),)), observed(benchmarks={"tb": bench(facts=facts)})).actions
    assert action.blocked_by == "validation" and "judge_api_key_secret" in action.reason


def test_the_plan_is_deterministic_and_ordered_by_spec_id() -> None:
    desired = Desired(runs=(spec(FULL, "runs/b"), spec(SMOKE, "runs/a")))
    first, second = plan(desired, observed()), plan(desired, observed())
    assert first.model_dump_json() == second.model_dump_json()
    assert [a.spec_id for a in first.actions] == ["runs/a", "runs/b"]


def test_a_render_is_planned_only_when_the_leaderboard_changed() -> None:
    b = benchmark_spec('[benchmark]\nref = "tb"\n[leaderboard]\noutput = "lb.md"\n')
    obs = observed(benchmarks={"tb": bench(leaderboard_digest="abc")})
    assert kinds(plan(Desired(benchmarks=(b,)), obs)) == ["render"]
    assert b.leaderboard is not None
    done = {"benchmarks/tb": render_digest("abc", b.leaderboard, "")}
    assert kinds(plan(Desired(benchmarks=(b,)), obs.model_copy(update={"rendered": done}))) == []


LEADERBOARD = '[benchmark]\nref = "tb"\n[leaderboard]\noutput = "lb.md"\n'


@pytest.mark.parametrize(
    ("edit", "templates"),
    [
        ('rank_by = "cost_per_task"\n', ""),
        ('scope = "repo"\n', ""),
        ('chart = "lb.svg"\n', ""),
        ('name = "board"\n', ""),
        ("", "another-template"),
    ],
    ids=["rank_by", "scope", "chart", "name", "template"],
)
def test_changing_a_render_input_plans_a_render_though_the_standings_did_not_change(edit: str, templates: str) -> None:
    before = benchmark_spec(LEADERBOARD)
    after = benchmark_spec(LEADERBOARD + edit)
    assert before.leaderboard is not None
    obs = observed(benchmarks={"tb": bench(leaderboard_digest="abc")}).model_copy(
        update={
            "rendered": {"benchmarks/tb": render_digest("abc", before.leaderboard, "")},
            "templates_digest": templates,
        }
    )
    assert kinds(plan(Desired(benchmarks=(after,)), obs)) == ["render"]


def test_a_changed_output_path_plans_a_render() -> None:
    before = benchmark_spec(LEADERBOARD)
    after = benchmark_spec(LEADERBOARD.replace("lb.md", "boards/lb.md"))
    assert before.leaderboard is not None
    obs = observed(benchmarks={"tb": bench(leaderboard_digest="abc")}).model_copy(
        update={"rendered": {"benchmarks/tb": render_digest("abc", before.leaderboard, "")}}
    )
    [action] = plan(Desired(benchmarks=(after,)), obs).actions
    assert action.kind is ActionKind.RENDER and action.reason.endswith("render boards/lb.md")


def test_a_replace_blocked_by_a_shared_owner_spends_none_of_the_apply_budget() -> None:
    changed = spec(SMOKE, "runs/a")
    new = spec(SMOKE.replace('task_names = ["t1"]', 'task_names = ["t1", "t2"]'), "runs/b")
    obs = observed(run("runs/a", "0" * 16), shared_owner=True)
    by_spec = {a.spec_id: a for a in plan(Desired(runs=(changed, new)), obs, Policy(max_attempts_per_apply=2)).actions}
    assert by_spec["runs/a"].blocked_by == "shared_owner"
    assert by_spec["runs/b"].kind is ActionKind.SUBMIT, by_spec["runs/b"].reason


def test_a_replace_of_a_run_newer_than_the_checkout_is_blocked_and_spends_none_of_the_budget() -> None:
    changed = spec(SMOKE, "runs/a")
    new = spec(SMOKE.replace('task_names = ["t1"]', 'task_names = ["t1", "t2"]'), "runs/b")
    obs = observed(run("runs/a", "0" * 16), behind={"r1": "c" * 40})
    by_spec = {a.spec_id: a for a in plan(Desired(runs=(changed, new)), obs, Policy(max_attempts_per_apply=2)).actions}
    assert by_spec["runs/a"].blocked_by == "stale_checkout" and "git pull" in by_spec["runs/a"].reason
    assert by_spec["runs/b"].kind is ActionKind.SUBMIT, by_spec["runs/b"].reason


def test_a_pruned_orphan_newer_than_the_checkout_is_kept() -> None:
    (orphan,) = plan(
        Desired(), observed(run("runs/gone", "0" * 16), behind={"r1": "c" * 40}), Policy(prune=True)
    ).actions
    assert orphan.kind is ActionKind.BLOCKED and orphan.blocked_by == "stale_checkout" and not orphan.will_stop


def test_under_a_shared_owner_an_unknown_spec_id_is_not_called_deleted_nor_offered_to_prune() -> None:
    (orphan,) = plan(Desired(), observed(run("runs/gone", "0" * 16), shared_owner=True)).actions
    assert orphan.kind is ActionKind.ORPHAN and not orphan.will_stop
    assert "--prune" not in orphan.reason and "another's run" in orphan.reason
