"""`plan(desired, observed, policy) -> Plan`: the whole reconcile decision, with no I/O.

Per run spec, with `current` = an owned run of exactly the spec's fingerprint:

    state = "stopped"                     stop every active owned run of the spec
    current is active                     wait (and stop older active runs of the spec; of several
                                          live runs of the same config, keep the newest and stop
                                          the others: copies submitted concurrently, or a run a
                                          `--replace` stopped that the platform still shows
                                          running while it cleans up)
    current is terminal                   download what the spec asks for, once; else noop
    an older config is active
        on_change = "replace"             replace (stop old, submit new); blocked when protected
        on_change = "queue"               wait for it, then submit
    nothing owned                         submit

Submits and replaces are paid: attempts = tasks × agents × attempts_per_task. They are
blocked (never silently dropped) by: a run of the same config under the owner name earlier
versions wrote for this repository, the benchmark unknown or not synced, platform rules
that need the benchmark, missing secret records, the benchmark's `[policy]`, and the
per-apply budget. Owned runs whose spec is gone are orphans, stopped only with `prune`, unless a desired spec
with no run of its own has exactly their config: then the spec file was renamed, and the
runs move to the new id (`moved`, nothing submitted). Policies are looked up by the
benchmark's platform id, however a spec names it (key, name or id). Runs that are not
ours are never in the plan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, computed_field

from ..specs import rules
from ..specs.diagnostics import Severity, dotted
from ..specs.models import BenchmarkSpec, LeaderboardTable, RunSpec
from ..values import Value
from . import adopt
from .cost import Cost, agent_key, agent_models, estimate_cost, is_full_run
from .identity import StopRefusal, canonical_json, stop_refusal
from .replace import replace_reason
from .world import HAS_OUTPUTS, Desired, DesiredRun, Observed, ObservedRun, Policy, RunStatus, keeper

PLAN_SCHEMA_VERSION = 1


class ActionKind(StrEnum):
    SUBMIT = "submit"
    REPLACE = "replace"
    STOP = "stop"
    DOWNLOAD = "download"
    RENDER = "render"
    WAIT = "wait"
    BLOCKED = "blocked"
    ORPHAN = "orphan"
    MOVED = "moved"
    NOOP = "noop"
    IMPORT = "import"  # an existing run adopted by `[reconcile] adopt`: changes nothing on the platform


CHANGING = frozenset(
    {
        ActionKind.SUBMIT,
        ActionKind.REPLACE,
        ActionKind.STOP,
        ActionKind.DOWNLOAD,
        ActionKind.RENDER,
        ActionKind.MOVED,
    }
)


class Action(Value):
    kind: ActionKind
    spec_id: str | None = None
    benchmark: str | None = None
    reason: str
    run_id: str | None = None  # the existing run acted on (stopped, replaced, waited on, downloaded)
    run_name: str | None = None
    fingerprint: str | None = None  # the config a submit sends
    previous_fingerprint: str | None = None
    cost: Cost | None = None
    blocked_by: str | None = None
    download_types: tuple[str, ...] = ()
    will_stop: bool = False  # an orphan that this apply stops (prune)
    warnings: tuple[str, ...] = ()  # rule warnings on the config a submit sends (they do not block it)
    moved_from: str | None = None  # the spec id a renamed spec's runs carry (moved)
    moved_runs: tuple[str, ...] = ()  # every run that moves to the new spec id

    @computed_field  # type: ignore[prop-decorator]
    @property
    def paid(self) -> bool:
        return self.kind in (ActionKind.SUBMIT, ActionKind.REPLACE)

    @property
    def changes(self) -> bool:
        return self.kind in CHANGING or (self.kind is ActionKind.ORPHAN and self.will_stop)


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_version: int = PLAN_SCHEMA_VERSION
    owner: str
    actions: tuple[Action, ...]
    desired_digest: str
    observed_digest: str
    unmanaged_runs: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def has_changes(self) -> bool:
        return any(a.changes for a in self.actions)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def paid_attempts(self) -> int:
        return sum(a.cost.attempts for a in self.actions if a.paid and a.cost)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def estimated_cost_usd(self) -> float | None:
        costs = [a.cost.estimated_usd for a in self.actions if a.paid and a.cost and a.cost.estimated_usd is not None]
        return round(sum(costs), 2) if costs else None

    @property
    def blocked(self) -> tuple[str, ...]:
        """The specs (or runs) with an action that cannot be carried out: never "no changes" while any remain."""
        names = (a.spec_id or a.run_name or "" for a in self.actions if a.kind is ActionKind.BLOCKED)
        return tuple(dict.fromkeys(names))

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for a in self.actions:
            out[a.kind.value] = out.get(a.kind.value, 0) + 1
        return out


# --- digests: what a saved plan was made from ---------------------------------------------


def desired_digest(desired: Desired) -> str:
    doc = {
        "runs": sorted(
            (r.spec.id, r.fingerprint, canonical_json(r.spec.reconcile.model_dump(mode="json"))) for r in desired.runs
        ),
        "benchmarks": sorted(canonical_json(b.model_dump(mode="json", exclude={"path"})) for b in desired.benchmarks),
    }
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()[:16]


def observed_digest(observed: Observed) -> str:
    """Only facts a plan acts on: owned runs and their status, secrets, benchmark readiness."""
    doc = {
        "runs": sorted(
            (r.id, r.status, r.marker.spec_id, r.marker.fingerprint)
            for r in observed.runs
            if r.marker and r.marker.owner == observed.owner
        ),
        "secrets": sorted(observed.secrets),
        "benchmarks": sorted((ref, b.id, b.sync_status, b.task_count) for ref, b in observed.benchmarks.items()),
        "downloaded": sorted((k, sorted(v)) for k, v in observed.downloaded.items()),
    }
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()[:16]


def _newest_first(runs: Iterable[ObservedRun]) -> list[ObservedRun]:
    return sorted(runs, key=lambda r: (r.created_at or "", r.id), reverse=True)


class _Move(BaseModel):
    model_config = ConfigDict(frozen=True)

    old_id: str
    runs: tuple[ObservedRun, ...]


# --- the planner -------------------------------------------------------------------------------


class _Planner:
    def __init__(self, desired: Desired, observed: Observed, policy: Policy) -> None:
        observed = adopt.claim(observed, {d.spec.id: d.fingerprint for d in desired.runs})
        self.desired = desired
        self.observed = observed
        self.policy = policy
        self.fingerprints = {d.spec.id: d.fingerprint for d in desired.runs}
        self.configs = set(self.fingerprints.values())
        owned = [r for r in observed.runs if r.marker is not None and r.marker.owner == observed.owner]
        self.unmanaged = observed.listed - len(owned)
        self.owned: dict[str, list[ObservedRun]] = {}
        for run in owned:
            self.owned.setdefault(self._home(run), []).append(run)
        self.moves = self._renamed_specs()
        for new_id, move in self.moves.items():
            left = [r for r in self.owned[move.old_id] if r not in move.runs]
            if left:
                self.owned[move.old_id] = left
            else:
                del self.owned[move.old_id]
            self.owned[new_id] = list(move.runs)
        for spec_id in self.owned:
            self.owned[spec_id] = _newest_first(self.owned[spec_id])
        self.policies: dict[str, list[BenchmarkSpec]] = {}
        for b in desired.benchmarks:
            state = observed.benchmarks.get(b.benchmark.ref)
            if state is not None:
                self.policies.setdefault(state.id, []).append(b)
        self.budget_left = policy.max_attempts_per_apply
        self.smoked = self._smoked_agents()

    def _home(self, run: ObservedRun) -> str:
        """The spec id a run belongs to: its marker's, or the one a recorded move gave it. A
        recorded move counts only while it still holds (old spec gone, new spec present), so a
        hand-edited entry can never hide a run from the spec that made it. The new spec's config
        may have changed since the move: the run is then its older config (replaced, queued or
        protected as the spec says), never an orphan running beside the new one; unless another
        spec now has the run's exact config, which inherits it instead (so an entry edited to
        point elsewhere can never make that spec submit the config again)."""
        assert run.marker is not None
        target = self.observed.moved.get(run.id)
        if target is not None and run.marker.spec_id not in self.fingerprints and target in self.fingerprints:
            fp = run.marker.fingerprint
            if self.fingerprints[target] == fp or fp not in self.configs:
                return target
        return run.marker.spec_id

    def _renamed_specs(self) -> dict[str, _Move]:
        """New spec id -> the runs it inherits: a desired spec with no run of its own whose exact
        config ran under exactly one spec id that is no longer desired (and no other spec
        competes for it). Anything ambiguous is left alone: the spec is submitted as new."""
        gone: dict[str, set[str]] = {}
        for spec_id, runs in self.owned.items():
            if spec_id not in self.fingerprints:
                for run in runs:
                    assert run.marker is not None
                    gone.setdefault(run.marker.fingerprint, set()).add(spec_id)
        # every desired spec of a config competes for its runs, with or without runs of its own:
        # otherwise a move would appear only once a competitor had submitted (and plans would not converge)
        specs_of: dict[str, list[str]] = {}
        for spec_id, fp in self.fingerprints.items():
            specs_of.setdefault(fp, []).append(spec_id)
        moves: dict[str, _Move] = {}
        for fp, new_ids in specs_of.items():
            old_ids = gone.get(fp, set())
            if len(new_ids) == 1 and new_ids[0] not in self.owned and len(old_ids) == 1:
                (old_id,) = old_ids
                carried = tuple(r for r in self.owned[old_id] if r.marker is not None and r.marker.fingerprint == fp)
                moves[new_ids[0]] = _Move(old_id=old_id, runs=carried)
        return moves

    def _smoked_agents(self) -> set[tuple[str, str]]:
        """(benchmark id, agent key) pairs that a FINISHED owned run on a task selection ran,
        as its own submitted config says (the spec may have changed since)."""
        default_harness = {b.id: b.default_harness for b in self.observed.benchmarks.values()}
        out: set[tuple[str, str]] = set()
        for runs in self.owned.values():
            for r in runs:
                if r.status != RunStatus.FINISHED or r.ran is None or not r.ran.selection or not r.benchmark_id:
                    continue
                harness = default_harness.get(r.benchmark_id)
                out.update((r.benchmark_id, agent_key(h or harness, m)) for h, m in r.ran.agents)
        return out

    def plan(self) -> Plan:
        actions: list[Action] = []
        for d in sorted(self.desired.runs, key=lambda r: r.spec.id):
            if self.policy.targeted(d.spec.id):
                actions.extend(self._adopting(d) if d.spec.reconcile.adopt else self._run_spec(d))
        if not self.policy.targets:
            actions.extend(self._orphans())
        for b in sorted(self.desired.benchmarks, key=lambda b: b.id):
            if self.policy.targeted(b.id):
                actions.extend(self._render(b))
        actions = [self._guarded(a) for a in actions]
        return Plan(
            owner=self.observed.owner,
            actions=tuple(actions),
            desired_digest=desired_digest(self.desired),
            observed_digest=observed_digest(self.observed),
            unmanaged_runs=self.unmanaged,
        )

    def _run_spec(self, d: DesiredRun) -> list[Action]:
        move = self.moves.get(d.spec.id)
        if move is None:
            return self._converge(d)
        latest = _newest_first(move.runs)[0]
        moved = Action(
            kind=ActionKind.MOVED,
            spec_id=d.spec.id,
            benchmark=d.spec.config.experiment.benchmark,
            reason=f"renamed from {move.old_id}; same config, so {latest.name} carries over (nothing is submitted)",
            run_id=latest.id,
            run_name=latest.name,
            fingerprint=d.fingerprint,
            moved_from=move.old_id,
            moved_runs=tuple(r.id for r in _newest_first(move.runs)),
        )
        return [moved, *self._converge(d)]

    def _converge(self, d: DesiredRun) -> list[Action]:
        spec, fp = d.spec, d.fingerprint
        ref = spec.config.experiment.benchmark
        runs = self.owned.get(spec.id, [])
        current = [r for r in runs if r.marker and r.marker.fingerprint == fp]
        older_active = [r for r in runs if r.active and r not in current]
        base = {"spec_id": spec.id, "benchmark": ref}

        if spec.reconcile.state == "stopped":
            active = [r for r in runs if r.active]
            if not active:
                return [Action(kind=ActionKind.NOOP, reason="stopped, as the spec asks", **base)]
            return [self._stop(spec, r, 'the spec asks for state = "stopped"') for r in active]

        if current:
            live = [r for r in current if r.active]
            latest = keeper(live) if live else current[0]
            # no idempotency key on the platform: machines applying at once can each submit the
            # same config. Stopping the copies loses nothing (the kept run is the same config),
            # so protect does not hold them.
            out = [
                Action(
                    kind=ActionKind.STOP,
                    reason=f"duplicate of {latest.name}, the newest live run of this config",
                    run_id=r.id,
                    run_name=r.name,
                    **base,
                )
                for r in live
                if r is not latest
            ]
            out += [self._stop(spec, r, "runs a config this spec no longer has") for r in older_active]
            if spec.id in self.policy.replace:
                return [*out, self._replace_requested(d, latest)]
            if latest.active:
                progress = f"{latest.ingested}/{latest.expected}" if latest.expected else "no results yet"
                out.append(
                    Action(
                        kind=ActionKind.WAIT,
                        reason=f"{latest.status} ({progress})",
                        run_id=latest.id,
                        run_name=latest.name,
                        fingerprint=fp,
                        **base,
                    )
                )
                return out
            return [*out, self._after_terminal(spec, latest)]

        if older_active:
            old = older_active[0]
            if spec.reconcile.on_change == "queue":
                return [
                    Action(
                        kind=ActionKind.WAIT,
                        reason=f'config changed; on_change = "queue" waits for {old.name} ({old.status}) to end',
                        run_id=old.id,
                        run_name=old.name,
                        fingerprint=fp,
                        previous_fingerprint=old.marker.fingerprint if old.marker else None,
                        **base,
                    )
                ]
            if spec.reconcile.protect and not self.policy.allow_protected:
                return [
                    Action(
                        kind=ActionKind.BLOCKED,
                        blocked_by="protected",
                        reason=f"config changed but the spec is protected: {old.name} keeps running;"
                        " apply with --allow-protected to replace it",
                        run_id=old.id,
                        run_name=old.name,
                        fingerprint=fp,
                        **base,
                    )
                ]
            replace = self._paid(d, ActionKind.REPLACE, old)
            if replace.kind is ActionKind.BLOCKED:
                return [replace]  # nothing older is stopped while the new config cannot start
            # the replace stops the newest; any other older config still running ends in the same apply
            rest = [self._stop(spec, r, "runs a config this spec no longer has") for r in older_active[1:]]
            return [*rest, replace]
        return [self._paid(d, ActionKind.SUBMIT, None)]

    def _adopting(self, d: DesiredRun) -> list[Action]:
        """`[reconcile] adopt` (core/adopt.py): blocked with the reason, or `import` before the usual actions."""
        said = adopt.verdict(d.spec.id, d.spec.reconcile.adopt, self.observed)
        if said is None:
            return self._run_spec(d)
        base = {"spec_id": d.spec.id, "benchmark": d.spec.config.experiment.benchmark}
        kind = ActionKind.BLOCKED if said.blocked else ActionKind.IMPORT
        note = Action(
            kind=kind,
            blocked_by="adopt" if said.blocked else None,
            reason=said.reason,
            run_id=said.run_id,
            run_name=said.run_name,
            **base,
        )
        return [note] if said.blocked else [note, *self._run_spec(d)]

    def _replace_requested(self, d: DesiredRun, latest: ObservedRun) -> Action:
        """The same config again, asked for with --replace (see core/replace.py)."""
        if latest.active and d.spec.reconcile.protect and not self.policy.allow_protected:
            return self._stop(d.spec, latest, replace_reason(latest))
        action = self._paid(d, ActionKind.REPLACE if latest.active else ActionKind.SUBMIT, latest)
        if action.kind is ActionKind.BLOCKED:
            return action
        return action.model_copy(update={"reason": replace_reason(latest)})

    def _after_terminal(self, spec: RunSpec, run: ObservedRun) -> Action:
        base = {"spec_id": spec.id, "benchmark": spec.config.experiment.benchmark, "run_id": run.id}
        wanted = spec.reconcile.download_types()
        have = self.observed.downloaded.get(run.id, frozenset())
        missing = tuple(t for t in wanted if t not in have)
        if missing and run.status in HAS_OUTPUTS:
            return Action(
                kind=ActionKind.DOWNLOAD,
                reason=f"{run.status}; fetch {', '.join(missing)}",
                run_name=run.name,
                download_types=missing,
                **base,
            )
        if run.status == RunStatus.FINISHED:
            reason = "finished, in sync"
        else:
            reason = f"{run.status}; not resubmitted automatically (edit the spec to submit a new run)"
        return Action(kind=ActionKind.NOOP, reason=reason, run_name=run.name, **base)

    def _stop(self, spec: RunSpec, run: ObservedRun, why: str) -> Action:
        base = {"spec_id": spec.id, "benchmark": spec.config.experiment.benchmark}
        if spec.reconcile.protect and not self.policy.allow_protected:
            return Action(
                kind=ActionKind.BLOCKED,
                blocked_by="protected",
                reason=f"{why}, but the spec is protected; apply with --allow-protected to stop {run.name}",
                run_id=run.id,
                run_name=run.name,
                **base,
            )
        return Action(kind=ActionKind.STOP, reason=why, run_id=run.id, run_name=run.name, **base)

    def _paid(self, d: DesiredRun, kind: ActionKind, old: ObservedRun | None) -> Action:
        spec, fp = d.spec, d.fingerprint
        ref = spec.config.experiment.benchmark
        base = {
            "spec_id": spec.id,
            "benchmark": ref,
            "fingerprint": fp,
            "run_id": old.id if old else None,
            "run_name": old.name if old else None,
            "previous_fingerprint": old.marker.fingerprint if old and old.marker else None,
        }
        # a --replace asks to pay for this config again: the run may be another repository's
        if (spec.id, fp) in self.observed.legacy and spec.id not in self.policy.replace:
            legacy = self.observed.legacy_owner
            return self._blocked(
                base,
                "legacy_owner",
                f"a run of this exact config is marked with owner {legacy!r}: the name earlier versions gave this"
                " repository's runs, and the name every repository of this workspace without a GitHub origin or"
                f" an owner still writes. If it is this repository's run and no such repository submits here, set"
                f' owner = "{legacy}" in reconciler.toml to manage it; otherwise submit this config anew with'
                f" `reconciler apply --replace {spec.id}`",
            )
        bench = self.observed.benchmarks.get(ref)
        if bench is None:
            return self._blocked(
                base,
                "benchmark_not_found",
                f"benchmark {ref!r} is not in the workspace; add it on the platform or fix experiment.benchmark",
            )
        if not bench.ready:
            detail = f": {bench.sync_error}" if bench.sync_error else ""
            return self._blocked(
                base,
                "benchmark_not_ready",
                f"benchmark {ref!r} is not synced ({bench.sync_status}{detail}); retry once its task list is ready",
            )
        cost = estimate_cost(spec.config, bench)
        problems = [
            f"{dotted(f.path)}: {f.message}"
            for f in rules.check(spec.config, bench.facts)
            if f.severity is Severity.ERROR
        ]
        if problems:
            return self._blocked(base, "validation", "; ".join(problems), cost)
        needed = list(dict.fromkeys([*spec.config.required_secret_names(), *bench.required_secret_names]))
        missing = [n for n in needed if n not in self.observed.secrets]
        if missing:
            hint = ", ".join(f"`reconciler secrets set {n}`" for n in missing)
            return self._blocked(
                base, "secrets_missing", f"secret records missing: {', '.join(missing)}; create them with {hint}", cost
            )
        policies = self.policies.get(bench.id, [])
        limits = [p for p in policies if p.policy.max_attempts_per_run]
        limit = min(limits, key=lambda p: p.policy.max_attempts_per_run or 0) if limits else None
        if limit and limit.policy.max_attempts_per_run and cost.attempts > limit.policy.max_attempts_per_run:
            return self._blocked(
                base,
                "over_run_limit",
                f"{cost.attempts} attempts exceed max_attempts_per_run = {limit.policy.max_attempts_per_run}"
                f" in {limit.path}; select fewer tasks or raise the limit",
                cost,
            )
        if any(p.policy.require_smoke for p in policies) and is_full_run(spec.config):
            unsmoked = [k for k in agent_models(spec.config, bench.default_harness) if (bench.id, k) not in self.smoked]
            if unsmoked:
                names = ", ".join(
                    k.split("|", 1)[1] + (f" ({k.split('|', 1)[0]})" if k.split("|", 1)[0] else "") for k in unsmoked
                )
                return self._blocked(
                    base,
                    "smoke_required",
                    f"require_smoke: no finished smoke run for {names}; add a spec with [tasks] task_names for it first",
                    cost,
                )
        # a replace whose stop is refused is blocked (`_guarded`): it spends none of the budget
        spends = kind is not ActionKind.REPLACE or self._stop_refused(old.id if old else None) is None
        if self.budget_left is not None and spends:
            if cost.attempts > self.budget_left:
                return self._blocked(
                    base,
                    "over_budget",
                    f"{cost.attempts} attempts exceed what is left of this apply's budget ({self.budget_left});"
                    " raise [apply] max_attempts_per_apply in reconciler.toml or apply with --target",
                    cost,
                )
            self.budget_left -= cost.attempts
        if kind is ActionKind.REPLACE and old is not None:
            reason = f"config changed: stop {old.name} ({old.status}), submit the new config"
        else:
            reason = "no run of this config yet"
        warnings = tuple(
            f"{dotted(f.path)}: {f.message}"
            for f in rules.check(spec.config, bench.facts)
            if f.severity is Severity.WARNING
        )
        return Action(kind=kind, reason=reason, cost=cost, warnings=warnings, **base)

    def _stop_refused(self, run_id: str | None) -> StopRefusal | None:
        """identity.stop_refusal for the run: under a shared owner (Observed.shared_owner), or one
        submitted from a commit this checkout is behind (Observed.behind)."""
        behind = self.observed.behind.get(run_id) if run_id else None
        return stop_refusal(self.observed.owner, self.observed.shared_owner, behind=behind)

    def _guarded(self, action: Action) -> Action:
        """An action that would stop a run the one rule of stops refuses (identity.stop_refusal) is
        blocked, whatever asked for it (an edit, a duplicate, `state`, `--prune`); under a shared
        owner, a run no spec here names is not called this repository's deleted spec's."""
        refusal = self._stop_refused(action.run_id)
        if refusal is None:
            return action
        if action.kind is ActionKind.ORPHAN and not action.will_stop:
            if refusal.code != "shared_owner":
                return action
            return action.model_copy(
                update={
                    "reason": f"no spec here has this id, and owner {self.observed.owner!r} is shared by every"
                    " repository of this workspace without a GitHub origin or an owner: it may be another's run,"
                    " which reconciler never stops"
                }
            )
        stops = action.kind in (ActionKind.STOP, ActionKind.REPLACE, ActionKind.ORPHAN)
        if not stops:
            return action
        return action.model_copy(
            update={
                "kind": ActionKind.BLOCKED,
                "blocked_by": refusal.code,
                "will_stop": False,
                "reason": f"{action.reason}; but {refusal.reason}",
            }
        )

    @staticmethod
    def _blocked(base: dict[str, str | None], code: str, reason: str, cost: Cost | None = None) -> Action:
        return Action(kind=ActionKind.BLOCKED, blocked_by=code, reason=reason, cost=cost, **base)

    def _orphans(self) -> list[Action]:
        wanted = {d.spec.id for d in self.desired.runs}
        out = []
        for spec_id in sorted(self.owned):
            if spec_id in wanted:
                continue
            for run in self.owned[spec_id]:
                if not run.active:
                    continue
                reason = "its spec was deleted; " + (
                    "stopped by --prune" if self.policy.prune else "stopped only with --prune"
                )
                out.append(
                    Action(
                        kind=ActionKind.ORPHAN,
                        spec_id=spec_id,
                        reason=reason,
                        run_id=run.id,
                        run_name=run.name,
                        will_stop=self.policy.prune,
                    )
                )
        return out

    def _render(self, b: BenchmarkSpec) -> list[Action]:
        if b.leaderboard is None:
            return []
        bench = self.observed.benchmarks.get(b.benchmark.ref)
        if bench is None:
            return []
        wanted = render_digest(bench.leaderboard_digest, b.leaderboard, self.observed.templates_digest)
        if self.observed.rendered.get(b.id) == wanted:
            return []
        return [
            Action(
                kind=ActionKind.RENDER,
                spec_id=b.id,
                benchmark=b.benchmark.ref,
                reason=f"leaderboard, [leaderboard] settings or templates changed; render {b.leaderboard.output}",
            )
        ]


def render_digest(leaderboard_digest: str, table: LeaderboardTable, templates_digest: str) -> str:
    """Everything a rendered leaderboard depends on: the platform's standings, the spec's
    [leaderboard] table (rank_by, scope, output, chart, name) and the templates. The state file
    records it after each render; a render is planned exactly when it differs."""
    doc = {"leaderboard": leaderboard_digest, "table": table.model_dump(mode="json"), "templates": templates_digest}
    return hashlib.sha256(canonical_json(doc).encode()).hexdigest()[:16]


def plan(desired: Desired, observed: Observed, policy: Policy | None = None) -> Plan:
    """Every action needed to converge, in a deterministic order (spec id, then kind)."""
    return _Planner(desired, observed, policy or Policy()).plan()
