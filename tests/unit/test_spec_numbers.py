"""Numbers a submit body cannot carry are refused where they are written: file, line, field."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.specs.loader import discover, load_specs

BASE = """[experiment]
benchmark = "terminal-bench-2-1"
[[agents]]
harness = "codex"
[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
"""


@pytest.mark.parametrize(
    ("tail", "line", "fragment"),
    [
        (
            "[execution]\ntimeout_multiplier = inf\n",
            10,
            "execution.timeout_multiplier: input should be a finite number",
        ),
        (
            "[execution]\ntimeout_multiplier = nan\n",
            10,
            "execution.timeout_multiplier: input should be a finite number",
        ),
        ("[execution]\nmax_retries = 99999999999999999999\n", 10, "execution.max_retries: input should be less than"),
        ("[env]\nX = 1" + "0" * 4400 + "\n", 10, "a number with thousands of digits"),
        ("[execution]\nmax_retries = 0x" + "f" * 5000 + "\n", 10, "execution.max_retries: input should be less than"),
    ],
    ids=["inf", "nan", "past-64-bits", "4400-digits", "long-hex"],
)
def test_a_number_no_submit_could_carry_is_a_diagnostic_at_its_line(
    tmp_path: Path, tail: str, line: int, fragment: str
) -> None:
    spec = tmp_path / "specs" / "runs" / "a.toml"
    spec.parent.mkdir(parents=True)
    spec.write_text(BASE + tail)
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (error,) = result.errors
    assert error.file == "specs/runs/a.toml" and error.line == line
    assert fragment in error.render()
