"""`plan --format json` is written item by item, and reads exactly as `json.dumps` would write it."""

from __future__ import annotations

import io
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from reconciler.render.json_stream import write_indented

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)
KEYS = st.text(max_size=6) | st.integers() | st.booleans() | st.none()


def written(value: Any) -> str:
    out = io.StringIO()
    write_indented(value, out)
    return out.getvalue()


@given(VALUES)
def test_any_document_is_written_byte_for_byte_as_json_dumps_writes_it(value: Any) -> None:
    assert written(value) == json.dumps(value, indent=2, sort_keys=True)


@given(st.dictionaries(st.text(max_size=6), st.lists(VALUES, max_size=4) | VALUES, max_size=5))
def test_a_document_of_lists_is_written_byte_for_byte_as_json_dumps_writes_it(value: dict[str, Any]) -> None:
    assert written(value) == json.dumps(value, indent=2, sort_keys=True)


@given(st.dictionaries(KEYS.filter(lambda k: not isinstance(k, str)), VALUES, min_size=1, max_size=3))
def test_keys_that_are_not_strings_are_written_as_json_writes_them(value: dict[Any, Any]) -> None:
    try:
        expected = json.dumps(value, indent=2, sort_keys=True)
    except TypeError:  # keys json itself cannot sort (None beside an int)
        return
    assert written(value) == expected


def test_a_string_holding_a_line_break_is_not_indented_inside() -> None:
    value = {"actions": [{"reason": "two\nlines", "nested": {"k": ["a\nb"]}}]}
    assert json.loads(written(value)) == value
    assert written(value) == json.dumps(value, indent=2, sort_keys=True)
