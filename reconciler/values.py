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
    the specs a plan loads on another core (engine/session.open_session): 1,000 of them hold half as many
    models, and cross from the other core in half the bytes."""
    seen: dict[tuple[Any, ...], Value] = {}
    roles: dict[type, int] = {}  # per class: _OTHER, _FROZEN or _UNFROZEN

    def share(item: Any) -> tuple[Any, Any]:
        """(what to hold instead of `item`, a hashable key of its content, or None when it has none)"""
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            return item, (kind, item)
        if kind is float:
            return item, (kind, item.hex())  # 0.0 and -0.0 are equal floats, but not the same value
        if kind is list or kind is tuple:
            held, keys = [], []
            for element in item:
                one, key = share(element)
                held.append(one)
                keys.append(key)
            if kind is list:
                item[:] = held  # equal elements, in a list nobody else holds yet
            elif any(a is not b for a, b in zip(held, item, strict=True)):
                item = tuple(held)
            return item, None if None in keys else (kind, *keys)
        if kind is dict:
            keys = []
            for name, element in item.items():
                one, key = share(element)
                if one is not element:
                    item[name] = one
                keys.append((share(name)[1], key))
            return item, None if any(None in pair for pair in keys) else (kind, *keys)
        role = roles.get(kind)
        if role is None:
            role = roles[kind] = _role(kind)
        if role == _OTHER:
            return item, (kind, item) if isinstance(item, enum.Enum | PurePath) else None
        fields = item.__dict__
        keys = []
        for name, field in fields.items():
            one, key = share(field)
            if one is not field:
                fields[name] = one  # an equal value, in a model nobody else holds yet
            keys.append(key)
        if role == _FROZEN and None not in keys:
            private, extra = share(item.__pydantic_private__)[1], share(item.__pydantic_extra__)[1]
            if private is not None and extra is not None:
                content = (kind, tuple(fields), *keys, frozenset(item.__pydantic_fields_set__), private, extra)
                item = seen.setdefault(content, item)
        # a value stands for itself in its holders' keys: `seen` or the tree keeps it alive
        return item, (Value, id(item))

    return cast(T, share(root)[0])


_OTHER, _FROZEN, _UNFROZEN = 0, 1, 2


def _role(kind: type) -> int:
    if not issubclass(kind, Value):
        return _OTHER
    return _FROZEN if kind.model_config.get("frozen") else _UNFROZEN
