"""What each spec's latest run found: the facts the results comment and the job summary show.

For every spec record (optionally only the targeted ones) whose run the platform still lists:

    active run            status only (the commit status says pending)
    terminal run          its results.csv (for a run a pull request asked for, downloaded into the
                          outputs folder unless current; for any other, only when already there),
                          per agent pass@1, pass@k, cost/time/tokens per task, the rank the
                          platform's leaderboard gives it, and the paired comparison with the
                          previous run of the same spec (its results.csv too)
    failed or stopped     also the reason, the last error its logs hold

Also where a run came from: `SpecRecord.commit`, the commit whose push submitted it, stamped by
`stamp_submissions` while the state file is being written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..core.identity import Marker
from ..core.run_results import (
    AgentReport,
    AgentResults,
    Comparison,
    ResultsError,
    RunReport,
    comparisons,
    parse_results,
)
from ..core.world import Observed, ObservedRun, RunStatus
from ..errors import ReconcilerError
from ..outputs.layout import run_dir_name
from ..render.leaderboard import Row, parse_rows
from ..safe_paths import writable_path
from ..specs.models import BenchmarkSpec, RunSpec
from .downloads import download_run
from .session import RepoSession
from .state import Replaced, SpecRecord

LOG_PAGE = 200  # the newest page of logs holds the reason a run ended


def stamp_submissions(
    session: RepoSession,
    before: Mapping[str, SpecRecord],
    commit: str | None,
    *,
    credit_changes: bool = False,
    replaced: frozenset[str] = frozenset(),
) -> None:
    """Record on every spec whose run changed since `before` (spec id -> its record) the commit that
    asked for the run: the newest commit up to `commit` (this push) that changed the spec's file,
    else `commit`. One push job may carry merges whose own jobs never ran (GitHub keeps one
    pending job per concurrency group and cancels the one it replaces): each run must still be
    credited to the pull request that asked for it, which gets its results comment.

    `credit_changes` (a scheduled or dispatched job, which no merge started): the newest commit
    on the branch that changed the spec's file, when there is one: a change a push job only
    queued (`on_change = "queue"`) is submitted later, and is still that pull request's. A spec
    submitted again on purpose (`replaced`, --replace) asked nobody: it is credited to no one.

    A run that took the place of a run another commit asked for records it (`Replaced`): that
    commit's pull request still waits for a last report, which `collect_results` makes: as
    superseded when the run is stopped (for the new one, or by hand) or still going, else its
    own final report. A run that ended between two jobs was reported by none of them (every job
    reports only each spec's latest run). One reported already is reported again: the same
    status is not set twice, but the comment is redrawn (its rank and comparison as of now)."""
    upto = commit or ("HEAD" if credit_changes else None)
    from ..vcs.commit import last_change

    state = session.state
    paths = {d.spec.id: d.spec.path for d in session.desired.runs}
    for spec_id, record in state.specs.items():
        old = before.get(spec_id)
        if old is not None and old.run_id == record.run_id:
            continue
        update: dict[str, object] = {}
        if old is not None and old.commit:
            update["replaced"] = Replaced(run_id=old.run_id, run_name=old.run_name, commit=old.commit)
        if upto is not None and not (commit is None and spec_id in replaced):
            path = paths.get(spec_id)
            root = session.project.root
            asked = (last_change(root, str(root / path), upto) if path else None) or commit
            if asked:
                update["commit"] = asked
        gone = update.get("replaced")
        if isinstance(gone, Replaced) and update.get("commit", record.commit) == gone.commit:
            del update["replaced"]  # the same commit asked for both: nobody waits for the first
        if update:
            state.specs[spec_id] = record.model_copy(update=update)


def _previous(observed: Observed, owner: str, spec_id: str, current: ObservedRun) -> ObservedRun | None:
    """The latest terminal run of the same spec created before `current`."""
    earlier = [
        r
        for r in observed.runs
        if r.id != current.id
        and r.terminal
        and r.marker is not None
        and r.marker.owner == owner
        and r.marker.spec_id == spec_id
        and (r.created_at or "", r.id) < (current.created_at or "", current.id)
    ]
    return max(earlier, key=lambda r: (r.created_at or "", r.id), default=None)


class _Collector:
    def __init__(self, session: RepoSession, observed: Observed) -> None:
        self.session = session
        self.observed = observed
        self.boards: dict[str, list[Row]] = {}

    async def results(self, run: ObservedRun, *, fetch: bool) -> list[AgentResults]:
        """The run's agents from its results.csv, downloading it first when `fetch` (and it is not current)."""
        root = writable_path(self.session.project.root, self.session.project.settings.outputs_dir, directory=True)
        path = Path(root) / run_dir_name(run.name, run.id) / "results.csv"
        if fetch:
            await download_run(self.session.client, run=run.id, types=["results"], output_root=root)
        elif not path.is_file():
            raise ResultsError(
                f'{run.name} has no downloaded results.csv; add "results" to the spec\'s [reconcile] download list'
            )
        try:
            return parse_results(path.read_text(encoding="utf-8"), source=str(path))
        except OSError as exc:
            raise ResultsError(f"{path} could not be read ({exc.strerror})") from None

    async def is_specs(self, run_id: str, spec_id: str) -> bool:
        """Whether the platform says (to this process: RepoSession.ours_now) that the run is the spec's."""
        marker = (await self.session.ours_now(self.observed, [run_id])).get(run_id)
        return _of_spec(marker, run_id, spec_id, self.session.state.moved)

    async def rows(self, ref: str) -> list[Row]:
        if ref not in self.boards:
            detail = await self.session.client.get_benchmark(ref)
            self.boards[ref] = parse_rows(detail.leaderboard)
        return self.boards[ref]

    async def reason(self, run: ObservedRun) -> str | None:
        page = await self.session.client.get_logs(run.id, limit=LOG_PAGE)
        messages = [e for e in page.logs if e.message]
        errors = [e for e in messages if (e.level or "").lower() in ("error", "fatal", "critical")]
        last = (errors or messages)[-1:] if (errors or messages) else []
        return last[0].message if last else None

    def benchmark_spec(self, spec: RunSpec) -> BenchmarkSpec | None:
        bench = self.observed.benchmarks.get(spec.config.experiment.benchmark)
        for b in sorted(self.session.desired.benchmarks, key=lambda b: b.id):
            if b.benchmark.ref == spec.config.experiment.benchmark:
                return b
            seen = self.observed.benchmarks.get(b.benchmark.ref)
            if bench is not None and seen is not None and seen.id == bench.id:
                return b
        return None

    async def report(self, spec: RunSpec, run: ObservedRun, commit: str | None) -> RunReport:
        bench = self.benchmark_spec(spec)
        base = RunReport(
            spec_id=spec.id,
            spec_path=spec.path,
            run_id=run.id,
            run_name=run.name,
            status=run.status,
            terminal=run.terminal,
            platform_url=run.platform_url,
            commit=commit,
            leaderboard=bench.leaderboard.output if bench is not None and bench.leaderboard is not None else None,
        )
        if not run.terminal:
            return base
        update: dict[str, object] = {}
        if not base.succeeded:
            update["reason"] = await self.reason(run)
        try:
            agents = await self.results(run, fetch=commit is not None)
        except (ReconcilerError, ResultsError) as exc:
            message = exc.message if isinstance(exc, ReconcilerError) else str(exc)
            return base.model_copy(update=update | {"problem": message})
        before = _previous(self.observed, self.observed.owner, spec.id, run)
        if before is not None and commit is not None and not await self.is_specs(before.id, spec.id):
            before = None  # compared with, and so downloaded, only once the platform says it is ours
        paired: Mapping[int, Comparison] = {}
        if before is not None:
            try:
                paired = comparisons(agents, await self.results(before, fetch=commit is not None), before.name)
            except (ReconcilerError, ResultsError):
                paired = {}  # an earlier run without readable results has nothing to compare
        board = [r for r in await self.rows(spec.config.experiment.benchmark) if r.run.id == run.id]
        reports = []
        for agent in agents:
            row = next((r for r in board if (r.harness, r.model) == agent.key), None)
            reports.append(
                AgentReport(
                    results=agent,
                    rank=row.rank if row is not None else None,
                    tied=row.tied if row is not None else False,
                    comparison=paired.get(agent.agent_index),
                )
            )
        return base.model_copy(update=update | {"agents": tuple(reports)})


async def collect_results(session: RepoSession, observed: Observed, targets: Sequence[str] = ()) -> list[RunReport]:
    """A report for each spec's latest run the platform still lists, by spec id; and one for each
    run a later run replaced (`SpecRecord.replaced`), for the commit that asked for it, after
    which an ended (or vanished) replaced run is forgotten: its commit got its last report."""
    collector = _Collector(session, observed)
    runs = {r.id: r for r in observed.runs}
    specs = {d.spec.id: d.spec for d in session.desired.runs}
    chosen = [
        (spec_id, record, spec)
        for spec_id, record in sorted(session.state.specs.items())
        if (spec := specs.get(spec_id)) is not None and (not targets or spec_id in targets)
    ]
    confirmed = await _confirmed(session, observed, chosen, runs)
    out = []
    for spec_id, record, spec in chosen:
        gone = record.replaced
        if gone is not None:
            before = runs.get(gone.run_id) if confirmed(gone.run_id, spec_id) else None
            if before is not None:
                report = await collector.report(spec, before, gone.commit)
                # stopped for the new run (or still going): superseded; ended on its own: its own result
                if before.status == RunStatus.STOPPED or not before.terminal:
                    report = report.model_copy(update={"superseded_by": record.run_name})
                out.append(report)
            if before is None or before.terminal:
                session.state.specs[spec_id] = record = record.model_copy(update={"replaced": None})
        if record.run_id in runs and not confirmed(record.run_id, spec_id):
            # the state file named a run that is not this spec's (edited by hand): forget the record
            # (a cache: the next plan restores it from the markers), and report nothing of that run
            del session.state.specs[spec_id]
            continue
        run = runs.get(record.run_id)
        if run is not None:
            out.append(await collector.report(spec, run, record.commit))
    return out


async def _confirmed(
    session: RepoSession,
    observed: Observed,
    chosen: Sequence[tuple[str, SpecRecord, RunSpec]],
    runs: Mapping[str, ObservedRun],
) -> Callable[[str, str], bool]:
    """Whether a run the state file names for a spec is that spec's, as the platform says to this
    process (RepoSession.ours_now), for every run whose report goes to a commit (a pull request's
    comment and status; its results are downloaded): a record edited by hand must not publish,
    or fetch, another's results as this repository's. A report without a commit (the job summary
    only) takes the plan's word, as the plan did; reading each of those would cost one request
    per spec on every job."""
    wanted = [
        entry.run_id
        for _, record, _ in chosen
        for entry in (record, record.replaced)
        if entry is not None and entry.commit is not None and entry.run_id in runs
    ]
    ours = await session.ours_now(observed, wanted)  # read together, concurrently
    asked = set(wanted)
    moved = session.state.moved

    def confirmed(run_id: str, spec_id: str) -> bool:
        return run_id not in asked or _of_spec(ours.get(run_id), run_id, spec_id, moved)

    return confirmed


def _of_spec(marker: Marker | None, run_id: str, spec_id: str, moved: Mapping[str, str]) -> bool:
    """Whether a run whose marker the platform gave is the spec's: the marker names the spec, or
    the run moved to it with a rename (`State.moved`)."""
    return marker is not None and spec_id in (marker.spec_id, moved.get(run_id))
