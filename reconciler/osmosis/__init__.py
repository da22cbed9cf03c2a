"""The Osmosis platform API client: the only package that speaks httpx to the platform.

from reconciler.osmosis import connect
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
