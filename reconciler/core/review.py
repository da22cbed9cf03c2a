"""What a pull request changes in the specs, as values: no git, no files.

field_diff(old, new)    leaf changes in `dotted` key style, e.g.
                        agents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4
SpecChange, Review      one spec's change and the whole pull request's, built by `vcs.review`
                        and drawn by `render.review`
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ..specs.diagnostics import KeyPath, dotted


class _Missing:
    def __repr__(self) -> str:
        return "(unset)"


MISSING: Any = _Missing()
_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./:@+-]*$")
_NUMBERISH = re.compile(r"^[+-]?(\d|inf|nan)", re.IGNORECASE)


def format_value(value: Any) -> str:
    """A value on one line: bare for plain identifiers (model names, paths), TOML-like otherwise."""
    if value is MISSING:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        if _PLAIN.match(value) and value not in ("true", "false") and not _NUMBERISH.match(value):
            return value
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_one_line(str(k))} = {format_value(v)}" for k, v in value.items()) + "}"
    return _one_line(str(value))  # dates and times


def _one_line(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")


@dataclass(frozen=True)
class FieldChange:
    path: KeyPath
    old: Any
    new: Any

    @property
    def key(self) -> str:
        return _one_line(dotted(self.path))

    @property
    def kind(self) -> Literal["added", "removed", "changed"]:
        if self.old is MISSING:
            return "added"
        if self.new is MISSING:
            return "removed"
        return "changed"

    def line(self) -> str:
        """`agents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4`."""
        return f"{self.key}: {format_value(self.old)} -> {format_value(self.new)}"

    def document(self) -> dict[str, Any]:
        def plain(v: Any) -> Any:
            return None if v is MISSING else json.loads(json.dumps(v, default=str))

        return {"key": dotted(self.path), "kind": self.kind, "old": plain(self.old), "new": plain(self.new)}


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, dict) for v in value)


def _leaves(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif _is_table_array(value):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def field_diff(old: Any, new: Any, prefix: KeyPath = ()) -> list[FieldChange]:
    """Leaf-level changes from `old` to `new` (parsed TOML), in the new file's key order.

    Tables recurse by key, arrays of tables by index; any other value (scalars, arrays of
    scalars) is compared whole. A side that is missing, or of another shape, is `MISSING`
    for each leaf of the other side.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[FieldChange] = []
        for key in [*new, *(k for k in old if k not in new)]:
            out += field_diff(old.get(key, MISSING), new.get(key, MISSING), (*prefix, key))
        return out
    if (_is_table_array(old) or _is_table_array(new)) and isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            out += field_diff(old[i] if i < len(old) else MISSING, new[i] if i < len(new) else MISSING, (*prefix, i))
        return out
    if old is not MISSING and new is not MISSING and _same(old, new):
        return []
    if old is MISSING and new is MISSING:
        return []
    if _shape(old) != _shape(new):
        removed = [FieldChange(p, v, MISSING) for p, v in _leaves(old, prefix)] if old is not MISSING else []
        added = [FieldChange(p, MISSING, v) for p, v in _leaves(new, prefix)] if new is not MISSING else []
        if removed or added:
            return removed + added
    return [FieldChange(prefix, old, new)]


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "table"
    if _is_table_array(value):
        return "tables"
    return "value"


Status = Literal["added", "edited", "deleted", "renamed"]


@dataclass(frozen=True)
class SpecChange:
    status: Status
    path: str  # relative to the project root; for a deleted spec, where it was
    spec_id: str
    kind: Literal["run", "benchmark"]
    fields: tuple[FieldChange, ...] = ()
    old_path: str | None = None  # renamed: where it was
    old_spec_id: str | None = None  # renamed: the id it had (differs when the id comes from the path)
    error: str | None = None  # a side that is not valid TOML: no field diff

    @property
    def ids(self) -> tuple[str, ...]:
        """The spec ids whose plan actions belong next to this change."""
        return tuple(dict.fromkeys(i for i in (self.spec_id, self.old_spec_id) if i))

    def document(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "path": self.path,
            "old_path": self.old_path,
            "spec_id": self.spec_id,
            "old_spec_id": self.old_spec_id,
            "kind": self.kind,
            "error": self.error,
            "fields": [f.document() for f in self.fields],
        }


@dataclass(frozen=True)
class Review:
    base_ref: str
    merge_base: str
    changes: tuple[SpecChange, ...]

    def document(self) -> dict[str, Any]:
        return {
            "base_ref": self.base_ref,
            "merge_base": self.merge_base,
            "changes": [c.document() for c in self.changes],
        }
