"""`Value`: the base of the frozen pydantic models that are values (a spec's tables, what the
platform has, a plan's actions), kept by the thousand in a plan.

Pydantic gives every instance its own set of the field names that were given explicitly
(`model_fields_set`): 216 to 728 bytes per instance, 4 MiB of the peak of a plan of 1,000
specs with 1,000 owned runs, where each model class had one distinct such set. Instances of a
`Value` share one set per distinct content instead; the hook costs under a microsecond per
instance.

`shared_equal` goes one step further for a whole tree of values: every frozen `Value` in it that
equals one met before becomes that one. A thousand specs that name the same benchmark, agent
and task selection then hold one copy of each, not a thousand.

Sharing is safe because nothing can change a shared set: a frozen model refuses assignment
(the only path that adds to the set), and `model_copy` copies the set before it records the
fields it updated. Nothing in reconciler reads these sets (no `exclude_unset`); a caller that
mutated `model_fields_set` by hand would change it for every instance that shares it.
"""

from __future__ import annotations

import enum
from pathlib import PurePath
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ConfigDict

T = TypeVar("T")

_SHARED: dict[frozenset[str], set[str]] = {}


class Value(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)

    def model_post_init(self, context: Any, /) -> None:
        given = self.__pydantic_fields_set__
        key = frozenset(given)
        shared = _SHARED.get(key)
        if shared is None:
            shared = _SHARED.setdefault(key, set(given))
        object.__setattr__(self, "__pydantic_fields_set__", shared)


def shared_equal(root: T) -> T:
    """`root`, with each frozen `Value` inside it that equals one met before (same class, same
    fields, same given fields, same private and extra attributes) replaced by that one.

    Reached through fields, lists, tuples and dict values. A value holding anything other than
    values, strings, numbers, booleans, None, enum members, paths or such containers of them is
    kept as it is (what is inside it is still shared). Equal content is judged exactly: `1`,
    `1.0` and `True` differ, and so do `0.0` and `-0.0`.

    Lists and dicts inside the tree are changed in place, and so are the fields of values not
    yet shared, each to an equal value: call this before anyone else holds the tree. Built for
    the specs of a plan (engine/session.load_desired_shared): 1,000 of them hold half as many
    models, and cross from the other core in half the bytes."""
    seen: dict[tuple[Any, ...], Value] = {}

    def share(item: Any) -> Any:
        if isinstance(item, Value):
            fields = item.__dict__
            for name, field in fields.items():
                one = share(field)
                if one is not field:
                    fields[name] = one  # an equal value, in a model nobody else holds yet
            if not type(item).model_config.get("frozen"):
                return item
            try:
                key = (
                    type(item),
                    tuple((name, _key(field)) for name, field in fields.items()),
                    frozenset(item.__pydantic_fields_set__),
                    _key(item.__pydantic_private__),
                    _key(item.__pydantic_extra__),
                )
            except _Unshareable:
                return item
            return seen.setdefault(key, item)
        kind = type(item)
        if kind is list:
            for n, element in enumerate(item):
                one = share(element)
                if one is not element:
                    item[n] = one
        elif kind is dict:
            for name, element in item.items():
                one = share(element)
                if one is not element:
                    item[name] = one
        elif kind is tuple:
            shared = tuple(map(share, item))
            if any(a is not b for a, b in zip(shared, item, strict=True)):
                return shared
        return item

    return cast(T, share(root))


class _Unshareable(Exception):
    pass


def _key(item: Any) -> Any:
    """What `item` holds, as a hashable key; a shared `Value` stands for itself (by identity)."""
    kind = type(item)
    if kind is str or kind is int or kind is bool or item is None:
        return (kind, item)
    if kind is float:
        return (kind, item.hex())  # 0.0 and -0.0 are equal floats, but not the same value
    if isinstance(item, Value):
        return (Value, id(item))  # already the one of its content: `seen` keeps it alive
    if kind is list or kind is tuple:
        return (kind, *map(_key, item))
    if kind is dict:
        return (kind, *((_key(name), _key(value)) for name, value in item.items()))
    if isinstance(item, enum.Enum | PurePath):
        return (kind, item)
    raise _Unshareable
