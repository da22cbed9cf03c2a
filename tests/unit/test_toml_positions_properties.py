"""The TOML position scanner, held against documents whose every key position is known as they are written."""

from __future__ import annotations

import json
import tomllib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.specs.diagnostics import KeyPath
from reconciler.specs.toml_positions import Position, key_positions

# Values chosen to look like syntax: separators, brackets and comment signs inside strings, and values over lines.
VALUES = [
    "1",
    "-7_000",
    "3.5e2",
    "true",
    "1979-05-27T07:32:00Z",
    '"a = b # not a comment"',
    "'x, ] } ['",
    '"quote \\" and backslash \\\\"',
    "[1, 2, 3]",
    '[ "a,", "]", ]',
    '[\n  "first",  # a comment = 1\n  "second",\n]',
    '"""two\nlines = "x" """',
    "'''[table]\nk = v'''",
    "[[1, 2], [3]]",
]

NAME_CHARS = st.one_of(
    st.characters(blacklist_categories=("Cs", "Cc"), max_codepoint=0x2FFF),
    st.sampled_from(['"', "\\", "\n", "\t", ".", "=", "#", "[", "]"]),
)


@st.composite
def key(draw: st.DrawFn) -> tuple[str, str]:
    """(name as the parser reads it, name as written): bare, basic-quoted with escapes, or literal-quoted."""
    style = draw(st.sampled_from(["bare", "basic", "literal"]))
    if style == "bare":
        name = draw(st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", min_size=1, max_size=8))
        return name, name
    if style == "basic":
        name = draw(st.text(NAME_CHARS, max_size=8))
        return name, json.dumps(name, ensure_ascii=False)
    name = draw(st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="'"), max_size=8))
    return name, f"'{name}'"


def keys(min_size: int = 0, max_size: int = 4) -> st.SearchStrategy[list[tuple[str, str]]]:
    return st.lists(key(), min_size=min_size, max_size=max_size, unique_by=lambda k: k[0])


class Writer:
    """Text being written, with the 1-based line and column of the next character."""

    def __init__(self) -> None:
        self.text = ""

    @property
    def here(self) -> Position:
        return self.text.count("\n") + 1, len(self.text) - (self.text.rfind("\n") + 1) + 1

    def write(self, piece: str) -> None:
        self.text += piece


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, dict[KeyPath, Position]]:
    out = Writer()
    expected: dict[KeyPath, Position] = {}

    def gap() -> None:
        out.write(draw(st.sampled_from(["", "\n", "# a comment = [x]\n", "   \n"])))

    def spaces() -> str:
        return " " * draw(st.integers(0, 2))

    def pairs(table: KeyPath) -> None:
        for name, written in draw(keys()):
            gap()
            out.write(spaces())
            path = (*table, name)
            expected[path] = out.here
            shape = draw(st.sampled_from(["plain", "dotted", "inline"]))
            if shape == "dotted":
                sub_name, sub_written = draw(key())
                out.write(f"{written}{spaces()}.{spaces()}")
                expected[(*path, sub_name)] = out.here
                out.write(sub_written)
            else:
                out.write(written)
            out.write(f"{spaces()}={spaces()}")
            if shape == "inline":
                out.write("{" + spaces())
                for i, (inner_name, inner_written) in enumerate(draw(keys(max_size=3))):
                    if i:
                        out.write("," + spaces())
                    expected[(*path, inner_name)] = out.here
                    out.write(f"{inner_written} = {draw(st.sampled_from(VALUES[:9]))}")
                out.write(spaces() + "}")
            else:
                out.write(draw(st.sampled_from(VALUES)))
            out.write(draw(st.sampled_from(["", "  # trailing = comment", "\t"])) + "\n")

    pairs(())
    for name, written in draw(keys(max_size=3)):
        if (name,) in expected:
            continue  # a table may not reuse a key of the root table
        if draw(st.booleans()):
            gap()
            expected[(name,)] = out.here
            out.write(f"[{spaces()}{written}{spaces()}]\n")
            pairs((name,))
            for sub_name, sub_written in draw(keys(max_size=1)):
                if (name, sub_name) in expected:
                    continue
                gap()
                expected[(name, sub_name)] = out.here
                out.write(f"[{written}.{sub_written}]\n")
                pairs((name, sub_name))
        else:
            for index in range(draw(st.integers(1, 3))):
                gap()
                expected.setdefault((name,), out.here)
                expected[(name, index)] = out.here
                out.write(f"[[{spaces()}{written}{spaces()}]]\n")
                pairs((name, index))
    return out.text, expected


def lookup(data: Any, path: KeyPath) -> Any:
    for part in path:
        data = data[part]
    return data


@settings(max_examples=200, deadline=None)
@given(documents())
def test_every_key_of_a_generated_document_maps_to_its_true_line_and_column(
    document: tuple[str, dict[KeyPath, Position]],
) -> None:
    text, expected = document
    parsed = tomllib.loads(text)
    for path in expected:
        lookup(parsed, path)  # the generator and the parser agree on which keys exist
    found = key_positions(text)
    assert {path: found.get(path) for path in expected} == expected
