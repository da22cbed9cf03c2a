"""Frozen value models share their set of explicitly given fields (reconciler/values.py), and
that sharing can never be observed: each instance still reports exactly the fields it was given."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from reconciler.values import Value


class Point(Value):
    x: int = 0
    y: int = 0
    label: str | None = None


FIELDS = st.fixed_dictionaries(
    {}, optional={"x": st.integers(), "y": st.integers(), "label": st.none() | st.text(max_size=3)}
)


@given(st.lists(FIELDS, min_size=1, max_size=6))
def test_each_value_reports_exactly_the_fields_it_was_given(docs: list[dict[str, object]]) -> None:
    points = [Point.model_validate(doc) for doc in docs]
    assert [p.model_fields_set for p in points] == [set(doc) for doc in docs]


@given(FIELDS, FIELDS, st.integers())
def test_a_copy_with_an_update_changes_no_other_value(
    first: dict[str, object], second: dict[str, object], x: int
) -> None:
    a, b = Point.model_validate(first), Point.model_validate(second)
    copied = a.model_copy(update={"x": x})
    assert copied.model_fields_set == set(first) | {"x"}
    assert a.model_fields_set == set(first) and b.model_fields_set == set(second)


def test_values_given_the_same_fields_share_one_set() -> None:
    a, b, c = Point(x=1), Point(x=2), Point(y=1)
    assert a.model_fields_set is b.model_fields_set
    assert c.model_fields_set is not a.model_fields_set


def test_a_value_refuses_assignment_the_one_way_its_set_could_grow() -> None:
    point = Point(x=1)
    with pytest.raises(ValidationError):
        point.y = 2  # type: ignore[misc]  # the assignment the frozen model refuses
    assert point.model_fields_set == {"x"}


def test_equal_values_are_equal_and_hash_alike_whatever_fields_were_given() -> None:
    assert Point(x=0) == Point() and hash(Point(x=0)) == hash(Point())
