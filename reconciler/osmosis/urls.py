"""Platform base URLs and path segments, as the official client (0.3.8) treats them.

Normalisation, also used to compare URLs: trim; a scheme-less URL gets `http://` for a
loopback host and `https://` otherwise; lowercase scheme and host; drop the default port
(443 for https, 80 for http), the query and the fragment; strip trailing slashes.
A non-https URL whose host is not loopback is refused unless
OSMOSIS_ALLOW_INSECURE_PLATFORM_URL=1. A URL with credentials in it is refused outright
(our decision: they would end up in logs and reprs).
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
from urllib.parse import quote, urlsplit

from ..errors import ConfigError

ALLOW_INSECURE_ENV = "OSMOSIS_ALLOW_INSECURE_PLATFORM_URL"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_DEFAULT_PORTS = {"https": 443, "http": 80}


def segment(value: str) -> str:
    """One path segment, percent-encoded with no safe characters (`a/b c` -> `a%2Fb%20c`)."""
    return quote(value, safe="")


@functools.lru_cache(maxsize=64)  # asked for every presigned URL, of a handful of hosts
def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def normalize_base_url(raw: str) -> str:
    text = raw.strip()
    if not _SCHEME.match(text):
        guessed = urlsplit(f"//{text}").hostname or ""
        text = f"{'http' if is_loopback(guessed) else 'https'}://{text}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        raise ConfigError(f"Invalid platform URL: {raw.strip()!r}") from None
    if "@" in parts.netloc:
        raise ConfigError("Invalid platform URL: it must not contain credentials (the token comes from OSMOSIS_TOKEN)")
    scheme = parts.scheme.lower()
    host = parts.hostname
    if scheme not in _DEFAULT_PORTS or not host:
        raise ConfigError(
            f"Invalid platform URL: {raw.strip()!r}", hint="use a URL such as https://platform.osmosis.ai"
        )
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    return f"{scheme}://{netloc}{parts.path.rstrip('/')}"


def require_secure(url: str) -> None:
    """Refuse a non-https URL to a host that is not loopback, unless the user opted in."""
    parts = urlsplit(url)
    if parts.scheme == "https" or is_loopback(parts.hostname or ""):
        return
    if os.environ.get(ALLOW_INSECURE_ENV, "").strip() == "1":
        return
    raise ConfigError(
        f"Refusing non-HTTPS platform URL {url}: the token would travel in clear text",
        hint=f"use https, or set {ALLOW_INSECURE_ENV}=1 if you really mean it",
    )


def same_platform(a: str, b: str) -> bool:
    """Whether two platform settings name one platform (normalized as above); a setting that is
    no valid URL is the same only as the identical text."""
    try:
        return normalize_base_url(a) == normalize_base_url(b)
    except ConfigError:
        return a.strip() == b.strip()
