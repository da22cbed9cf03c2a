"""Names from others never carry a raw control or bidi character into Markdown, SVG or diagnostics."""

from __future__ import annotations

import re
import sys
import unicodedata
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.core.cells import cell, code_cell
from reconciler.render.leaderboard import parse_rows, render_markdown, render_svg
from reconciler.specs.diagnostics import Diagnostic
from reconciler.specs.visible import visible, visible_keep_whitespace

BIDI = [chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C]]
CONTROLS = [chr(c) for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029]]
ZERO_WIDTH = [chr(c) for c in [0x00AD, 0x180E, 0x200B, 0x200C, 0x200D, *range(0x2060, 0x2065), 0xFEFF]]
# every invisible format character of Python 3.11's Unicode 14 tables, and the others that take
# no room: variation selectors, the combining grapheme joiner, the Hangul fillers
FORMAT = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
NO_ROOM = [chr(c) for c in [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), 0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0]]
HIDDEN = re.compile("[" + "".join(re.escape(c) for c in BIDI + CONTROLS + ZERO_WIDTH + FORMAT + NO_ROOM) + "]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("evil\u202etxt.exe", "evil\\u202etxt.exe"),
        ("a\u2066b\u2069", "a\\u2066b\\u2069"),
        ("key\nforged: error", "key\\nforged: error"),
        ("\x1b[2Kgone", "\\x1b[2Kgone"),
        ("nul\x00", "nul\\x00"),
        ("c1\x85", "c1\\x85"),
        ("crlf\r\n", "crlf\\r\\n"),
        ("run\u200b.toml", "run\\u200b.toml"),
        ("\ufeffbom", "\\ufeffbom"),
        ("soft\u00adhyphen", "soft\\xadhyphen"),
        ("tag\U000e0041", "tag\\U000e0041"),
    ],
)
def test_each_hidden_character_is_shown_as_its_escape(raw: str, shown: str) -> None:
    assert visible(raw) == shown


@pytest.mark.skipif(unicodedata.unidata_version != "14.0.0", reason="the list is Unicode 14's (Python 3.11)")
def test_every_invisible_character_of_the_unicode_tables_is_shown_as_an_escape() -> None:
    missed = [f"U+{ord(c):04X}" for c in FORMAT + NO_ROOM if visible(c) == c]
    assert missed == []


@given(st.text())
def test_nothing_hidden_survives_and_plain_text_is_untouched(text: str) -> None:
    out = visible(text)
    assert not HIDDEN.search(out)
    if not HIDDEN.search(text):
        assert out == text


@given(st.text())
def test_whitespace_kept_for_html_is_only_tab_and_line_breaks(text: str) -> None:
    out = visible_keep_whitespace(text)
    assert {c for c in out if HIDDEN.match(c)} <= {"\t", "\n", "\r"}


@pytest.mark.parametrize("escape", [cell, code_cell], ids=["cell", "code_cell"])
@pytest.mark.parametrize("char", BIDI + CONTROLS + ZERO_WIDTH, ids=lambda c: f"U+{ord(c):04X}")
def test_markdown_cells_show_every_hidden_character(escape: object, char: str) -> None:
    assert callable(escape)
    out = escape(f"model{char}name")
    assert not HIDDEN.search(out)


ROW = {
    "rank": 1,
    "model": "openai/gpt\u202e5.2-\u2066evil\u2069\x1b[31m",
    "harness": "codex\x07",
    "pass_at_1": {"value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 10},
    "run": {"id": "r1", "name": "calm\u202eheron", "platform_url": "http://127.0.0.1:1/benchmarks/runs/r1"},
}


def test_the_leaderboard_markdown_shows_bidi_and_controls_as_escapes() -> None:
    text = render_markdown(
        title="T\u202eB",
        benchmark_key="tb\u202e",
        spec_path="s",
        rows=parse_rows([ROW]),
        rank_by="pass_at_1",
        scope="w",
    )
    assert not HIDDEN.search(text.replace("\n", ""))
    assert "openai/gpt\\u202e5.2-\\u2066evil\\u2069\\x1b\\[31m" in text
    assert "calm\\u202eheron" in text


def test_the_leaderboard_svg_is_well_formed_xml_with_escapes_shown() -> None:
    svg = render_svg(title="T\u202eB\x01", rows=parse_rows([ROW]))
    ET.fromstring(svg)  # XML 1.0 forbids the raw C0 controls; this would raise on one
    assert not HIDDEN.search(svg.replace("\n", ""))
    assert "T\\u202eB\\x01" in svg


def test_a_diagnostic_prints_one_line_whatever_its_key_holds() -> None:
    d = Diagnostic(
        file="specs/runs/x\u202e.toml",
        line=3,
        col=1,
        key='experiment."a\nspecs/runs/ok.toml:1:1: forged"',
        message="unknown key \x1b[2K",
        code="UNKNOWN",
    )
    rendered = d.render()
    assert "\n" not in rendered and not HIDDEN.search(rendered)
    assert rendered.startswith('specs/runs/x\\u202e.toml:3:1: experiment."a\\nspecs/runs/ok.toml:1:1: forged": ')
    assert "\n" not in d.github_annotation() and not HIDDEN.search(d.github_annotation())
