"""The state file: a small committed cache that makes plans cheap, never the source of truth.

It maps spec ids to their latest run, caches each run's ownership marker (immutable once a
run exists), remembers what was rendered, and records submit intents before they happen.
Lose it and the next plan rebuilds everything from the markers on the platform.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.identity import Marker
from ..errors import ConfigError
from ..files import write_if_changed

STATE_VERSION = 1


class SpecRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    run_name: str
    fingerprint: str
    benchmark_id: str | None = None


class Intent(BaseModel):
    """A submit about to happen: if the process dies after the platform accepted it, the next plan adopts the run."""

    model_config = ConfigDict(extra="forbid")

    spec_id: str
    fingerprint: str
    benchmark_id: str | None = None


class State(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = STATE_VERSION
    specs: dict[str, SpecRecord] = Field(default_factory=dict)
    # run id -> its marker, or None for a run that is not ours; markers never change once a run exists
    markers: dict[str, Marker | None] = Field(default_factory=dict)
    benchmark_ids: dict[str, str] = Field(default_factory=dict)  # spec ref -> benchmark id
    rendered: dict[str, str] = Field(default_factory=dict)  # benchmark spec id -> leaderboard digest
    # generated file -> digest of the bytes last written, so a custom template's output is still ours to rewrite
    generated: dict[str, str] = Field(default_factory=dict)
    intents: list[Intent] = Field(default_factory=list)


def load_state(path: Path) -> State:
    if not path.exists():
        return State()
    if not path.is_file():  # a FIFO would block the read forever
        raise ConfigError(
            f"state file {path} is not a regular file",
            hint="delete it; the next `reconciler plan` rebuilds it from the ownership markers on the platform",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        state = State.model_validate(data)
    except (OSError, ValueError, ValidationError, RecursionError) as exc:
        # RecursionError: JSON nested thousands deep; the file was not written by reconciler
        reason = "nested far too deep" if isinstance(exc, RecursionError) else type(exc).__name__
        raise ConfigError(
            f"state file {path} is unreadable ({reason})",
            hint="delete it; the next `reconciler plan` rebuilds it from the ownership markers on the platform",
        ) from None
    if state.version != STATE_VERSION:
        raise ConfigError(f"state file {path} has version {state.version}; this reconciler reads {STATE_VERSION}")
    return state


def dump_state(state: State) -> str:
    return json.dumps(state.model_dump(mode="json"), indent=1, sort_keys=True) + "\n"


def save_state(path: Path, state: State) -> bool:
    """Write atomically (temp file, fsync, rename); returns False when the content did not change."""
    return write_if_changed(path, dump_state(state))
