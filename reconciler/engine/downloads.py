"""Download a run's outputs the way the official client does, resumably and path-safely.

    GET run ─ pending/queued? ──> OutputsNotAvailable (409-like, nothing else is asked)
      │
    GET manifest?types=...    ─> screen every path (reconciler.outputs.paths): refusals are
      │                          reported in files_failed and make the download `partial`
    local plan                ─> a regular file whose size equals the manifest's is skipped
      │                          (unless overwrite, or we wrote it from an entry with another
      │                          token: reconciler.outputs.index); nothing pending = no URL request
    POST download-urls        ─> batches of at most 500, each asked for while the one before is fetched
      │
    GET each URL              ─> `jobs` transfers at once (reconciler.outputs.transfer), each a
      │                          streamed GET through OsmosisClient.open_presigned (no credentials)
      │
    report                    ─> success when every requested file is on disk, else partial;
                                 a success for a terminal run is recorded in the ledger
                                 (reconciler.outputs.bookkeeping), which changes only when
                                 something did: a download with nothing new writes nothing

The folder is `output_dir`, else `output_root / run_dir_name(name, id)`. Nothing is ever
created or written outside it, except reconciler's ledger beside it (`.reconciler/<folder>.json`;
inside a folder the user named: reconciler.outputs.bookkeeping).

A folder whose ledger names another run holds that run's outputs (two runs of one name, say
after the local platform's database was reset): the download is refused before anything is
written, unless `overwrite`. Keeping what has the manifest's size there would pass the other
run's files off as this one's, and writing over them would lose that run's results.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..core.world import NO_OUTPUTS_YET, TERMINAL
from ..errors import ReconcilerError
from ..osmosis.errors import Conflict, NotFound, PlatformError
from ..osmosis.models import DownloadUrls
from ..osmosis.retry import RetryPolicy
from ..outputs.bookkeeping import Ledger, ledger_path, load_ledger, save_ledger
from ..outputs.index import is_current
from ..outputs.layout import TYPES, run_dir_name
from ..outputs.paths import Accepted, TypeSelectionError, parse_types, regular_size, screen
from ..outputs.transfer import FILE_RETRY, Outcome, Transfer, redact_urls
from ..safe_paths import writable_path
from .apply import ActionResult

if TYPE_CHECKING:
    from ..core.plan import Action
    from ..osmosis.client import OsmosisClient
    from .session import RepoSession

URL_BATCH = 500
DEFAULT_TYPES: tuple[str, ...] = ("summary", "results")
NOT_YET = "Outputs are not yet available for pending or queued benchmark runs."
NOTHING = "No downloadable files matched the requested selection."
NO_USABLE = "The download manifest contained no usable run-scoped paths."
OMITTED = "Download URL response omitted this file."
ROUTE_MISSING = (
    "Benchmark run output route was not found. The run may have been deleted or the platform may not"
    " support benchmark downloads yet."
)


class OutputsNotAvailable(Conflict):
    """The run is pending or queued: the platform has no outputs for it yet."""


class DownloadError(ReconcilerError):
    """The download could not start (nothing matched, or the folder is unusable)."""


class RunRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str


class FileFailure(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    error: str


class TypeTotals(BaseModel):
    model_config = ConfigDict(frozen=True)

    files: int = 0
    bytes: int = 0


class DownloadReport(BaseModel):
    """One run's download: the official client's result (`benchmark.download`), with its counts
    and lists under the same names, except that the run is `run` and its status `run_status`:
    `status` here is the download's own, success or partial."""

    model_config = ConfigDict(frozen=True)

    run: RunRef
    run_status: str
    selected_types: tuple[str, ...]
    files_downloaded: int
    files_skipped: int
    files_failed: tuple[FileFailure, ...]
    bytes_downloaded: int  # sizes of the files that landed in this download
    bytes_resumed: int = 0  # of those, bytes kept from partial files of an earlier attempt
    total_files: int
    total_bytes: int
    breakdown: dict[str, TypeTotals] = Field(default_factory=dict)
    manifest_totals: dict[str, Any] = Field(default_factory=dict)
    output_path: str
    recorded_complete: bool = False  # every requested type is on disk for a terminal run
    status: Literal["success", "partial"]


class ProgressSink(Protocol):
    """Where a download tells how it is going (a progress bar, a log, a test)."""

    def begin(self, run: str, files: int, total_bytes: int) -> None: ...

    def advance(self, nbytes: int) -> None:
        """Bytes written to disk (negative when a worthless partial was thrown away)."""

    def file_done(self, path: str, error: str | None) -> None: ...

    def end(self, report: DownloadReport) -> None: ...


def selected_types(types: Sequence[str]) -> tuple[str, ...]:
    try:
        return parse_types(types)
    except TypeSelectionError as exc:
        raise DownloadError(str(exc)) from None


async def download_run(
    client: OsmosisClient,
    *,
    run: str,
    types: Sequence[str],
    output_root: Path,
    output_dir: Path | None = None,
    chosen_root: bool = False,
    overwrite: bool = False,
    jobs: int = 8,
    progress: ProgressSink | None = None,
    retry: RetryPolicy = FILE_RETRY,
) -> DownloadReport:
    """Fetch `types` of the run named or identified by `run`; see the module docstring.

    `chosen_root`: `output_root` is a folder the user named (`download -o DIR` for several runs),
    so each run folder keeps its ledger inside it, as `output_dir` does: beside it, the ledger of
    a run named `state` in the repository's root would be `.reconciler/state.json`."""
    wanted = selected_types(types)
    if jobs < 1:
        raise DownloadError(f"jobs must be at least 1, not {jobs}")
    detail = await client.get_run(run)
    info = detail.benchmark_run
    status = info.status or "pending"
    if status in NO_OUTPUTS_YET:
        raise OutputsNotAvailable(NOT_YET, code="CONFLICT")
    name = info.name or info.id
    # the one rule for written paths: the run's folder is never reached through a symlink
    run_dir = (
        output_dir
        if output_dir is not None
        else writable_path(output_root, run_dir_name(name, info.id), directory=True)
    )
    for folder in (run_dir, *run_dir.parents):
        if folder.exists() and not folder.is_dir():
            raise DownloadError(f"{folder} exists and is not a folder")
        if folder.is_dir():
            break
    chosen = output_dir is not None or chosen_root
    ledger = load_ledger(run_dir, chosen=chosen)
    if ledger.run_id not in (None, info.id) and not overwrite:
        raise DownloadError(
            f"{run_dir} holds the outputs of another run ({ledger.run_id}, as {ledger_path(run_dir, chosen=chosen)}"
            f" records), not of {name} ({info.id})",
            hint=f"move {run_dir} away first, or download again with --overwrite to replace its files",
        )
    # the ledger's place is checked before any file is written: an unusable one changes nothing
    save_ledger(run_dir, ledger, chosen=chosen)

    manifest = await client.get_manifest(info.id, wanted)
    if not manifest.files:
        raise DownloadError(NOTHING)
    accepted, refused = screen(((f.path, f.size, f.token) for f in manifest.files), wanted, run_dir)
    if not accepted:  # as the official client: an error, not a partial download of nothing
        shown_refusals = "; ".join(f"{r.path}: {r.reason}" for r in refused[:3])
        more = f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""
        raise DownloadError(f"{NO_USABLE} Refused: {shown_refusals}{more}")
    failures = [FileFailure(path=r.path, error=r.reason) for r in refused]
    pending: list[Accepted] = []
    skipped = 0
    breakdown: dict[str, TypeTotals] = {}
    known = ledger.files if ledger.run_id in (None, info.id) else {}
    for item in accepted:
        totals = breakdown.get(item.type, TypeTotals())
        breakdown[item.type] = TypeTotals(files=totals.files + 1, bytes=totals.bytes + item.size)
        if not overwrite and regular_size(item.target) == item.size and is_current(known, item.path, item.token):
            skipped += 1
        else:
            pending.append(item)

    if progress is not None:
        progress.begin(name, len(pending), sum(i.size for i in pending))
    done: list[tuple[Accepted, Outcome]] = []
    if pending:
        done = await _fetch_all(client, info.id, run_dir, pending, jobs, overwrite, progress, retry)
    failures.extend(FileFailure(path=i.path, error=o.error) for i, o in done if o.error is not None)
    landed = [(i, o) for i, o in done if o.error is None]
    ok = not failures
    recorded = ok and status in TERMINAL
    complete = ledger.types if ledger.run_id == info.id else frozenset()
    save_ledger(
        run_dir,
        Ledger(
            run_id=info.id,
            types=complete | frozenset(wanted) if recorded else complete,
            files={**known, **{i.path: i.token for i, _ in landed}},
        ),
        chosen=chosen,
    )
    report = DownloadReport(
        run=RunRef(id=info.id, name=name),
        run_status=status,
        selected_types=wanted,
        files_downloaded=len(landed),
        files_skipped=skipped,
        files_failed=tuple(failures),
        bytes_downloaded=sum(i.size for i, _ in landed),
        bytes_resumed=sum(o.resumed for _, o in landed),
        total_files=len(manifest.files),
        total_bytes=sum(f.size for f in manifest.files),
        breakdown={t: breakdown[t] for t in TYPES if t in breakdown},
        manifest_totals=dict(manifest.totals),
        output_path=str(run_dir),
        recorded_complete=recorded,
        status="success" if ok else "partial",
    )
    if progress is not None:
        progress.end(report)
    return report


async def _fetch_all(
    client: OsmosisClient,
    run_id: str,
    run_dir: Path,
    pending: list[Accepted],
    jobs: int,
    overwrite: bool,
    progress: ProgressSink | None,
    retry: RetryPolicy,
) -> list[tuple[Accepted, Outcome]]:
    """URL batches feed a queue; `jobs` workers drain it. Every file ends with an Outcome."""

    async def refresh(item: Accepted) -> str:
        urls = await client.get_download_urls(run_id, [(item.path, item.token)])
        match = urls.match(item.path, item.token)
        if match is None:
            raise PlatformError(OMITTED)
        return match.url

    transfer = Transfer(
        client.open_presigned,
        refresh,
        run_dir,
        retry=retry,
        overwrite=overwrite,
        on_bytes=progress.advance if progress is not None else None,
        network_slots=jobs,
    )
    results: list[tuple[Accepted, Outcome]] = []
    queue: asyncio.Queue[tuple[Accepted, str] | None] = asyncio.Queue(maxsize=jobs)

    def finish(item: Accepted, outcome: Outcome) -> None:
        results.append((item, outcome))
        if progress is not None:
            progress.file_done(item.path, outcome.error)

    # twice as many workers as network slots: a file waiting for its fsync holds no slot
    workers = min(2 * jobs, len(pending))

    async def ask(batch: Sequence[Accepted]) -> DownloadUrls | PlatformError:
        try:
            return await client.get_download_urls(run_id, [(i.path, i.token) for i in batch])
        except PlatformError as exc:
            return exc

    async def produce(group: asyncio.TaskGroup) -> None:
        batches = list(_batches(pending, URL_BATCH))
        ahead = group.create_task(ask(batches[0]))
        for n, batch in enumerate(batches):
            urls = await ahead
            if n + 1 < len(batches):  # the next batch is asked for while this one is fetched
                ahead = group.create_task(ask(batches[n + 1]))
            if isinstance(urls, PlatformError):
                error = ROUTE_MISSING if isinstance(urls, NotFound) else redact_urls(urls.message)
                for item in batch:
                    finish(item, Outcome(error=f"Could not get a download URL: {error}"))
                continue
            lookup = _UrlIndex(urls)
            fetched: list[tuple[Accepted, str]] = []
            for item in batch:
                url = lookup.match(item.path, item.token)
                if url is None:
                    finish(item, Outcome(error=OMITTED))
                else:
                    fetched.append((item, url))
            # folders are made ahead, on the folder thread, for the files that have a URL
            transfer.prepare([item for item, _ in fetched])
            for job in fetched:
                await queue.put(job)
        for _ in range(workers):
            await queue.put(None)

    async def work() -> None:
        while (job := await queue.get()) is not None:
            item, url = job
            finish(item, await transfer.fetch(item, url))

    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(produce(group))
            for _ in range(workers):
                group.create_task(work())
    finally:
        transfer.close()
    order = {item.path: n for n, item in enumerate(pending)}
    return sorted(results, key=lambda r: order[r[0].path])


class _UrlIndex:
    """`DownloadUrls.match` for a whole batch: the exact (path, token) pair first, else a unique
    path; built once, so a batch of 500 costs 500 look-ups instead of 500 scans."""

    def __init__(self, urls: DownloadUrls) -> None:
        self._exact: dict[tuple[str, str | None], str] = {}
        self._by_path: dict[str, list[str]] = {}
        for item in urls.items:
            self._exact.setdefault((item.path, item.token), item.url)
            self._by_path.setdefault(item.path, []).append(item.url)

    def match(self, path: str, token: str | None) -> str | None:
        exact = self._exact.get((path, token))
        if exact is not None:
            return exact
        same_path = self._by_path.get(path, [])
        return same_path[0] if len(same_path) == 1 else None


def _batches(items: Sequence[Accepted], size: int) -> Iterator[Sequence[Accepted]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# --- behind `reconciler apply` ------------------------------------------------------------


def human_bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def summary_line(report: DownloadReport, shown_path: str | None = None, *, failures: bool = True) -> str:
    """`downloaded 2 files (1.2 MB) to .osmosis/benchmarks/<dir>`, plus skips and failures."""
    where = shown_path or report.output_path
    text = f"downloaded {report.files_downloaded} file{'s' * (report.files_downloaded != 1)}"
    text += f" ({human_bytes(report.bytes_downloaded)}) to {where}"
    if report.files_skipped:
        text += f", {report.files_skipped} already complete"
    if report.files_failed and failures:
        first = report.files_failed[0]
        text += f"; {len(report.files_failed)} failed (first: {first.path}: {first.error})"
    return text


def shown(path: str, root: Path) -> str:
    """A path relative to the repository when it is inside it."""
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return path


def downloader_for(session: RepoSession) -> Callable[[Action], Awaitable[ActionResult]]:
    """What `reconciler apply` runs for a DOWNLOAD action: the action's types, into the repo."""

    async def download(action: Action) -> ActionResult:
        if action.run_id is None:
            return ActionResult(action=action, ok=False, message="download action without a run")
        root = session.project.root
        try:
            report = await download_run(
                session.client,
                run=action.run_id,
                types=action.download_types or DEFAULT_TYPES,
                output_root=writable_path(root, session.outputs_root.relative_to(root).as_posix(), directory=True),
            )
        except ReconcilerError as exc:
            return ActionResult(
                action=action, ok=False, message=exc.message, run_id=action.run_id, run_name=action.run_name
            )
        return ActionResult(
            action=action,
            ok=report.status == "success",
            message=summary_line(report, shown(report.output_path, session.project.root)),
            run_id=report.run.id,
            run_name=report.run.name,
        )

    return download
