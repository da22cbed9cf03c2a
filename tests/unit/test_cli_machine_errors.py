"""What the machine refuses (a full disk, a folder where a file goes) is an error naming the path, not a bug."""

from __future__ import annotations

import errno
import sys
import types

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
