"""What the machine refuses (a full disk, a folder where a file goes) is an error naming the path, not a bug."""

from __future__ import annotations

import errno
import sys
import time
import types
from pathlib import Path

import click
import pytest

from reconciler import cli


def test_a_failure_of_the_machine_exits_1_naming_the_path_and_is_not_called_a_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    @click.command()
    def command() -> None:
        raise OSError(errno.ENOSPC, "No space left on device", "leaderboards/tb.md")

    module = types.ModuleType("reconciler_test_full_disk")
    module.command = command  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "reconciler_test_full_disk", module)
    monkeypatch.setitem(cli.COMMANDS, "full-disk", ("reconciler_test_full_disk", "fails as a full disk does"))

    with pytest.raises(SystemExit) as exited:
        cli.main(["full-disk"])

    err = capsys.readouterr().err
    assert exited.value.code == 1
    assert "error: No space left on device: leaderboards/tb.md" in err
    assert "bug" not in err and "Traceback" not in err


def test_a_json_error_document_for_a_reader_that_left_is_dropped_without_a_traceback(tmp_path: Path) -> None:
    import subprocess

    reader_left = subprocess.Popen(
        [sys.executable, "-c", "import os, time; os.close(0); time.sleep(1)"], stdin=subprocess.PIPE
    )
    assert reader_left.stdin is not None
    time.sleep(0.3)  # the reader has closed its end
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "validate", "--format", "json"],
        cwd=tmp_path, stdout=reader_left.stdin, stderr=subprocess.PIPE, text=True, timeout=60,
    )  # fmt: skip
    reader_left.stdin.close()
    reader_left.wait()
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
