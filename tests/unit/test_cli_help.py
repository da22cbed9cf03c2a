"""Every command explains itself, and the README names every command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from reconciler.cli import COMMANDS, LazyGroup, root

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_command_has_a_help_page_with_a_description(name: str) -> None:
    result = CliRunner().invoke(root, [name, "--help"])
    assert result.exit_code == 0, result.output
    command = LazyGroup.get_command(root, click.Context(root), name)
    assert command is not None and command.help and len(command.help.split()) >= 6


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_readme_names_each_command(name: str) -> None:
    assert f"`{name}" in README or f"reconciler {name}" in README


def test_root_help_lists_every_command_without_importing_them() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from reconciler.cli import root; "
        "r = CliRunner().invoke(root, ['--help']); "
        "print(r.output); print(sorted(m for m in sys.modules if m.startswith('reconciler.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for name in COMMANDS:
        assert f"  {name} " in out
    assert out.strip().splitlines()[-1] == "[]"  # listing imported no command module (lazy)


def test_an_unknown_command_is_a_usage_error_not_a_traceback() -> None:
    done = subprocess.run([sys.executable, "-m", "reconciler.cli", "nope"], capture_output=True, text=True)
    assert done.returncode == 64 and "No such command" in done.stderr and "Traceback" not in done.stderr
