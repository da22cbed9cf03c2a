"""Presigned download URLs: HMAC-SHA256 over (run id, path, snapshot, expiry) with the database's key.

A URL is `{base}/outputs/{run id}/{path}?at=<snapshot>&expires=<epoch s>&sig=<hex>`, where the
snapshot is the simulated moment the manifest described (an exact float repr). It needs
no auth header, pins the snapshot its manifest described (so a running run's files keep the
sizes the manifest announced), and is refused (403) once expired or when any part was changed.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import quote, urlencode

URL_LIFETIME_SECONDS = 15 * 60
FILES_PREFIX = "/outputs"


def signature(key: bytes, run_id: str, path: str, at: str, expires: int) -> str:
    message = "\n".join((run_id, path, at, str(expires))).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def sign_url(key: bytes, base: str, run_id: str, path: str, at: str, now: float) -> str:
    expires = int(now) + URL_LIFETIME_SECONDS
    query = urlencode({"at": at, "expires": expires, "sig": signature(key, run_id, path, at, expires)})
    return f"{base}{FILES_PREFIX}/{quote(run_id, safe='')}/{quote(path, safe='/')}?{query}"


def verify(key: bytes, run_id: str, path: str, at: str, expires: str, sig: str, now: float) -> str | None:
    """None when the URL is valid now, else why it is not: `expired` or `invalid`."""
    try:
        expires_at = int(expires)
    except ValueError:
        return "invalid"
    if not hmac.compare_digest(signature(key, run_id, path, at, expires_at), sig):
        return "invalid"
    if now > expires_at:
        return "expired"
    return None
