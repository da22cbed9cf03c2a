"""An `OsmosisClient` on the local platform app in this process (no socket, no retries), for
tests that drive the engine directly rather than through the CLI."""

from __future__ import annotations

import re
from typing import Any

from reconciler.osmosis.asgi_transport import AsgiTransport
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy


def inprocess_client(app: Any, workspace: str) -> OsmosisClient:
    """A client whose requests go straight into `app` (an ASGI callable), scoped to `workspace`."""
    return OsmosisClient(
        "http://local.osmosis",
        token=None,
        workspace=workspace,
        transport=AsgiTransport(app),
        retry=RetryPolicy.disabled(),
        allow_insecure=True,
    )


def refusing_run_details(app: Any) -> Any:
    """The platform, except that every run-detail request fails: what is learned must come from a cache."""

    async def guarded(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and re.fullmatch(r"/api/cli/benchmark-runs/[^/]+", scope["path"]):
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return guarded
