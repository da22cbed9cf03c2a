"""Carry out a plan: independent actions in parallel within a bound, each reported on its own.

The one promise that matters most lives here: a spec's config is never submitted twice.
- Right before a submit, the runs on the benchmark are read again (every run not positively
  known as ours is asked of the platform) and any run that already carries this spec's
  marker is adopted instead.
- Right after a submit, the live runs carrying the same marker are looked up: another
  machine may have submitted the same config at the same moment. The newest is kept (the
  rule every plan follows: core.world.keeper) and the others are stopped at once, so
  concurrent applies end with one live run.
- The intent is written to the state file before the submit, and the run after it; if the
  process dies in between, the next plan finds the run by its marker and adopts it.
- A submit whose outcome is unknown (timeout, dropped connection, 5xx) is never retried
  blindly: the runs are looked up again, and if none carries the marker the action fails
  with the intent kept, so the next plan looks again before anything is submitted.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict

from ..core.identity import Marker, claim_problem, marked_payload, stop_refusal
from ..core.plan import Action, ActionKind, Plan
from ..core.world import ACTIVE, Observed
from ..osmosis.errors import Conflict, PlatformError, SubmitOutcomeUnknown
from .observe import marker_of
from .session import RepoSession
from .state import Intent, SpecRecord

AfterSubmit = Callable[[str], None]
"""Called with the new run's id right after the platform accepted a submit, before the state
file records it: the seam where a test kills the process to prove the next run adopts the run
instead of submitting it again (tests/e2e/crash_after_submit.py)."""


class ActionResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Action
    ok: bool
    message: str
    run_id: str | None = None
    run_name: str | None = None
    adopted: bool = False


class ApplyReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    results: tuple[ActionResult, ...]

    @property
    def failed(self) -> list[ActionResult]:
        return [r for r in self.results if not r.ok]


Downloader = Callable[[Action], Awaitable[ActionResult]]
Renderer = Callable[[Action], Awaitable[ActionResult]]


class Applier:
    after_submit: AfterSubmit | None = None  # injected by tests only; see AfterSubmit

    def __init__(
        self,
        session: RepoSession,
        observed: Observed,
        *,
        parallelism: int = 4,
        downloader: Downloader | None = None,
        renderer: Renderer | None = None,
    ) -> None:
        self.session = session
        self.client = session.client
        self.state = session.state
        self.observed = observed
        # runs a renamed spec inherited (recorded earlier, or moved by this plan)
        self.aliases = dict(observed.moved)
        self.desired = {d.spec.id: d for d in session.desired.runs}
        self.gate = asyncio.Semaphore(parallelism)
        self.downloader = downloader
        self.renderer = renderer
        self._adopted = observed.adopted_markers()
        # runs this apply asked to stop: the platform shows them running until they are cleaned up
        self._asked_to_stop: set[str] = set()
        # run id -> created_at of the platform's submit answer: the order every plan will see
        self._created: dict[str, str] = {}
        self._head: asyncio.Future[str | None] | None = None  # `_commit`

    async def run(self, plan: Plan) -> ApplyReport:
        for action in plan.actions:
            if action.kind is ActionKind.MOVED and action.spec_id is not None:
                self.aliases.update(dict.fromkeys(action.moved_runs, action.spec_id))
        todo = [a for a in plan.actions if a.changes]
        results = await asyncio.gather(*(self._guarded(a) for a in todo))
        self.session.save_state()
        self.session.ownership.remember()
        return ApplyReport(results=tuple(results))

    async def _guarded(self, action: Action) -> ActionResult:
        async with self.gate:
            try:
                return await self._dispatch(action)
            except PlatformError as exc:
                return ActionResult(action=action, ok=False, message=exc.message)

    async def _dispatch(self, action: Action) -> ActionResult:
        if action.kind is ActionKind.SUBMIT:
            return await self._submit(action)
        if action.kind is ActionKind.REPLACE:
            stopped = await self._stop(action)
            if not stopped.ok:
                return stopped.model_copy(update={"message": f"not replaced: {stopped.message}"})
            submitted = await self._submit(action)
            return submitted.model_copy(update={"message": f"stopped {action.run_name}; {submitted.message}"})
        if action.kind in (ActionKind.STOP, ActionKind.ORPHAN):
            return await self._stop(action)
        if action.kind is ActionKind.MOVED:
            return self._moved(action)
        if action.kind is ActionKind.DOWNLOAD:
            if self.downloader is None:
                return ActionResult(action=action, ok=True, message="skipped: downloads run in `reconciler download`")
            return await self._refused_download(action) or await self.downloader(action)
        if action.kind is ActionKind.RENDER:
            if self.renderer is None:
                return ActionResult(
                    action=action, ok=True, message="skipped: leaderboards render in `reconciler render`"
                )
            return await self.renderer(action)
        return ActionResult(action=action, ok=True, message="nothing to do")

    # --- stop ---------------------------------------------------------------------------------

    async def _stop(self, action: Action) -> ActionResult:
        assert action.run_id is not None
        # the plan refused it already (core.plan._guarded), unless it was saved before the rule applied
        refusal = stop_refusal(self.session.owner, self.session.shared_owner)
        if refusal is not None:
            return ActionResult(action=action, ok=False, message=f"{action.run_name} not stopped: {refusal.reason}")
        detail = await self.client.get_run(action.run_id)
        # Ownership is read from the platform again right before acting, never assumed; a run adopted
        # by a spec's `adopt` (core/adopt.py) has no marker of its own and is ours by its config.
        marker = marker_of(detail) or self._adopted.get(action.run_id)
        problem = claim_problem(marker, self._believed(action.run_id), self.session.owner)
        if (
            problem is None
            and marker is not None
            and action.spec_id not in (marker.spec_id, self.aliases.get(action.run_id))
        ):
            problem = "is not owned by this repository"
        if problem is not None:
            # the state file or the cache claimed what the platform contradicts (edited by hand):
            # keep the run, and remember what it really carries, so the next plan does not plan
            # the same refused stop
            self.session.ownership.learn(action.run_id, detail)
            return ActionResult(
                action=action,
                ok=False,
                message=f"{action.run_name} {problem}; not stopped. Run `reconciler plan` again",
            )
        status = detail.benchmark_run.status
        if status not in ACTIVE:
            return ActionResult(
                action=action, ok=True, message=f"{action.run_name} already {status}", run_id=action.run_id
            )
        # the plan asked too (operations.stop_targets); asked again of the run read right now
        behind = await self.session.history.behind_commit(detail)
        refusal = stop_refusal(self.session.owner, self.session.shared_owner, behind=behind)
        if refusal is not None:
            return ActionResult(action=action, ok=False, message=f"{action.run_name} not stopped: {refusal.reason}")
        try:
            await self.client.stop_run(action.run_id)
        except Conflict:
            return ActionResult(
                action=action, ok=True, message=f"{action.run_name} had already ended", run_id=action.run_id
            )
        self._asked_to_stop.add(action.run_id)
        return ActionResult(
            action=action, ok=True, message=f"stopped {action.run_name}", run_id=action.run_id, run_name=action.run_name
        )

    def _believed(self, run_id: str | None) -> Marker | None:
        """The marker the plan took the run to carry (from the state file, the cache or a read)."""
        return next((r.marker for r in self.observed.runs if r.id == run_id), None)

    async def _refused_download(self, action: Action) -> ActionResult | None:
        """Why the run must not be downloaded as this spec's, read from the platform; None when it may."""
        assert action.run_id is not None
        actual = (await self.session.ours_now(self.observed, [action.run_id])).get(action.run_id)
        why = claim_problem(actual, self._believed(action.run_id), self.session.owner)
        if why is None:
            return None
        # a claim of the state file or this machine's cache that the platform contradicts:
        # `ours_now` replaced it with what the run really carries
        return ActionResult(
            action=action,
            ok=False,
            message=f"{action.run_name} {why}; not downloaded. Run `reconciler plan` again",
            run_id=action.run_id,
            run_name=action.run_name,
        )

    # --- submit -------------------------------------------------------------------------------

    async def _submit(self, action: Action) -> ActionResult:
        assert action.spec_id is not None and action.fingerprint is not None
        desired = self.desired[action.spec_id]
        marker = Marker(owner=self.session.owner, spec_id=action.spec_id, fingerprint=action.fingerprint)
        benchmark = self.observed.benchmarks.get(desired.spec.config.experiment.benchmark)
        benchmark_id = benchmark.id if benchmark else None

        existing = await self._find_marked_run(benchmark_id, marker)
        if existing is not None:
            return self._record(action, marker, existing[0], existing[1], benchmark_id, adopted=True)
        submitted = await self._submit_new(action, marker, benchmark_id)
        if not submitted.ok or submitted.adopted or submitted.run_id is None:
            return submitted
        return await self._settle_duplicates(submitted, marker, benchmark_id)

    async def _commit(self) -> str | None:
        """The commit this checkout stands on, sent with each submit (identity.COMMIT_ENV); read once."""
        if self._head is None:
            from ..vcs.history import head_commit

            self._head = asyncio.ensure_future(asyncio.to_thread(head_commit, self.session.project.root))
        return await asyncio.shield(self._head)

    async def _submit_new(self, action: Action, marker: Marker, benchmark_id: str | None) -> ActionResult:
        assert action.spec_id is not None and action.fingerprint is not None
        desired = self.desired[action.spec_id]

        intent = Intent(spec_id=action.spec_id, fingerprint=action.fingerprint, benchmark_id=benchmark_id)
        # an older intent for this config found no run in the fresh look-up above: it is replaced, not repeated
        self.state.intents = [
            i for i in self.state.intents if (i.spec_id, i.fingerprint) != (intent.spec_id, intent.fingerprint)
        ]
        self.state.intents.append(intent)
        self.session.save_state()
        try:
            result = await self.client.submit_run(marked_payload(desired.spec.config, marker, await self._commit()))
        except SubmitOutcomeUnknown as exc:
            found = await self._find_marked_run(benchmark_id, marker)
            if found is not None:
                return self._record(action, marker, found[0], found[1], benchmark_id, adopted=True)
            return ActionResult(
                action=action,
                ok=False,
                message=f"submit outcome unknown ({exc.message}); no run carries the marker yet."
                " Run `reconciler plan` again: it adopts the run if the platform accepted it",
            )
        except PlatformError:
            self.state.intents.remove(intent)
            self.session.save_state()
            raise
        if Applier.after_submit is not None:
            Applier.after_submit(result.id)
        self.state.intents.remove(intent)
        self._created[result.id] = result.created_at
        return self._record(action, marker, result.id, result.name, benchmark_id)

    def _record(
        self,
        action: Action,
        marker: Marker,
        run_id: str,
        run_name: str,
        benchmark_id: str | None,
        *,
        adopted: bool = False,
    ) -> ActionResult:
        assert action.spec_id is not None
        self.state.markers[run_id] = marker
        self.state.specs[action.spec_id] = SpecRecord(
            run_id=run_id, run_name=run_name, fingerprint=marker.fingerprint, benchmark_id=benchmark_id
        )
        self.state.intents = [
            i for i in self.state.intents if (i.spec_id, i.fingerprint) != (marker.spec_id, marker.fingerprint)
        ]
        self.session.save_state()
        verb = "adopted" if adopted else "submitted"
        return ActionResult(
            action=action, ok=True, message=f"{verb} {run_name}", run_id=run_id, run_name=run_name, adopted=adopted
        )

    async def _find_marked_run(self, benchmark_id: str | None, marker: Marker) -> tuple[str, str] | None:
        """The newest run carrying exactly this marker, asked of the platform, that the plan did not
        already see carrying it.

        A run the plan saw with this marker was weighed by it: the plan submits a config it saw a
        run of only when `--replace` asks for that config again, so such a run never stands in for
        this submit. A run the plan saw without knowing its marker (a wrong cache) still counts."""
        seen = {r.id for r in self.observed.runs if r.marker == marker}
        found = [r for r in await self.session.ownership.marked_runs(benchmark_id, marker) if r.id not in seen]
        return (found[0].id, found[0].name or found[0].id) if found else None

    async def _settle_duplicates(
        self, submitted: ActionResult, marker: Marker, benchmark_id: str | None
    ) -> ActionResult:
        """Keep the newest live run of this exact config (`core.world.keeper`'s rule) and stop the
        others at once: with no idempotency key on the platform, another machine may have
        submitted it concurrently."""
        assert submitted.run_id is not None
        mine = submitted.run_id
        # a run this apply stopped (a `--replace` of this same config) still shows active while it ends
        live = {
            i.id: i
            for i in await self.session.ownership.marked_runs(benchmark_id, marker)
            if i.is_active and i.id not in self._asked_to_stop
        }

        def order(run_id: str) -> tuple[str, str]:
            # plan's order (core.world.keeper): creation time, then id; a run the listing does not
            # show yet is placed by its submit answer, and only without one taken as the newest
            item = live.get(run_id)
            created = item.created_at if item else self._created.get(run_id, "\uffff")
            return (created or "", run_id)

        keep = max({*live, mine}, key=order)
        copies = sorted(
            r
            for r in {*live, mine}
            if r != keep
            and stop_refusal(self.session.owner, self.session.shared_owner, submitted_here=r == mine) is None
        )
        if not copies:
            return submitted
        stopped = [r for r in await asyncio.gather(*(self._stop_copy(r, marker) for r in copies)) if r]
        names = {r: (live[r].name or r) if r in live else (submitted.run_name or r) for r in {*copies, keep}}
        if keep == mine:
            if not stopped:
                return submitted
            note = f"; stopped {', '.join(names[r] for r in stopped)}: duplicate of it, submitted concurrently"
            return submitted.model_copy(update={"message": submitted.message + note})
        kept = self._record(submitted.action, marker, keep, names[keep], benchmark_id, adopted=True)
        fate = "then stopped it" if mine in stopped else "which had already ended"
        return kept.model_copy(
            update={
                "message": f"submitted {names[mine]}, {fate}: duplicate of {names[keep]},"
                " submitted concurrently; kept that one"
            }
        )

    async def _stop_copy(self, run_id: str, marker: Marker) -> str | None:
        """Stop a duplicate after reading its marker from the platform again; returns its id when stopped."""
        detail = await self.client.get_run(run_id)
        if marker_of(detail) != marker or detail.benchmark_run.status not in ACTIVE:
            return None
        try:
            await self.client.stop_run(run_id)
        except Conflict:
            return None
        self._asked_to_stop.add(run_id)
        return run_id

    def _moved(self, action: Action) -> ActionResult:
        """A renamed spec keeps its runs: record which spec id they belong to now."""
        assert action.spec_id is not None and action.run_id is not None
        for run_id in action.moved_runs:
            self.state.moved[run_id] = action.spec_id
        old = self.state.specs.pop(action.moved_from or "", None)
        self.state.specs[action.spec_id] = SpecRecord(
            run_id=action.run_id,
            run_name=action.run_name or action.run_id,
            fingerprint=action.fingerprint or "",
            benchmark_id=old.benchmark_id if old else None,
        )
        self.session.save_state()
        return ActionResult(
            action=action,
            ok=True,
            message=f"recorded the rename {action.moved_from} -> {action.spec_id}; {action.run_name} kept",
            run_id=action.run_id,
            run_name=action.run_name,
        )
