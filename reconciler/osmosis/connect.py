"""From settings to a client: a platform URL, or a transport the caller wires in for "local".

The client knows no emulator: `platform = "local"` is served by whatever transport the
composition root (reconciler.wiring) hands over as `local_transport`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from .client import OsmosisClient
from .retry import RetryPolicy
from .transport import Transport
from .urls import normalize_base_url

LOCAL_PLATFORM = "local"
LOCAL_BASE_URL = "http://local.osmosis"
LOCAL_WORKSPACE = "local"

LocalTransport = Callable[[Path], Transport]
"""The in-process platform of a project folder, as a transport (given the project root)."""


def local_database(root: Path) -> Path:
    return root / ".osmosis" / "local-platform.sqlite3"


def connect(
    platform: str,
    *,
    root: Path,
    token: str | None,
    workspace: str | None,
    git_identity: str | None,
    retry: RetryPolicy | None = None,
    local_transport: LocalTransport | None = None,
) -> OsmosisClient:
    """A client for `platform`: "local" (through `local_transport`) or a URL.

    The local platform needs no token (none is sent) and, with no scope given, uses the
    workspace "local". A remote platform needs a token (callers read OSMOSIS_TOKEN) and a scope.
    """
    retry = retry or RetryPolicy()
    if platform.strip() == LOCAL_PLATFORM:
        if local_transport is None:
            raise ConfigError('platform = "local" is not available here', hint="set `platform` to the platform's URL")
        if workspace is None and git_identity is None:
            workspace = LOCAL_WORKSPACE
        return OsmosisClient(
            LOCAL_BASE_URL,
            token=None,
            workspace=workspace,
            git_identity=git_identity,
            transport=local_transport(root),
            retry=retry,
            allow_insecure=True,
        )
    url = normalize_base_url(platform)
    if token is None or not token.strip():
        raise ConfigError(
            f"no token for the Osmosis platform at {url}",
            hint="export OSMOSIS_TOKEN=...",
        )
    return OsmosisClient(url, token=token, workspace=workspace, git_identity=git_identity, retry=retry)
