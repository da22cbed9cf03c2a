"""How `reconciler wait` shows the runs it follows: lines in logs, nothing beside JSON output."""

from __future__ import annotations

import io

from reconciler.commands.progress import Bars, Lines, run_progress
from reconciler.core.identity import Marker
from reconciler.core.world import ObservedRun
from reconciler.engine.progress import Silent


def _run(status: str, ingested: int, *, spec_id: str | None = "hle-parity") -> ObservedRun:
    marker = Marker(owner="acme/evals", spec_id=spec_id, fingerprint="f" * 12) if spec_id else None
    return ObservedRun(id="run-1", name="daring-finch-1", status=status, marker=marker, ingested=ingested, expected=90)


def test_a_log_gets_one_line_per_change_named_by_spec_and_run() -> None:
    out = io.StringIO()
    lines = Lines(out)
    lines.update([_run("running", 10)])
    lines.update([_run("running", 10)])
    lines.update([_run("running", 45)])
    assert out.getvalue().splitlines() == [
        "hle-parity (daring-finch-1): running 10/90",
        "hle-parity (daring-finch-1): running 45/90",
    ]


def test_a_run_without_a_marker_is_named_by_its_run_name() -> None:
    out = io.StringIO()
    Lines(out).update([_run("queued", 0, spec_id=None)])
    assert out.getvalue() == "daring-finch-1 (daring-finch-1): queued 0/90\n"


def test_closing_the_lines_counts_the_followed_runs_that_ended() -> None:
    out = io.StringIO()
    lines = Lines(out)
    lines.update([_run("running", 10), _run("running", 3).model_copy(update={"id": "run-2", "name": "bold-falcon-2"})])
    lines.update([_run("finished", 90)])
    lines.close()
    assert out.getvalue().splitlines()[-1] == "1/2 followed runs ended"


def test_closing_without_any_followed_run_writes_nothing() -> None:
    out = io.StringIO()
    Lines(out).close()
    assert out.getvalue() == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_per_run_with_its_count() -> None:
    out = _Terminal()
    bars = run_progress(out)
    assert isinstance(bars, Bars)
    bars.update([_run("running", 45)])
    bars.close()
    assert "hle-parity (daring-finch-1)" in out.getvalue()
    assert "45/90" in out.getvalue()


def test_a_stream_that_is_not_a_terminal_gets_lines() -> None:
    assert isinstance(run_progress(io.StringIO()), Lines)


def test_json_output_gets_no_progress() -> None:
    assert isinstance(run_progress(io.StringIO(), quiet=True), Silent)
