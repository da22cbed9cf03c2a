"""From settings to a client: the embedded local platform or a real URL."""

from __future__ import annotations

from pathlib import Path

import httpx

from ..errors import ConfigError
from .client import OsmosisClient
from .retry import RetryPolicy
from .urls import normalize_base_url

LOCAL_PLATFORM = "local"
LOCAL_BASE_URL = "http://local.osmosis"
LOCAL_WORKSPACE = "local"


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
) -> OsmosisClient:
    """A client for `platform`: "local" (the in-process local platform) or a URL.

    The local platform runs inside this process over `root/.osmosis/local-platform.sqlite3`;
    it needs no token (none is sent) and, with no scope given, uses the workspace "local".
    A remote platform needs a token (callers read OSMOSIS_TOKEN) and a scope.
    """
    retry = retry or RetryPolicy()
    if platform.strip() == LOCAL_PLATFORM:
        # Imported here: the local platform (starlette, sqlite) loads only when it is used.
        from ..localplatform.app import create_app

        database = local_database(root)
        database.parent.mkdir(parents=True, exist_ok=True)
        app = create_app(database)
        if workspace is None and git_identity is None:
            workspace = LOCAL_WORKSPACE
        return OsmosisClient(
            LOCAL_BASE_URL,
            token=None,
            workspace=workspace,
            git_identity=git_identity,
            transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
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
