"""The network adapter of the transport port (reconciler.osmosis.transport), on aiohttp.

Chosen over httpx for its per-request cost: measured on the same Starlette server, 400 GETs at
concurrency 16, aiohttp spent 0.26 ms of client CPU per request where httpx spent 3.3-3.5 ms.
Its import is paid only by a client that talks to a URL: this module is imported when such a
transport is built, never by a local plan.

TLS: aiohttp builds two default TLS contexts when imported, and each parses the system's whole
CA bundle (50-70 ms apiece on a 2-core machine, over a third of the import), although neither
is used here: every https request carries the verified context `_verified_tls()` builds on the
first https request (one parse, and none for a platform on loopback http). So aiohttp is
imported with the CA file and directory pointed at nothing (`_no_default_ca_paths`): its own
contexts would verify no server at all, so a request that missed ours would fail closed. The
two variables are changed in the process environment for the length of that import only; the
commands import this module before they start any thread of their own.

One aiohttp.ClientSession per transport, created on first use inside the running event loop
(aiohttp binds a session to its loop). Redirects are never followed here. Proxies from the
environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) are honoured, as curl does; aiohttp's own
`trust_env` is off because it would also add credentials from ~/.netrc to requests that must
carry none (presigned GETs). For the same reason no cookie is kept: the platform authenticates
with the bearer token alone, and a cookie its answers (or a load balancer in front of it) set
would otherwise ride along on a presigned GET to the same host.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import sys
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from .transport import Headers, Request, Response, TransportError

# OpenSSL reads these when a context loads its default CA paths (SSL_CTX_set_default_verify_paths)
_CA_PATH_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR")


@contextmanager
def _no_default_ca_paths() -> Iterator[None]:
    """While aiohttp is first imported: TLS contexts that load the default CA paths load none."""
    if "aiohttp" in sys.modules:
        yield
        return
    saved = {name: os.environ.get(name) for name in _CA_PATH_VARIABLES}
    for name in _CA_PATH_VARIABLES:
        os.environ[name] = os.devnull
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


with _no_default_ca_paths():
    import aiohttp
    from yarl import URL


@functools.cache
def _verified_tls() -> ssl.SSLContext:
    """The context of every https request: the system's CA bundle (or SSL_CERT_FILE/SSL_CERT_DIR),
    hostnames checked; HTTP/1.1 offered, as aiohttp's own default context does."""
    context = ssl.create_default_context()
    context.set_alpn_protocols(["http/1.1"])
    return context


def _tls_for(url: str) -> ssl.SSLContext | bool:
    # the scheme as urlsplit reads it (after leading controls and spaces, without tabs and line
    # breaks anywhere), without parsing the rest of a URL that thousands of downloads share
    scheme, colon, _ = url.lstrip(_C0_AND_SPACE).partition(":")
    return _verified_tls() if colon and scheme.translate(_DROPPED).lower() == "https" else True


_C0_AND_SPACE = "".join(map(chr, range(0x21)))
_DROPPED = str.maketrans("", "", "\t\r\n")  # urllib.parse drops these wherever they are


CHUNK = 1 << 18  # read size of a streamed body: big reads, few wake-ups


class AiohttpTransport:
    """`timeout`: seconds for a whole exchange sent with `send`; streams limit connect and idle reads instead."""

    def __init__(
        self, *, timeout: float = 30.0, connect_timeout: float = 30.0, read_timeout: float = 600.0, limit: int = 100
    ) -> None:
        self._timeout = timeout
        self._stream_timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout, sock_read=read_timeout)
        self._limit = limit
        self._session: aiohttp.ClientSession | None = None
        self._proxies = urllib.request.getproxies_environment()

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._limit, limit_per_host=self._limit),
                trust_env=False,
                cookie_jar=aiohttp.DummyCookieJar(),  # see the module docstring: no cookies kept
                auto_decompress=True,
                skip_auto_headers=("Accept-Encoding",),  # only what the caller sets is sent
            )
        return self._session

    async def send(self, request: Request) -> Response:
        timeout = aiohttp.ClientTimeout(total=request.timeout if request.timeout is not None else self._timeout)
        try:
            async with self._client().request(
                request.method,
                _url(request.url),
                headers=dict(request.headers),
                data=request.body,
                allow_redirects=False,
                timeout=timeout,
                proxy=self._proxy(request.url),
                ssl=_tls_for(request.url),
            ) as answer:
                body = await answer.read()
                return Response(answer.status, Headers(answer.headers.items()), body)
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise _failure(exc) from exc

    def stream(self, request: Request) -> _StreamContext:
        return _StreamContext(self, request)

    async def _open(self, request: Request) -> aiohttp.ClientResponse:
        try:
            return await self._client().request(
                request.method,
                _url(request.url),
                headers=request.headers,
                data=request.body,
                allow_redirects=False,
                timeout=self._stream_timeout,
                proxy=self._proxy(request.url),
                ssl=_tls_for(request.url),
            )
        except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
            raise _failure(exc) from exc

    def _proxy(self, url: str) -> str | None:
        if not self._proxies:
            return None
        parts = urlsplit(url)
        if urllib.request.proxy_bypass_environment(parts.hostname or "", self._proxies):  # type: ignore[attr-defined]
            return None
        return self._proxies.get(parts.scheme) or self._proxies.get("all")

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class _StreamContext:
    """`stream`'s block: the answer with its body unread; leaving the block releases the
    connection, or drops it when the block raised with the body unread. A class, not a
    generator-based context manager: one is entered per downloaded file."""

    __slots__ = ("_answer", "_request", "_transport")

    def __init__(self, transport: AiohttpTransport, request: Request) -> None:
        self._transport = transport
        self._request = request
        self._answer: aiohttp.ClientResponse | None = None

    async def __aenter__(self) -> _Streamed:
        self._answer = await self._transport._open(self._request)
        return _Streamed(self._answer)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        answer, self._answer = self._answer, None
        if answer is None:
            return
        if exc_type is not None:
            answer.close()  # an unread body: drop the connection rather than drain it
        answer.release()


class _Streamed:
    def __init__(self, answer: aiohttp.ClientResponse) -> None:
        self._answer = answer
        self._headers = Headers(answer.headers.items())

    @property
    def status(self) -> int:
        return self._answer.status

    @property
    def headers(self) -> Headers:
        return self._headers

    async def chunks(self) -> AsyncIterator[bytes]:
        content = self._answer.content
        try:
            while chunk := await content.read(CHUNK):  # read, not iter_chunked: one layer less per chunk
                yield chunk
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise _failure(exc) from exc


def _url(url: str) -> URL:
    # encoded=True: the URL is sent byte for byte as given (a presigned signature covers it)
    return URL(url, encoded=True)


def _failure(exc: BaseException) -> TransportError:
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return TransportError("not_sent", detail)
    if isinstance(exc, aiohttp.ClientConnectorError):  # TLS handshakes included: no request left
        return TransportError("not_sent", detail)
    if isinstance(exc, (aiohttp.InvalidURL, ValueError)):
        return TransportError("invalid", detail)
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, aiohttp.ServerTimeoutError)):
        return TransportError("timeout", detail)
    return TransportError("broken", detail)
