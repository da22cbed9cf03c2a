"""The composition root of the platform connection: where the client meets the local platform.

reconciler.osmosis knows no emulator and reconciler.localplatform knows no client; this module
is the one place that knows both. `platform = "local"` becomes the local platform's Starlette
app over `<root>/.osmosis/local-platform.sqlite3`, called in this process through the ASGI
transport (no socket, no aiohttp import); any other value is a URL reached over the network.
"""

from __future__ import annotations

from pathlib import Path

from .errors import ConfigError
from .osmosis.asgi_transport import AsgiTransport
from .osmosis.client import OsmosisClient
from .osmosis.connect import connect as connect_client
from .osmosis.connect import local_database
from .osmosis.retry import RetryPolicy
from .osmosis.transport import Transport
from .safe_paths import writable_database


def local_transport(root: Path) -> Transport:
    """The project's in-process local platform, created on first use.

    Its database is a file of the repository like any other reconciler writes (the one rule,
    safe_paths.writable_path): never written through a symlink (a committed `.osmosis` link
    would put it, and SQLite's `-wal` and `-shm` files beside it, anywhere), and a file there
    that is no database is a clear error naming it."""
    # imported here: the local platform (starlette, sqlite, templates) loads only when it is used
    import sqlite3

    from .localplatform.app import create_app

    database = local_database(root)
    rel = database.relative_to(root).as_posix()
    writable_database(root, rel)
    database.parent.mkdir(exist_ok=True)
    writable_database(root, rel)  # the folder just made: still no link
    try:
        return AsgiTransport(create_app(database))
    except sqlite3.DatabaseError as exc:  # not a database, or not one SQLite can open
        raise ConfigError(
            f"{rel} is not a local platform database SQLite can open ({exc})",
            hint=f"move {rel} out of the way: the local platform starts a fresh one there",
        ) from None


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
