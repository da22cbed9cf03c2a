"""The README a new user reads first: its set-up commands, its facts, and example outputs the commands really print."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SETUP = [
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/reconciler reconcile --wait\n",
    "bash scripts/test.sh\n",
]


def readme_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "readme.py"), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_readme_opens_with_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = re.findall(r"```\w*\n(.*?)```", text, re.S)
    assert blocks[:2] == SETUP
    assert text.split("```")[0] == "# reconciler\n\n"  # nothing comes before them


def test_the_readme_says_which_python_it_needs_and_that_the_tests_take_minutes() -> None:
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "Python 3.11 or newer" in text
    assert "takes several minutes" in text


def test_every_document_the_readme_names_is_in_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    named = set(re.findall(r"[\w./-]+\.md(?![\w.])", text))  # not the templates' `plan.md.j2`
    assert "platform-contract.md" not in text
    assert {"docs/platform-api.md", "docs/architecture.md"} <= named
    for name in named:
        assert (ROOT / name).is_file(), name


@pytest.mark.slow
def test_the_readme_example_outputs_are_what_the_commands_print() -> None:
    done = readme_script("--check")
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_readme_check_fails_with_a_diff_when_an_example_output_drifts(tmp_path: Path) -> None:
    drifted = tmp_path / "README.md"
    text = README.read_text(encoding="utf-8")
    line = "Plan: 3 submit, 2 render. Paid: 261 attempts, est. unknown.\n"
    assert line in text
    stale = text.replace(line, "Plan: 3 submit.\n", 1)
    drifted.write_text(stale, encoding="utf-8")
    done = readme_script("--check", "--readme", str(drifted))
    assert done.returncode == 1
    assert "\n-Plan: 3 submit.\n" in done.stderr
    assert f"\n+{line}" in done.stderr
    assert done.stderr.endswith("run `python scripts/readme.py` to rewrite them\n")
    assert drifted.read_text(encoding="utf-8") == stale  # --check never rewrites
