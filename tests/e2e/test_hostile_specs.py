"""Spec files built to hang, exhaust or crash the loader get one clear diagnostic each.

Every case is reported as `path:line:col: (file): message`, exit 1, no "internal error"; the
other specs in the same folder are still loaded. One test runs them all through the real
command in a child process; the rest run in-process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from reconciler.cli import root

GOOD_SPEC = Path(__file__).resolve().parent.parent / "corpus" / "good" / "official-smoke.toml"


@dataclass(frozen=True)
class Hostile:
    name: str
    make: Callable[[Path], None]
    where: str  # `line:col` the diagnostic must point at
    says: str  # a fragment of its message


def _write(text: str) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_text(text, encoding="utf-8")

    return write


CASES = [
    Hostile("fifo", lambda p: os.mkfifo(p), "1:1", "is a named pipe (FIFO), not a regular file"),
    Hostile("over-a-mebibyte", _write("# padding\n" * 110_000), "1:1", "is larger than 1024 KiB"),
    Hostile("dotted-key-100k-parts", _write("a" + ".a" * 100_000 + " = 1\n"), "1:128", "nests deeper than 64"),
    Hostile("array-500-deep", _write("x = " + "[" * 500 + "]" * 500 + "\n"), "1:68", "nests deeper than 64"),
    Hostile(
        "inline-table-500-deep",
        _write("x = " + "{ a = " * 500 + "1" + " }" * 500 + "\n"),
        "1:" + str(5 + 6 * 63),
        "nests deeper than 64",
    ),
    Hostile("header-500-parts", _write("[" + ".".join(["t"] * 500) + "]\n"), "1:129", "nests deeper than 64"),
    Hostile("symlink-loop", lambda p: p.symlink_to(p.name), "1:1", "a symlink that points back at itself"),
]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "reconciler.toml").write_text('workspace = "hostile"\n', encoding="utf-8")
    (tmp_path / "specs" / "runs").mkdir(parents=True)
    shutil.copyfile(GOOD_SPEC, tmp_path / "specs" / "runs" / "good.toml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _diagnostic_for(output: str, name: str) -> re.Match[str] | None:
    return re.search(rf"^specs/runs/{re.escape(name)}\.toml:(\d+:\d+): \(file\): (.*)$", output, re.MULTILINE)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hostile_spec_is_one_diagnostic_at_its_position(case: Hostile, repo: Path) -> None:
    case.make(repo / "specs" / "runs" / f"{case.name}.toml")
    result = CliRunner().invoke(root, ["validate"], env={"GITHUB_ACTIONS": None})
    assert result.exit_code == 1, result.output
    found = _diagnostic_for(result.stdout, case.name)
    assert found, result.stdout
    assert found.group(1) == case.where
    assert case.says in found.group(2)
    assert "1 error, 0 warnings in 2 files" in result.stdout


@pytest.mark.slow
def test_every_hostile_spec_is_reported_by_the_real_command_and_plan_refuses(repo: Path) -> None:
    for case in CASES:
        case.make(repo / "specs" / "runs" / f"{case.name}.toml")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    cli = [sys.executable, "-m", "reconciler.cli"]
    # the timeout only keeps a regression from hanging the suite; a FIFO used to block forever
    validate = subprocess.run([*cli, "validate"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert validate.returncode == 1
    assert "internal error" not in validate.stderr
    for case in CASES:
        found = _diagnostic_for(validate.stdout, case.name)
        assert found and found.group(1) == case.where and case.says in found.group(2), (case.name, validate.stdout)
    assert f"{len(CASES)} errors, 0 warnings in {len(CASES) + 1} files" in validate.stdout

    plan = subprocess.run(
        [*cli, "plan", "--platform", "local"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert plan.returncode == 1
    assert "internal error" not in plan.stderr
    assert "specs/runs/fifo.toml:1:1: (file): is a named pipe (FIFO)" in plan.stderr


@pytest.mark.slow
def test_specs_dir_that_is_a_symlink_to_itself_is_named_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "specs").symlink_to("specs")
    (tmp_path / "reconciler.toml").write_text('platform = "local"\nspecs_dir = "specs"\n', encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "validate"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1
    assert "internal error" not in result.stderr
    assert "specs:1:1: (file): cannot be read: a symlink that points back at itself" in result.stdout


FORGED = """\
[experiment]
benchmark = "terminal-bench-2-1"
"x\\nspecs/runs/ok.toml:1:1: (file): forged line" = 1
"\\u202eevil" = 2
"""


@pytest.mark.slow
def test_validate_prints_keys_with_newlines_and_bidi_as_escapes_never_as_lines(repo: Path) -> None:
    (repo / "specs" / "runs" / "forged.toml").write_text(FORGED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "validate"],
        capture_output=True, text=True, timeout=60, check=False,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"},
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert not any(line.startswith("specs/runs/ok.toml") for line in lines)
    assert not re.search("[\u202a-\u202e\u2066-\u2069\x00-\x08\x0b-\x1f]", done.stdout)
    assert any(line.startswith("specs/runs/forged.toml:3:1: experiment.x\\nspecs/runs/ok.toml") for line in lines)
    assert any(line.startswith("specs/runs/forged.toml:4:1: experiment.\\u202eevil") for line in lines)
