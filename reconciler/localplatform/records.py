"""The stored records, as plain frozen values, and the deterministic ids they carry."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

from .simulator import Schedule


@dataclass(frozen=True)
class Workspace:
    id: int
    kind: str  # workspace | git
    name: str
    benchmarks_enabled: bool


@dataclass(frozen=True)
class BenchmarkRow:
    id: str
    key: str
    created_at: float


@dataclass(frozen=True)
class SecretRow:
    id: str
    scope: str
    name: str
    created_at: float
    updated_at: float
    creator_name: str
    updater_name: str


@dataclass(frozen=True)
class RunRow:
    """A run's small, listable facts (the rest is `RunData`); times in simulated seconds."""

    id: str
    workspace_id: int
    seq: int
    name: str
    benchmark_id: str
    benchmark_key: str
    submitted_at: float  # clock() at submit
    speed: float
    task_count: int
    agent_count: int
    expected: int
    selection: str  # full | parity | filtered
    queued_at: float
    running_at: float
    end_at: float
    final_status: str
    final_ingested: int
    final_best: float | None
    stopped_at: float | None


@dataclass(frozen=True)
class RunData:
    """What never changes after submit and only detail views need."""

    config: dict[str, Any]  # the submitted payload without secret values
    scopes: dict[str, str]  # resolved secret scopes
    tasks: list[str]  # task names in run order
    schedule: Schedule


def stable_uuid(*parts: object) -> str:
    """A UUID-shaped id derived from the parts with sha256 (deterministic, never random)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))
