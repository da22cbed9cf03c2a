"""The composition root of the platform connection: where the client meets the local platform.

reconciler.osmosis knows no emulator and reconciler.localplatform knows no client; this module
is the one place that knows both. `platform = "local"` becomes the local platform's Starlette
app over `<root>/.osmosis/local-platform.sqlite3`, called in this process through the ASGI
transport (no socket, no aiohttp import); any other value is a URL reached over the network.
"""

from __future__ import annotations

from pathlib import Path

from .osmosis.asgi_transport import AsgiTransport
from .osmosis.client import OsmosisClient
from .osmosis.connect import connect as connect_client
from .osmosis.connect import local_database
from .osmosis.retry import RetryPolicy
from .osmosis.transport import Transport


def local_transport(root: Path) -> Transport:
    """The project's in-process local platform, created on first use."""
    # imported here: the local platform (starlette, sqlite, templates) loads only when it is used
    from .localplatform.app import create_app

    database = local_database(root)
    database.parent.mkdir(parents=True, exist_ok=True)
    return AsgiTransport(create_app(database))


def connect(
    platform: str,
    *,
    root: Path,
    token: str | None,
    workspace: str | None,
    git_identity: str | None,
    retry: RetryPolicy | None = None,
) -> OsmosisClient:
    """A client for `platform` ("local" or a URL); see reconciler.osmosis.connect.connect."""
    return connect_client(
        platform,
        root=root,
        token=token,
        workspace=workspace,
        git_identity=git_identity,
        retry=retry,
        local_transport=local_transport,
    )
