from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._common import platform_options

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from ..engine.download_targets import BatchReport, Target
    from ..engine.downloads import DownloadReport


@click.command("download")
@click.argument("targets", nargs=-1, metavar="[SPEC_ID or RUN]...")
@click.option(
    "--type",
    "types",
    multiple=True,
    metavar="TYPES",
    help="Comma list of summary, results, artifacts, logs, or all. Default: each spec's [reconcile] download list (summary,results for runs by name).",
)
@click.option("--overwrite", is_flag=True, help="Download files again even when a complete copy is on disk.")
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    help="The folder for the run's files (with several runs: a folder for their run folders); inside the repository, never in its own files (specs, .git, templates, ...). Default: .osmosis/benchmarks/<run-dir>.",
)
@click.option("--jobs", type=click.IntRange(1, 64), default=8, show_default=True, help="Files transferred at once.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
def command(
    targets: tuple[str, ...],
    types: tuple[str, ...],
    overwrite: bool,
    output: Path | None,
    jobs: int,
    fmt: str,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Fetch run outputs into .osmosis/benchmarks/<run-dir>/, resumably and path-safely.

    With no argument: each run spec's current run, with its [reconcile] download
    types. A SPEC_ID picks that spec's run; anything else is a run name or id.
    Files whose size already matches the manifest are skipped; an interrupted
    file resumes where it stopped. Manifest paths outside the run folder's
    fixed layout are refused and reported. Exit 1 when any run ended partial.
    """
    from ..engine.downloads import human_bytes, shown, summary_line
    from ..errors import PartialFailure, UsageError
    from ..outputs.paths import TypeSelectionError, parse_types
    from ..settings import load_project
    from ._common import run_async, stderr_is_tty

    try:
        selected = parse_types(list(types)) if types else None
    except TypeSelectionError as exc:
        raise UsageError(str(exc)) from None
    output = output.expanduser() if output is not None else None
    project = load_project()
    text = fmt == "text"

    def report_line(target: Target, report: DownloadReport | None, error: str | None) -> None:
        if not text:
            return
        if report is None:
            label = "skipped" if target.run is None and not target.error else "FAILED"
            click.echo(f"{target.label}: {label}: {error}")
            return
        where = shown(report.output_path, project.root)
        click.echo(f"{report.run.name}: {report.status}: {summary_line(report, where, failures=False)}")
        for failure in report.files_failed:
            click.echo(f"  failed {failure.path}: {failure.error}")
        if report.bytes_resumed:
            click.echo(f"  resumed {human_bytes(report.bytes_resumed)} from interrupted transfers")

    async def go(bar: _Bar | None) -> BatchReport:
        from ..engine.download_targets import download_command

        return await download_command(
            project,
            targets,
            selected,
            output=output,
            overwrite=overwrite,
            jobs=jobs,
            platform=platform,
            workspace=workspace,
            progress=(lambda: bar) if bar is not None else (lambda: None),
            on_report=report_line,
        )

    bar = _Bar() if stderr_is_tty() else None
    try:
        batch = run_async(go(bar))
    finally:
        if bar is not None:
            bar.close()
    if fmt == "json":
        click.echo(batch.model_dump_json(indent=2))
    elif not batch.runs and not batch.errors:
        click.echo("nothing to download")
    if batch.status != "success":
        failed = sum(r.status != "success" for r in batch.runs) + len(batch.errors)
        raise PartialFailure(f"{failed} download{'s' * (failed != 1)} did not complete (see above)")


class _Bar:
    """A rich progress bar on stderr: one line per run, bytes and files."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

        self.progress: Progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("{task.fields[files]}"),
            console=Console(stderr=True),
            transient=False,
        )
        self.progress.start()
        self.task: TaskID | None = None
        self.files = (0, 0)

    def begin(self, run: str, files: int, total_bytes: int) -> None:
        self.files = (0, files)
        self.task = self.progress.add_task(run, total=total_bytes or None, files=f"0/{files} files")

    def advance(self, nbytes: int) -> None:
        if self.task is not None:
            self.progress.advance(self.task, nbytes)

    def file_done(self, path: str, error: str | None) -> None:
        if self.task is not None:
            self.files = (self.files[0] + 1, self.files[1])
            self.progress.update(self.task, files=f"{self.files[0]}/{self.files[1]} files")

    def end(self, report: DownloadReport) -> None:
        if self.task is not None:
            self.progress.update(self.task, description=f"{report.run.name} ({report.status})")
        self.task = None

    def close(self) -> None:
        self.progress.stop()
