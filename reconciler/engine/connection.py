"""A platform client for commands that look around without reading the specs (benchmarks, runs, logs, secrets)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from ..osmosis.client import OsmosisClient
from ..osmosis.connect import local_database
from ..settings import LOCAL_PLATFORM, Project, resolve_owner, resolve_platform
from .machine_cache import MachineCache


@dataclass(frozen=True)
class Connection:
    """A client for the project's platform, with the scope and owner every command resolves the same way."""

    client: OsmosisClient
    platform: str
    owner: str  # the ownership marker's owner for this repository (settings.resolve_owner)
    workspace: str | None
    identity: str | None  # the repository's GitHub identity, when it has one
    # the database of `platform = "local"`: each one numbers its runs from the same seed, so two
    # checkouts must not share what their machine cache says about a run id
    local_database: Path | None = None
    shared_owner: bool = False  # settings.Owner.shared: no run is stopped

    def machine_cache(self) -> MachineCache:
        """This machine's cache of who owns which run, for this platform (this local database),
        scope and owner."""
        platform = self.platform if self.local_database is None else f"{self.platform}:{self.local_database}"
        return MachineCache.open(platform=platform, scope=self.workspace or self.identity or "", owner=self.owner)


def connect_project(project: Project, *, platform_flag: str | None, workspace_flag: str | None) -> Connection:
    """The one place a command turns flags, environment and reconciler.toml into a client, a scope and an owner."""
    from ..wiring import connect
    from .session import git_identity

    platform = resolve_platform(project, platform_flag)
    workspace = workspace_flag or os.environ.get("OSMOSIS_WORKSPACE") or project.settings.workspace
    identity = git_identity(project.root)
    # the one owner rule: a named workspace never makes this repository's runs someone else's
    owner = resolve_owner(project, origin=identity, workspace=workspace, platform=platform)
    client = connect(
        platform,
        root=project.root,
        token=os.environ.get("OSMOSIS_TOKEN"),
        workspace=workspace,
        # the platform takes one scope: a named workspace, else the repository identity
        git_identity=None if workspace else identity,
    )
    database = local_database(project.root).resolve() if platform == LOCAL_PLATFORM else None
    if database is not None:
        _warn_if_simulated_in_actions()
    return Connection(client, platform, owner.name, workspace, identity, database, owner.shared)


@asynccontextmanager
async def open_client(
    project: Project, *, platform_flag: str | None = None, workspace_flag: str | None = None
) -> AsyncIterator[Connection]:
    """The same platform, workspace scope and owner `plan` would use, resolved the same way."""
    connection = connect_project(project, platform_flag=platform_flag, workspace_flag=workspace_flag)
    async with connection.client:
        yield connection


SIMULATED_IN_ACTIONS = (
    'platform = "local": this job talks to a simulated platform inside the runner, and nothing reaches'
    " Osmosis. Set platform in reconciler.toml to the platform's URL (or OSMOSIS_PLATFORM_URL) to act on real runs."
)


def _warn_if_simulated_in_actions() -> None:
    """A scaffold pushed unchanged would otherwise go green on a throwaway platform, every job."""
    from ..workflow_commands import annotation, in_actions

    if in_actions():
        # stderr: the runner reads workflow commands there too, and stdout may be a JSON document
        sys.stderr.write(annotation("warning", SIMULATED_IN_ACTIONS, title="reconciler: local platform") + "\n")
