"""The Osmosis platform API client: the only package that speaks HTTP to the platform.

All I/O goes through one transport port (reconciler.osmosis.transport): aiohttp for URLs, an
in-process ASGI call for an app in this process. The local platform is wired in by
reconciler.wiring, never imported here.

from reconciler.wiring import connect
async with connect(platform, root=root, token=token, workspace=None, git_identity=identity) as osmosis:
    runs = await osmosis.list_runs()
"""

from .client import OsmosisClient
from .connect import connect
from .errors import (
    BenchmarkNotReady,
    BenchmarksNotEnabled,
    Conflict,
    Forbidden,
    NotFound,
    PlatformError,
    PlatformUnreachable,
    ProtocolError,
    RateLimited,
    SecretsNotFound,
    ServerError,
    SubmitOutcomeUnknown,
    Unauthorized,
    UpgradeRequired,
    ValidationRejected,
)
from .retry import RetryPolicy

__all__ = [
    "BenchmarkNotReady",
    "BenchmarksNotEnabled",
    "Conflict",
    "Forbidden",
    "NotFound",
    "OsmosisClient",
    "PlatformError",
    "PlatformUnreachable",
    "ProtocolError",
    "RateLimited",
    "RetryPolicy",
    "SecretsNotFound",
    "ServerError",
    "SubmitOutcomeUnknown",
    "Unauthorized",
    "UpgradeRequired",
    "ValidationRejected",
    "connect",
]
