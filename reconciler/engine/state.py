"""The state file: a small committed cache that makes plans cheap, never the source of truth.

It maps spec ids to their latest run, caches the ownership marker of each of our runs
(immutable once a run exists; runs that are not ours are cached per machine, outside git),
remembers what was rendered, and records submit intents before they happen.
Lose it and the next plan rebuilds everything from the markers on the platform.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    StrictInt,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
)
from pydantic_core import PydanticCustomError

from .. import json_text
from ..core.identity import Marker
from ..core.world import RunAgents
from ..errors import ConfigError
from ..files import read_regular, write_if_changed
from ..specs.visible import visible

STATE_VERSION = 1
MAX_STATE_BYTES = 256 * 1024 * 1024  # 100,000 runs and their specs take about 30 MiB
# The platform contract bounds no run or benchmark id (they travel percent-encoded in URL paths
# and query strings); the local platform hands out UUIDs (36 characters) and benchmark refs are
# keys or names. 256 is generous for all of them yet keeps every request line far below what
# servers and proxies take: a 100,000-character id came back as a bare HTTP 400 naming no file.
MAX_ID_LENGTH = 256
# C0 and C1 controls, and UTF-16 surrogates (a lone one cannot even be encoded for a URL)
_UNSENDABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_SHOWN_PART = 60  # characters of one key shown in an error's field path


def _sendable(value: str, info: ValidationInfo) -> str:
    """An id the state file hands to the platform, in a URL path or query string: refused when
    no request could carry it, so a hand-edited file is one error naming its field, not an
    internal error or a platform's 400 on every plan. Only in what is read from a file
    (`FROM_FILE`): an id the platform itself just answered is recorded whatever it is, since
    failing after a paid submit would lose the record of that run."""
    if not (info.context or {}).get(FROM_FILE):
        return value
    problem = _unsendable(value)
    if problem is not None:
        raise PydanticCustomError("platform_id", problem)
    return value


def _unsendable(value: str) -> str | None:
    if len(value) > MAX_ID_LENGTH:
        return f"an id sent to the platform has at most {MAX_ID_LENGTH} characters, not {len(value)}"
    bad = _UNSENDABLE.search(value)
    if bad is not None:
        code = ord(bad.group())
        kind = "a lone surrogate" if 0xD800 <= code <= 0xDFFF else "the control character"
        return f"an id sent to the platform cannot hold {kind} U+{code:04X}"
    return None


FROM_FILE = "from_file"  # the validation context of a state file's text (state_from_text)


PlatformId = Annotated[str, AfterValidator(_sendable)]
"""A run or benchmark id (or benchmark ref) that a command sends to the platform."""


class Replaced(BaseModel):
    """The run a record's run took the place of, whose pull request still waits for its last results
    report (engine/results.py: reported once more as superseded, then forgotten)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: PlatformId
    run_name: str
    commit: str  # the commit whose push submitted it


class SpecRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: PlatformId
    run_name: str
    fingerprint: str
    benchmark_id: PlatformId | None = None
    # the commit (GITHUB_SHA) whose push submitted this run; its pull request gets the results comment
    commit: str | None = None
    replaced: Replaced | None = None

    @model_serializer(mode="wrap")
    def _without_nothing_replaced(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No `replaced` key while there is none: state files stay as earlier versions wrote them."""
        data: dict[str, Any] = handler(self)
        if data.get("replaced") is None:
            data.pop("replaced", None)
        return data


class Intent(BaseModel):
    """A submit about to happen: if the process dies after the platform accepted it, the next plan adopts the run."""

    model_config = ConfigDict(extra="forbid")

    spec_id: str
    fingerprint: str
    benchmark_id: PlatformId | None = None


_ENTRIES: dict[str, TypeAdapter[Any]] = {
    "markers": TypeAdapter(Marker),
    "run_agents": TypeAdapter(RunAgents),
    "moved": TypeAdapter(str),
}


class State(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: StrictInt = STATE_VERSION  # `true` or `1.0` is not a version this reconciler wrote
    specs: dict[str, SpecRecord] = Field(default_factory=dict)
    # run id -> the marker of one of OUR runs; markers never change once a run exists. Only
    # positive facts live here: a missing or unreadable entry means "ask the platform again".
    markers: dict[str, Marker] = Field(default_factory=dict)
    # finished run id -> the agents its own config ran (what require_smoke counts as smoke-tested)
    run_agents: dict[str, RunAgents] = Field(default_factory=dict)
    # run id -> the spec id it now belongs to, after its spec file was renamed with the config unchanged
    moved: dict[str, str] = Field(default_factory=dict)
    # spec ref -> benchmark id; both are sent to the platform (engine.observe.EarlyReads): an entry
    # no request could carry is dropped (asked again), as a spec's ref may be any length
    benchmark_ids: dict[str, str] = Field(default_factory=dict)
    rendered: dict[str, str] = Field(default_factory=dict)  # benchmark spec id -> leaderboard digest
    # generated file -> digest of the bytes last written, so a custom template's output is still ours to rewrite
    generated: dict[str, str] = Field(default_factory=dict)
    intents: list[Intent] = Field(default_factory=list)
    # run id -> `<spec id>@<run config fingerprint>` of the spec whose `[reconcile] adopt` took it
    # over (engine.adoption.adoption_entry); git's `adopt` is the truth, this only remembers that
    # the plan already showed the import, for that very run
    adopted: dict[str, str] = Field(default_factory=dict)

    @field_validator("benchmark_ids", mode="before")
    @classmethod
    def _drop_unsendable_ids(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {
            k: v
            for k, v in value.items()
            if not (isinstance(k, str) and isinstance(v, str)) or (_unsendable(k) is None and _unsendable(v) is None)
        }

    @field_validator("markers", "run_agents", "moved", mode="before")
    @classmethod
    def _drop_unreadable_entries(cls, value: Any, info: ValidationInfo) -> Any:
        """A null or garbled cache entry is unknown (asked again), never a fact and never fatal."""
        if not isinstance(value, dict):
            return value
        checker = _ENTRIES[info.field_name or ""]
        kept: dict[str, Any] = {}
        for key, item in value.items():
            try:
                kept[key] = checker.validate_python(item)
            except ValidationError:
                continue
        return kept


def load_state(path: Path) -> State:
    if not path.exists():
        return State()
    if not path.is_file():  # a FIFO would block the read forever
        raise ConfigError(f"state file {path} is not a regular file", hint=_remedy(path))
    try:
        # decoded here: `json.loads` of bytes would also take UTF-16, a BOM and lone surrogates
        text = read_regular(path, MAX_STATE_BYTES).decode("utf-8")
    except (OSError, ValueError) as exc:
        raise ConfigError(f"state file {path} is unreadable: {_where(exc)}", hint=_remedy(path)) from None
    return state_from_text(text, path)


def state_from_text(text: str, path: Path) -> State:
    """The state file's text (`path` names it in errors) as a State; ConfigError when it is none."""
    try:
        data = json_text.loads(text)
    except ValueError as exc:
        raise ConfigError(f"state file {path} is unreadable: {_where(exc)}", hint=_remedy(path)) from None
    # the version first: a newer reconciler's file may hold keys this one does not know, and
    # deleting it (the remedy for a garbled file) would lose the records that version keeps
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version != STATE_VERSION:
        raise ConfigError(
            f"state file {path} has version {version}; this reconciler reads {STATE_VERSION}",
            hint=_NEWER_HINT if version > STATE_VERSION else None,
        )
    try:
        return State.model_validate(data, context={FROM_FILE: True})
    except (ValueError, RecursionError) as exc:
        raise ConfigError(f"state file {path} is unreadable: {_where(exc)}", hint=_remedy(path)) from None


_NEWER_HINT = (
    "a newer reconciler wrote it: upgrade reconciler to read it, and keep the file"
    " (it holds records this version does not know)"
)


def _remedy(path: Path) -> str:
    """Deleting is the cure for a garbled state file, never for a file that was not one: state_file
    may name README.md, reconciler.toml or a folder, and those must not be deleted on our word."""
    if path.suffix != ".json" or path.is_dir():
        return (
            f"state_file in reconciler.toml names {path.name}, which is not a reconciler state file;"
            " point it at a file of its own, such as .reconciler/state.json"
        )
    return "delete it; the next `reconciler plan` rebuilds it from the ownership markers on the platform"


def _where(exc: Exception) -> str:
    """What is wrong and where: the line and column of a JSON syntax error, the field of a bad value."""
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        field = ".".join(_shown_part(p) for p in first["loc"]) or "(top level)"
        return f"{field}: {first['msg']}" + (f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else "")
    if isinstance(exc, RecursionError):  # from validating the model; the JSON reader says its own
        return "nested too deeply to read"
    return str(exc)


def _shown_part(part: str | int) -> str:
    """One step of a field path as a terminal can show it: a key of the file may be garbled
    (escapes, a lone surrogate, 100,000 characters), and the error still names where it is."""
    text = str(part)
    if len(text) > _SHOWN_PART:
        text = text[:_SHOWN_PART] + "..."
    return visible(text).encode("utf-8", "backslashreplace").decode("utf-8")


def dump_state(state: State) -> str:
    return json.dumps(state.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"


def save_state(path: Path, state: State, *, below: Path | None = None) -> bool:
    """Write atomically (temp file, fsync, rename); returns False when the content did not change.
    `below`: the repository, never left through a symlink on the way (files.write_atomic)."""
    return write_if_changed(path, dump_state(state), below=below)
