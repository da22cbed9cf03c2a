"""Pydantic's validation errors, reworded for people editing TOML."""

from __future__ import annotations

import datetime as dt
import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from .diagnostics import KeyPath

_MODEL_TAGS = {"provider", "endpoint", "hosted"}

_TOML_TYPES: dict[type, str] = {
    str: "a string",
    int: "an integer",
    float: "a float",
    bool: "a boolean",
    list: "an array",
    dict: "a table",
    dt.datetime: "a datetime",
    dt.date: "a date",
    dt.time: "a time",
}

_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "list_type": "an array",
    "dict_type": "a table",
    "model_type": "a table",
    "model_attributes_type": "a table",
}


def toml_type(value: Any) -> str:
    for kind, name in _TOML_TYPES.items():
        if type(value) is kind:
            return name
    return type(value).__name__


def _clean_loc(loc: tuple[int | str, ...]) -> KeyPath:
    out: list[str | int] = []
    for i, part in enumerate(loc):
        # a tagged union puts the chosen tag into the location: agents.0.model.provider.model
        if isinstance(part, str) and part in _MODEL_TAGS and i > 0 and loc[i - 1] == "model":
            continue
        out.append(part)
    return tuple(out)


def describe_error(err: ErrorDetails, root: type[BaseModel]) -> tuple[KeyPath, str, str]:
    """(key path, message, code) for one pydantic error."""
    path = _clean_loc(tuple(err["loc"]))
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    name = path[-1] if path else ""
    if kind == "extra_forbidden":
        allowed = allowed_keys(root, tuple(err["loc"])[:-1])
        if len(err["loc"]) == 1 and root.__name__ == "RunConfig":
            allowed.append("reconcile")  # our own table, split off before the platform schema sees it
        message = "unknown key"
        close = difflib.get_close_matches(str(name), allowed, n=1) if allowed else []
        if close:
            message += f"; did you mean {close[0]!r}?"
        elif allowed:
            message += f"; allowed here: {', '.join(allowed)}"
        return path, message, "UNKNOWN_KEY"
    if kind == "missing":
        if path == ("experiment",):
            return path, 'missing [experiment] table with benchmark = "<key, name or id>"', "MISSING"
        if path == ("agents",):
            return path, "missing [[agents]]: add at least one agent with an [agents.model] table", "MISSING"
        return path, f"missing required key {name!r}", "MISSING"
    if kind == "union_tag_not_found":
        return (*path, "type"), "missing required key 'type' (provider, endpoint or hosted)", "MISSING"
    if kind == "union_tag_invalid":
        return (
            (*path, "type"),
            f"must be one of provider, endpoint, hosted; got {ctx.get('tag')!r}",
            "BAD_VALUE",
        )
    if kind in _EXPECTED:
        expected = _EXPECTED[kind]
        if path == ("agents",) and kind == "list_type":
            expected = "an array of tables ([[agents]])"
        return path, f"must be {expected}, got {toml_type(value)}", "BAD_TYPE"
    if kind == "literal_error":
        return path, f"must be one of {ctx.get('expected')}; got {_shown(value)}", "BAD_VALUE"
    if kind == "string_pattern_mismatch":
        return path, f"{_shown(value)} does not match {ctx.get('pattern')}", "BAD_VALUE"
    if kind in {"greater_than_equal", "greater_than", "less_than_equal", "less_than"}:
        return path, f"{err['msg'][:1].lower()}{err['msg'][1:]}, got {_shown(value)}", "BAD_VALUE"
    message = err["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
    return path, message[:1].lower() + message[1:], "BAD_VALUE"


def _shown(value: Any) -> str:
    """`repr(value)`; a number too long to read (or to print at all: 4,300 digits) is described."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a number of {value.bit_length()} bits"
    return repr(value)


def allowed_keys(root: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The keys the table at raw pydantic location `loc` accepts (empty when unknown)."""
    current: Any = root
    for part in loc:
        current = _unwrap(current, part)
        if current is None:
            return []
    current = _unwrap(current, None)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrap(annotation: Any, part: int | str | None) -> Any:
    """Step one location part into a type: a model field, a list item or a union member."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) == 1:
                annotation = members[0]
                continue
            for member in members:
                if isinstance(member, type) and issubclass(member, BaseModel):
                    tag = member.model_fields.get("type")
                    if tag is not None and part in typing.get_args(tag.annotation):
                        return member
            return None
        else:
            break
    if part is None:
        return annotation
    if isinstance(part, int):
        if typing.get_origin(annotation) is list:
            return typing.get_args(annotation)[0]
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(part)
        return field.annotation if field else None
    return None
