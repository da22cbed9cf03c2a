"""Frozen value models share their set of explicitly given fields (reconciler/values.py), and
that sharing can never be observed: each instance still reports exactly the fields it was given."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ConfigDict, Field, ValidationError

from reconciler.values import Value, shared_equal


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


# --- shared_equal: equal values inside a tree become one instance ---


class Box(Value):
    points: list[Point] = Field(default_factory=list)
    named: dict[str, Point] = Field(default_factory=dict)
    pair: tuple[Point, ...] = ()
    weight: float | int | bool | None = None


POINTS = st.builds(Point, x=st.integers(0, 2), y=st.integers(0, 1), label=st.sampled_from([None, "a"]))
WEIGHTS = st.sampled_from([None, 0, 1, 0.0, -0.0, 1.0, True, False])
BOXES = st.builds(
    Box,
    points=st.lists(POINTS, max_size=4),
    named=st.dictionaries(st.sampled_from("ab"), POINTS, max_size=2),
    pair=st.tuples(POINTS, POINTS),
    weight=WEIGHTS,
)


def _values(tree: object) -> list[Value]:
    """Every value reachable in `tree`, once per place it is held."""
    found: list[Value] = []

    def walk(item: object) -> None:
        if isinstance(item, Value):
            found.append(item)
            item = list(item.__dict__.values())
        if isinstance(item, list | tuple):
            for element in item:
                walk(element)
        elif isinstance(item, dict):
            for element in item.values():
                walk(element)

    walk(tree)
    return found


def _same(a: Value, b: Value) -> bool:
    """Equal as values, down to the exact type of every number (1, 1.0 and True are not the same)."""
    return type(a) is type(b) and repr(a) == repr(b) and a.model_fields_set == b.model_fields_set


@given(st.lists(BOXES, max_size=5))
def test_sharing_keeps_every_value_as_it_was(boxes: list[Box]) -> None:
    before = [repr(box) for box in boxes]
    shared = shared_equal(boxes)
    assert [repr(box) for box in shared] == before
    assert shared == boxes


@given(st.lists(BOXES, max_size=5))
def test_after_sharing_two_places_hold_one_instance_exactly_when_their_values_are_the_same(boxes: list[Box]) -> None:
    held = _values(shared_equal(boxes))
    for a in held:
        for b in held:
            assert (a is b) == _same(a, b)


def test_numbers_equal_in_python_but_not_as_values_are_not_shared() -> None:
    boxes = shared_equal([Box(weight=w) for w in (1, 1.0, True, 0.0, -0.0, 0, False)])
    assert len({id(box) for box in boxes}) == 7
    assert [repr(box.weight) for box in boxes] == ["1", "1.0", "True", "0.0", "-0.0", "0", "False"]


def test_values_given_different_fields_are_not_shared_though_equal() -> None:
    given_x, default_x = shared_equal([Point(x=0), Point()])
    assert given_x == default_x and given_x is not default_x
    assert given_x.model_fields_set == {"x"} and default_x.model_fields_set == set()


def test_a_value_holding_something_unknown_is_kept_and_what_is_inside_it_is_still_shared() -> None:
    class Odd(Value):
        model_config = ConfigDict(arbitrary_types_allowed=True)
        thing: object
        point: Point

    marker = object()
    first, second = shared_equal([Odd(thing=marker, point=Point(x=1)), Odd(thing=marker, point=Point(x=1))])
    assert first is not second
    assert first.point is second.point
