"""The depth pre-scan counts what the parser would nest, and never rejects a shallow document."""

from __future__ import annotations

import json
import tomllib
from typing import Any

import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.specs.toml_bounds import check_depth, scan_depth

# Keys and strings full of the characters the scanner must not mistake for structure.
_TEXT = st.text(alphabet="ab.[]{}=,#\"'\\ \n", max_size=8)
_SCALARS = st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), _TEXT, st.booleans())
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_TEXT, inner, max_size=3)),
    max_leaves=25,
)
_DOCUMENTS = st.dictionaries(_TEXT, _VALUES, min_size=1, max_size=4)


def _depth(value: Any) -> int:
    """Levels below a key: one per array or table around a value."""
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    return 0


def _document_depth(doc: dict[str, Any]) -> int:
    return max(1 + _depth(v) for v in doc.values())


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


@settings(max_examples=150)
@given(_DOCUMENTS)
def test_inline_documents_are_rejected_exactly_when_deeper_than_the_limit(doc: dict[str, Any]) -> None:
    text = "".join(f"{json.dumps(k)} = {_inline(v)}\n" for k, v in doc.items())
    assert tomllib.loads(text) == doc  # the generator writes what it means
    depth = _document_depth(doc)
    assert check_depth(text, limit=depth) is None
    assert check_depth(text, limit=depth - 1) is not None


@settings(max_examples=150)
@given(_DOCUMENTS)
def test_documents_with_tables_and_dotted_keys_within_the_limit_pass(doc: dict[str, Any]) -> None:
    text = tomlkit.dumps(doc)
    assert check_depth(text, limit=_document_depth(tomllib.loads(text))) is None


def test_dotted_keys_count_one_level_per_part_under_their_table() -> None:
    text = "[agents.model]\nextra.deep.key = 1\n"
    assert check_depth(text, limit=5) is None
    found = check_depth(text, limit=4)
    assert found is not None and (found.line, found.col) == (2, 11)


def test_dots_inside_values_and_comments_do_not_count() -> None:
    text = 'a = 1.5 # x.y.z.w\nb = "p.q.r.s"\nc = 1979-05-27T07:32:00.999\n'
    assert check_depth(text, limit=1) is None


@settings(max_examples=300)
@given(st.text(alphabet="ab.[]{}=,#\"'\\ \n", max_size=40), st.integers(min_value=0, max_value=12))
def test_the_shortcut_for_small_documents_agrees_with_the_full_scan(text: str, limit: int) -> None:
    assert check_depth(text, limit) == scan_depth(text, limit)
