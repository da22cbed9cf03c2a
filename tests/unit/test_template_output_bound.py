"""A template's output is bounded while it is produced, not once it is complete: a loop that would
write gigabytes stops at the bound, with the size error, in a process that never holds much more."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.errors import ConfigError
from reconciler.render import sandbox
from reconciler.render.sandbox import MAX_OUTPUT_CHARS, SandboxedEnvironment

ROOT = Path(__file__).resolve().parents[2]
ONE_GIB = 1 << 30
TOO_LONG = "its output is over 8 million characters"

# renders argv[1] under an address-space limit of argv[2] bytes and prints the error, if any
CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[2]), int(sys.argv[2])))
from reconciler.errors import ConfigError
from reconciler.render.sandbox import SandboxedEnvironment
try:
    text = SandboxedEnvironment().from_string(sys.argv[1]).render()
except ConfigError as exc:
    print(exc.message)
else:
    print(f"rendered {len(text)} characters")
"""


def render_in_a_small_process(template: str, limit: int = ONE_GIB) -> str:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, template, str(limit)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def render(template: str) -> str:
    return SandboxedEnvironment().from_string(template).render()


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds a process's memory only on Linux")
def test_a_loop_writing_ten_gigabytes_fails_with_the_size_error_in_a_one_gib_process() -> None:
    shown = render_in_a_small_process('{% for i in range(100000) %}{{ "x"*100000 }}{% endfor %}')
    assert f"cannot be rendered: {TOO_LONG}" in shown


def test_a_normal_template_still_renders() -> None:
    assert render('{% for i in range(3) %}{{ i }}:{{ "ab" ~ "c" }}{{ "-" * 2 }}{% endfor %}') == "0:abc--1:abc--2:abc--"


def test_output_exactly_at_the_bound_renders() -> None:
    assert MAX_OUTPUT_CHARS == 80 * 100_000
    assert len(render('{% for i in range(80) %}{{ "x"*100000 }}{% endfor %}')) == MAX_OUTPUT_CHARS


def test_output_one_character_over_the_bound_fails() -> None:
    with pytest.raises(ConfigError, match=TOO_LONG):
        render('{% for i in range(80) %}{{ "x"*100000 }}{% endfor %}y')


def test_the_deadline_still_stops_a_render_that_keeps_writing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "MAX_RENDER_SECONDS", 0.3)
    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{{ j }}{% endfor %}{% endfor %}"
    with pytest.raises(ConfigError, match=r"cannot be rendered: it ran for over 0.3 seconds"):
        render(loop)


def test_text_doubled_with_tilde_fails_once_it_passes_the_bound() -> None:
    doubling = '{% set s = "x"*100000 %}' + "{% set s = s ~ s %}" * 8 + "{{ s|length }}"  # 25.6 million
    with pytest.raises(ConfigError, match=":1 cannot be rendered: a concatenation longer than 8 million characters"):
        render(doubling)


def test_text_doubled_with_plus_fails_once_it_passes_the_bound() -> None:
    doubling = '{% set s = "x"*100000 %}' + "{% set s = s + s %}" * 8 + "{{ s|length }}"
    with pytest.raises(ConfigError, match=":1 cannot be rendered: a concatenation longer than 8 million characters"):
        render(doubling)


def test_a_list_doubled_with_plus_fails_once_it_passes_the_bound() -> None:
    doubling = "{% set s = [0]*100000 %}" + "{% set s = s + s %}" * 8 + "{{ s|length }}"
    with pytest.raises(ConfigError, match=":1 cannot be rendered: a concatenation longer than 8 million items"):
        render(doubling)


EIGHT_MILLION = '{% set s = "x"*100000 %}{% set t = ' + " ~ ".join(["s"] * 80) + " %}"


def test_a_concatenation_exactly_at_the_bound_is_allowed() -> None:
    assert render(EIGHT_MILLION + "{{ t|length }}") == str(MAX_OUTPUT_CHARS)


def test_a_concatenation_one_character_over_the_bound_fails() -> None:
    with pytest.raises(ConfigError, match="a concatenation longer than 8 million characters"):
        render(EIGHT_MILLION + '{{ (t ~ "y")|length }}')
