"""`POST /api/cli/benchmark-runs`: the submit body checked with the same models and rules as
`reconciler validate`, then stored with its precomputed schedule.

Order of checks: structure (400 VALIDATION with dotted `issues`) -> benchmark by key, exact
name or id (404) -> synced (409 BENCHMARK_NOT_READY) -> docs/platform-api.md §4 rules with the
benchmark's facts (400) -> referenced secret records (404 `Secret(s) not found: A, B`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import ValidationError

from ..core.identity import COMMIT_ENV
from ..specs import rules
from ..specs.diagnostics import Severity, dotted
from ..specs.errors_text import describe_error
from ..specs.run_config import DEFAULT_MAX_CONCURRENT_ATTEMPTS, PAYLOAD_KEYS, RunConfig, payload_to_document
from .api import ApiError, Context
from .catalog import BILLING_REQUIRED, BY_KEY, NO_BILLING_WORKSPACE, BenchmarkSpec, TaskSpec
from .metrics import best_pass_at_1, score_agents
from .routes_benchmarks import find_benchmark
from .runview import agent_infos, force_of, iso
from .simulator import AgentPlan, SimInput, build_schedule, unit
from .store import RunData, RunRow, stable_uuid
from .timeline import PRODUCED, results, run_status

MAX_ATTEMPTS_PER_RUN = 20_000
_ADJECTIVES = (
    "amber", "bold", "brave", "bright", "calm", "clever", "crisp", "daring", "eager", "fancy",
    "gentle", "glad", "golden", "happy", "jolly", "keen", "lively", "lucky", "merry", "nimble",
    "polite", "proud", "quick", "quiet", "rapid", "shiny", "silver", "steady", "sunny", "swift",
    "tidy", "witty",
)  # fmt: skip
_ANIMALS = (
    "badger", "beaver", "bison", "crane", "dolphin", "eagle", "falcon", "ferret", "finch", "fox",
    "gecko", "heron", "ibis", "jaguar", "koala", "lemur", "lynx", "marten", "newt", "ocelot",
    "otter", "owl", "panda", "puffin", "quail", "raven", "seal", "stoat", "tapir", "walrus",
    "wombat", "yak",
)  # fmt: skip


def _issues(exc: ValidationError) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for err in exc.errors():
        path, message, code = describe_error(err, RunConfig)
        key = (dotted(path), message)
        if key not in seen:
            seen.add(key)
            out.append({"key": key[0], "message": message, "code": code})
    return out


def _invalid(issues: list[dict[str, Any]]) -> ApiError:
    return ApiError(400, "Invalid benchmark config", "VALIDATION", issues=issues)


def parse(body: dict[str, Any]) -> tuple[RunConfig, dict[str, str]]:
    """The config and the `secrets.provided` values, or 400 with every structural issue."""
    issues: list[dict[str, Any]] = [
        {"key": key, "message": f"unknown key; allowed here: {', '.join(PAYLOAD_KEYS)}", "code": "UNKNOWN_KEY"}
        for key in body
        if key not in PAYLOAD_KEYS
    ]
    provided: dict[str, str] = {}
    secrets = body.get("secrets")
    if isinstance(secrets, dict):
        raw = secrets.get("provided", {})
        extra = sorted(set(secrets) - {"required", "provided"})
        issues += [{"key": f"secrets.{k}", "message": "unknown key", "code": "UNKNOWN_KEY"} for k in extra]
        if isinstance(raw, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in raw.items()):
            provided = dict(raw)
        else:
            issues.append(
                {"key": "secrets.provided", "message": "must be an object of name -> string value", "code": "BAD_TYPE"}
            )
    try:
        config = RunConfig.model_validate(payload_to_document({k: v for k, v in body.items() if k in PAYLOAD_KEYS}))
    except ValidationError as exc:
        raise _invalid(_issues(exc) + issues) from None
    if issues:
        raise _invalid(issues)
    return config, provided


def _issue(finding: rules.Finding) -> dict[str, Any]:
    """A rule's finding as an answer's issue; its hint (`osmosis secret set NAME`) ends the message."""
    message = f"{finding.message}; {finding.hint}" if finding.hint else finding.message
    return {"key": dotted(finding.path), "message": message, "code": finding.code}


def select_tasks(spec: BenchmarkSpec, config: RunConfig) -> tuple[list[TaskSpec], str]:
    """The run's tasks in manifest order and the selection kind (full | parity | filtered)."""
    tasks = config.tasks
    if tasks is None or (tasks.task_set is None and not tasks.task_names and not tasks.categories):
        return list(spec.tasks), "full"
    if tasks.task_set is not None:
        chosen = spec.task_set(tasks.task_set)
        names = set(chosen.tasks if chosen else ())
        return [t for t in spec.tasks if t.name in names], "parity"
    names = set(tasks.task_names or ())
    categories = set(tasks.categories or ())
    return [t for t in spec.tasks if t.name in names or t.category in categories], "filtered"


def secret_scopes(ctx: Context, config: RunConfig, spec: BenchmarkSpec, provided: dict[str, str]) -> dict[str, str]:
    """NAME -> workspace | user | user_override for every referenced record; 404 naming the missing."""
    stored: dict[str, set[str]] = {}
    for secret in ctx.db.secrets(ctx.ws, ("workspace", "user")):
        stored.setdefault(secret.name, set()).add(secret.scope)
    run_supplied = set(config.secrets.required if config.secrets else ()) & set(provided)
    scopes: dict[str, str] = {}
    missing: list[str] = []
    for name in [*config.required_secret_names(), *spec.required_secret_names]:
        if name in scopes or name in missing or name in run_supplied:
            continue
        found = stored.get(name, set())
        if not found:
            missing.append(name)
        else:
            scopes[name] = "user_override" if len(found) == 2 else found.pop()
    if missing:
        url = f"{ctx.public_base}/secrets"
        raise ApiError(
            404,
            f"Secret(s) not found: {', '.join(missing)}",
            "SECRETS_NOT_FOUND",
            extra={"missing": missing, "platform_url": url, "details": {"platform_url": url, "missing": missing}},
        )
    return scopes


def sanitized(body: dict[str, Any]) -> dict[str, Any]:
    """The payload as stored and shown: `secrets.provided` keeps the names, never the values."""
    out = json.loads(json.dumps(body))
    secrets = out.get("secrets")
    if isinstance(secrets, dict) and isinstance(secrets.get("provided"), dict):
        secrets["provided"] = sorted(secrets["provided"])
    return dict(out)


def simulated_content(stored: dict[str, Any]) -> str:
    """The digest a run's simulated outcome is drawn from: the payload without the commit it was
    submitted from. That commit is provenance, not work, and changes with every commit of a
    repository, so keying outcomes on it made a repository's runs finish or fail by chance."""
    work = json.loads(json.dumps(stored))
    env = work.get("env_config")
    if isinstance(env, dict):
        env.pop(COMMIT_ENV, None)
    return hashlib.sha256(json.dumps(work, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def run_name(seed: int, ws_kind: str, ws_name: str, seq: int) -> str:
    adjective = _ADJECTIVES[int(unit("name-a", seed, ws_kind, ws_name, seq) * len(_ADJECTIVES))]
    animal = _ANIMALS[int(unit("name-b", seed, ws_kind, ws_name, seq) * len(_ANIMALS))]
    return f"{adjective}-{animal}-{seq}"


def submit(ctx: Context, body: dict[str, Any]) -> dict[str, Any]:
    config, provided = parse(body)
    try:
        bench_row = find_benchmark(ctx, config.experiment.benchmark)
    except ApiError as exc:
        exc.field = "experiment_config.benchmark"
        raise
    spec = BY_KEY[bench_row.key]
    if not spec.ready:
        raise ApiError(
            409,
            f"Benchmark {spec.name!r} is not ready (sync status: {spec.sync_status}); wait for its task list to sync",
            "BENCHMARK_NOT_READY",
        )
    findings = rules.check(config, spec.facts())
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        raise _invalid([_issue(f) for f in errors])
    warnings = [_issue(f) for f in findings if f not in errors]
    scopes = secret_scopes(ctx, config, spec, provided)
    tasks, selection = select_tasks(spec, config)
    expected = len(tasks) * len(config.agents) * config.attempts_per_task
    if expected > MAX_ATTEMPTS_PER_RUN:
        raise ApiError(
            400,
            f"This run has {expected} task attempts; the local platform runs at most {MAX_ATTEMPTS_PER_RUN}",
            "VALIDATION",
            field="execution_config.attempts_per_task",
        )
    if ctx.ws.name.split("/")[-1] == NO_BILLING_WORKSPACE:
        raise ApiError(
            403,
            f"Workspace {ctx.ws.name!r} has no valid billing, so benchmark runs cannot be submitted; add a"
            " payment method in the workspace's billing settings on the platform, then submit again",
            BILLING_REQUIRED,
        )
    stored = sanitized(body)
    content = simulated_content(stored)
    platform, ws = ctx.platform, ctx.ws
    with ctx.db.transaction():
        seq = ctx.db.next_run_seq(ws)
        run_id = stable_uuid("run", platform.seed, ws.kind, ws.name, seq)
        name = run_name(platform.seed, ws.kind, ws.name, seq)
        agents = agent_infos(run_id, stored, spec)
        execution = config.execution
        sim = SimInput(
            seed=platform.seed,
            run_id=run_id,
            content=content,
            tasks=tuple(tasks),
            agents=tuple(AgentPlan(a.model, a.effective_harness, force_of(a.env)) for a in agents),
            attempts=config.attempts_per_task,
            max_concurrent=(execution.max_concurrent_attempts if execution else None)
            or DEFAULT_MAX_CONCURRENT_ATTEMPTS,
            max_retries=(execution.max_retries if execution else None) or 0,
            timeout_multiplier=(execution.timeout_multiplier if execution else None) or 1.0,
            difficulty_offset=spec.difficulty_offset,
            base_duration=spec.base_duration,
            timeout_seconds=spec.timeout_seconds,
            force=force_of(config.env),
        )
        schedule = build_schedule(sim)
        final = results(schedule, schedule.end_at, None)
        task_names = [t.name for t in tasks]
        scores = score_agents(
            final,
            task_names,
            [(a.model, a.effective_harness) for a in agents],
            version=spec.version,
            run_id=run_id,
            run_name=name,
            completed_at=iso(ctx.now),
        )
        row = RunRow(
            id=run_id,
            workspace_id=ws.id,
            seq=seq,
            name=name,
            benchmark_id=bench_row.id,
            benchmark_key=spec.key,
            submitted_at=ctx.now,
            speed=platform.speed,
            task_count=len(tasks),
            agent_count=len(agents),
            expected=expected,
            selection=selection,
            queued_at=schedule.queued_at,
            running_at=schedule.running_at,
            end_at=schedule.end_at,
            final_status=schedule.final_status,
            final_ingested=sum(1 for s in final if s.outcome in PRODUCED),
            final_best=best_pass_at_1(scores),
            stopped_at=None,
        )
        ctx.db.insert_run(row, RunData(stored, scopes, task_names, schedule))
    status = run_status(row.queued_at, row.running_at, row.end_at, row.final_status, 0.0, None)
    return {
        "id": run_id,
        "name": name,
        "status": status,
        "created_at": iso(ctx.now),
        "workflow_id": f"benchmark-run/{run_id}",
        "task_count": len(tasks),
        "platform_url": ctx.run_url(run_id),
        "warnings": warnings,
    }
