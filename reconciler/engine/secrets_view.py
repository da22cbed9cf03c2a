"""Which secret records the specs need, and where each exists: workspace, personal, or nowhere.

A spec needs every record its config names (model, harness, judge, verifier, `[secrets]`) and
every record its benchmark names in `required_secret_names`. Values are never read or shown.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ..errors import UsageError
from ..osmosis.client import OsmosisClient
from ..osmosis.errors import NotFound
from ..specs.diagnostics import dotted
from ..specs.rules import MAX_SECRET_NAME_LENGTH, SECRET_NAME
from .session import RepoSession

UserScope = Literal["workspace", "personal"]
# The contract's scope names: what users call "personal" the API calls "user".
API_SCOPE: dict[str, Literal["workspace", "user"]] = {"workspace": "workspace", "personal": "user"}


class SecretNeed(BaseModel):
    model_config = ConfigDict(frozen=True)

    spec_id: str
    name: str
    referenced_by: str  # the spec's key path, or "benchmark <key>" for an implicit requirement
    workspace: bool
    personal: bool

    @property
    def missing(self) -> bool:
        return not (self.workspace or self.personal)


async def _benchmark_requirements(client: OsmosisClient, refs: set[str]) -> dict[str, tuple[str, ...]]:
    async def one(ref: str) -> tuple[str, tuple[str, ...]]:
        try:
            return ref, tuple((await client.get_benchmark(ref)).required_secret_names)
        except NotFound:
            return ref, ()  # `plan` reports the unknown benchmark; here there is nothing more to need

    return dict(await asyncio.gather(*(one(r) for r in sorted(refs))))


async def secret_needs(session: RepoSession) -> list[SecretNeed]:
    """One row per (spec, record), in spec order; a record named twice by a spec is listed once."""
    runs = sorted(session.desired.runs, key=lambda d: d.spec.id)
    implicit, records = await asyncio.gather(
        _benchmark_requirements(session.client, {d.spec.config.experiment.benchmark for d in runs}),
        session.client.list_secrets(scope="all"),
    )
    scopes: dict[str, set[str]] = {}
    for record in records:
        if record.name:
            scopes.setdefault(record.name, set()).add(record.scope or "")
    out = []
    for d in runs:
        config = d.spec.config
        named: dict[str, str] = {}
        for path, name in config.secret_references():
            named.setdefault(name, dotted(path))
        for name in implicit.get(config.experiment.benchmark, ()):
            named.setdefault(name, f"benchmark {config.experiment.benchmark}")
        for name, where in named.items():
            found = scopes.get(name, set())
            out.append(
                SecretNeed(
                    spec_id=d.spec.id,
                    name=name,
                    referenced_by=where,
                    workspace="workspace" in found,
                    personal="user" in found,
                )
            )
    return out


def check_name(name: str) -> str:
    if not SECRET_NAME.match(name) or len(name) > MAX_SECRET_NAME_LENGTH:
        raise UsageError(
            f"{name!r} is not a secret record name",
            hint="record names are A-Z, 0-9 and _, starting with a letter (e.g. OPENAI_API_KEY); the value comes from stdin",
        )
    return name


async def set_secret(client: OsmosisClient, name: str, value: str, scope: UserScope) -> None:
    await client.set_secret(check_name(name), value, API_SCOPE[scope])
