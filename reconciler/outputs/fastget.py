"""Presigned GETs on raw asyncio: HTTP/1.1, keep-alive, big reads, and httpx for the rest.

    fast = FastGet(client.direct_fetch(), fallback=client.open_presigned, max_idle=jobs)
    async with fast.open(url, headers={"Range": "bytes=10-"}) as response:
        response.status_code, response.headers.get("Content-Range")
        async for chunk in response.aiter_raw(): ...
    await fast.aclose()

It serves the common case of a presigned download and hands anything else to `fallback`
(OsmosisClient.open_presigned, httpx), by making the same GET there:

    the URL      not http(s); userinfo; a host or request target httpx would re-encode or
                 normalise (non-ASCII, spaces or control characters, `%` not followed by two
                 hex digits, `.`/`..` segments);
                 a hop `DirectFetch.hop_allowed` refuses (the fallback then refuses it too)
    the answer   3xx (redirects are followed there, each hop checked); 101; Transfer-Encoding;
                 a folded header line or bare-LF line ends; a 200 or 206 without Content-Length
                 (close-delimited, HTTP/1.0 or not); a Content-Encoding other than identity

Every other failure is PlatformUnreachable, the same error the fallback raises for a network
failure (callers retry it):

    malformed    a status line or header line that is not HTTP/1.x, a bad or conflicting
                 Content-Length, a head over MAX_HEAD bytes
    network      refused, reset, TLS failure, no byte for `read_timeout` seconds, the connection
                 closing before the body is complete (what arrived was already handed out, so a
                 caller writing chunks to a partial file resumes from there)

A keep-alive connection that the server closed while it sat idle is detected when it is taken
(nothing may arrive on an idle connection), and one that closes right after the request,
before any byte of the answer, is retried once on a new connection (a GET is safe to repeat;
this is the race of a server timing out an idle connection as we reuse it).

Requests carry Host, User-Agent, Accept, `Accept-Encoding: identity`, `Connection: keep-alive`
and the caller's headers (Range); never credentials (an Authorization header is a ValueError,
as it is for open_presigned). Interim 1xx answers are skipped. Bodies are framed by
Content-Length only, and read straight from the socket into one buffer of BUFFER bytes per
connection (an asyncio BufferedProtocol), so memory stays flat in the file size. Body chunks
are memoryviews of that buffer, not copies: each is valid until the next one is asked for
(transfer.Chunk), time enough to write it. Answers other than 200/206 (403, 5xx...) keep
their headers; a body without Content-Length is not read (callers only look at the status).

Connections are pooled per origin (scheme, host, port). Every request in flight holds one, and
at most `max_idle` wait idle in total, so a caller running N requests at once opens about N.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import re
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..osmosis.errors import PlatformUnreachable
from .transfer import Chunk, Opener, Response

if TYPE_CHECKING:
    from ..osmosis.client import DirectFetch

BUFFER = 1 << 20  # bytes read at most per socket read, and buffered at most per connection
MAX_HEAD = 64 * 1024  # status line and headers of one answer
MAX_INTERIM = 8  # 1xx answers skipped before the real one
DRAIN = 64 * 1024  # an unread error body up to this size is skipped to keep the connection
COMPACT_BELOW = 64 * 1024  # free tail under which unread bytes move to the buffer's start
CONNECT_TIMEOUT = 30.0
READ_TIMEOUT = 600.0  # seconds without a byte (the fallback's read timeout)
_NO_URL = "<redacted URL>"

_STATUS = re.compile(rb"HTTP/1\.([01]) (\d{3})(?: [\t\x20-\x7e\x80-\xff]*)?")
_FIELD = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):([\t\x20-\x7e\x80-\xff]*)")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_VALUE = re.compile(r"[\t\x20-\x7e]*")
_HOST = re.compile(r"[a-z0-9.\-]+|[0-9a-f:.]+")  # a DNS name or IPv4, or an IPv6 literal (unbracketed)
_TARGET = re.compile(r"/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*")
_DIGITS = re.compile(r"[0-9]{1,18}")
_UNSAFE = re.compile(r"[\x00-\x20\x7f]")  # with non-ASCII, which isascii() rules out
_DEFAULT_PORTS = {"http": 80, "https": 443}
_URL = re.compile(r"(https?)://([^/?#]*)([^#]*)(?:#.*)?")  # scheme, authority, path?query (#fragment dropped)


class Unusual(Exception):
    """A well-formed answer (or URL) this client leaves to the fallback."""


class Malformed(Exception):
    """An answer that is not HTTP/1.x as we read it."""


class _Stale(Exception):
    """A reused connection closed before any byte of the answer."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str  # lowercase, IPv6 without brackets
    port: int
    authority: str  # the Host header: host, [v6], with :port unless the default
    path: str  # the request target: path?query, exactly as in the URL

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)


def parse_target(url: str) -> Target | None:
    """Where and what to ask for, or None when the URL is one for the fallback."""
    if not url.isascii() or _UNSAFE.search(url):
        return None  # urlsplit would drop tabs and line breaks silently; httpx decides what they mean
    parts = _URL.fullmatch(url)
    if parts is None:
        return None
    scheme, netloc, rest = parts.groups()
    origin = _origin(scheme, netloc)
    if origin is None:
        return None
    path = rest if rest.startswith("/") else f"/{rest}"  # "" or "?query": the root
    if path.endswith("?"):
        path = path[:-1]  # an empty query, as urlsplit and httpx read it
    if not _TARGET.fullmatch(path):
        return None
    if any(s in (".", "..") for s in path.partition("?")[0].split("/")):
        return None  # httpx removes dot segments; the signature was made for the URL as given
    host, port, authority = origin
    return Target(scheme, host, port, authority, path)


@functools.lru_cache(maxsize=64)
def _origin(scheme: str, netloc: str) -> tuple[str, int, str] | None:
    """(host, port, Host header) of a URL's authority, or None when it is one for the fallback."""
    try:
        parts = urlsplit(f"{scheme}://{netloc}/")
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if host is None or "@" in netloc or not _HOST.fullmatch(host):
        return None
    if ":" in host and not netloc.startswith("["):
        return None
    default = _DEFAULT_PORTS[scheme]
    port = default if port is None else port
    name = f"[{host}]" if ":" in host else host
    return host, port, name if port == default else f"{name}:{port}"


class FastHeaders:
    """Response headers by case-insensitive name; repeated fields joined with `, `."""

    def __init__(self, fields: dict[str, str]) -> None:
        self._fields = fields

    def get(self, key: str, /) -> str | None:
        return self._fields.get(key.lower())

    def __repr__(self) -> str:
        return f"FastHeaders({self._fields!r})"


@dataclass(frozen=True)
class Head:
    version: int  # the minor version: 1 for HTTP/1.1, 0 for HTTP/1.0
    status: int
    headers: FastHeaders


def parse_head(head: bytes) -> Head:
    """The status line and header fields of one answer (without its final blank line).

    Raises Malformed when it is not HTTP/1.x, Unusual for what only the fallback reads
    (folded lines, bare CR or LF).
    """
    lines = head.split(b"\r\n")
    status = _STATUS.fullmatch(lines[0])
    if status is None:
        if b"\n" in lines[0] or b"\r" in lines[0]:
            raise Unusual("bare CR or LF in the status line")
        raise Malformed("the status line is not HTTP/1.x")
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            raise Unusual("a folded header line")
        match = _FIELD.fullmatch(line)
        if match is None:
            if b"\n" in line or b"\r" in line:
                raise Unusual("bare CR or LF in a header line")
            raise Malformed("a header line is not `name: value`")
        name = match.group(1).decode("ascii").lower()
        value = match.group(2).strip(b" \t").decode("latin-1")
        fields[name] = f"{fields[name]}, {value}" if name in fields else value
    return Head(version=int(status.group(1)), status=int(status.group(2)), headers=FastHeaders(fields))


def content_length(headers: FastHeaders) -> int | None:
    """The Content-Length, None when absent; Malformed when invalid or conflicting."""
    raw = headers.get("content-length")
    if raw is None:
        return None
    values = {v.strip() for v in raw.split(",")}
    if len(values) != 1:
        raise Malformed("conflicting Content-Length values")
    value = values.pop()
    if not _DIGITS.fullmatch(value):
        raise Malformed("an invalid Content-Length")
    return int(value)


class Connection(asyncio.BufferedProtocol):
    """One keep-alive connection: the socket reads into `buffer`; unread bytes are [start, end)."""

    def __init__(self, origin: tuple[str, str, int], loop: asyncio.AbstractEventLoop, read_timeout: float) -> None:
        self.origin = origin
        self.loop = loop
        self.read_timeout = read_timeout
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray(BUFFER)
        self.view = memoryview(self.buffer)
        self.start = 0
        self.end = 0
        self.eof = False
        self.error: BaseException | None = None
        self.paused = False
        self.answers = 0  # answers completely read on this connection
        self.received = 0  # bytes received since the last request was sent
        self.lost: asyncio.Future[None] = loop.create_future()
        self._waiter: asyncio.Future[None] | None = None

    # --- the transport's side ---

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        if self.start == self.end:
            self.start = self.end = 0
        elif self.start and len(self.buffer) - self.end < COMPACT_BELOW:
            size = self.end - self.start
            self.view[:size] = self.view[self.start : self.end]  # memoryview copies overlapping spans safely
            self.start, self.end = 0, size
        return self.view[self.end :]

    def buffer_updated(self, nbytes: int) -> None:
        self.end += nbytes
        self.received += nbytes
        if self.end == len(self.buffer) and self.start == 0 and self.transport is not None:
            self.transport.pause_reading()  # full: resumed once the reader takes bytes
            self.paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if not self.lost.done():
            self.lost.set_result(None)

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    # --- the reader's side ---

    @property
    def available(self) -> int:
        return self.end - self.start

    @property
    def alive(self) -> bool:
        """Idle and usable: open, nothing unexpected has arrived since the last answer."""
        return not self.eof and self.available == 0 and self.transport is not None and not self.transport.is_closing()

    def send(self, data: bytes) -> None:
        assert self.transport is not None
        self.received = 0
        self.transport.write(data)

    async def wait(self) -> None:
        """Until more bytes have arrived; raises when none ever will."""
        if self.eof:
            raise self.error or EOFError()
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        waiter = self.loop.create_future()
        self._waiter = waiter
        timer = self.loop.call_later(self.read_timeout, _expire, waiter)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None
        if self.available == 0 and self.eof:
            raise self.error or EOFError()

    def take(self, limit: int) -> memoryview:
        """Up to `limit` buffered bytes (at least one must be buffered), as a view of the buffer:
        valid until the reader waits again (the socket then reads into the same memory)."""
        size = min(limit, self.available)
        chunk = self.view[self.start : self.start + size]
        self.start += size
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return chunk

    async def read_head(self) -> bytes:
        """The bytes of the next answer's head, up to (without) its blank line."""
        checked = 0  # unread bytes already searched (an offset from `start`, which compaction moves)
        while True:
            found = self.buffer.find(b"\r\n\r\n", self.start + max(0, checked - 3), self.end)
            if found - self.start > MAX_HEAD:
                raise Malformed(f"a head over {MAX_HEAD} bytes")
            if found >= 0:
                head = bytes(self.view[self.start : found])
                self.start = found + 4
                return head
            if self.buffer.find(b"\n\n", self.start, self.end) >= 0:
                raise Unusual("a head with bare-LF line ends")
            if self.available > MAX_HEAD:
                raise Malformed(f"a head over {MAX_HEAD} bytes")
            checked = self.available
            try:
                await self.wait()
            except TimeoutError:
                raise
            except (EOFError, OSError):
                if self.received == 0 and self.answers > 0:
                    raise _Stale() from None
                raise

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_exception(TimeoutError())


class FastResponse:
    """One answer read by FastGet: status, headers and a Content-Length-framed body."""

    def __init__(self, head: Head, connection: Connection, length: int | None, keep_alive: bool) -> None:
        self.status_code = head.status
        self.headers = head.headers
        self.length = length  # None: unknown (an error answer without Content-Length); not read
        self.remaining = length or 0
        self.keep_alive = keep_alive and length is not None
        self._connection = connection

    def aiter_raw(self) -> AsyncIterator[Chunk]:
        return self._body()

    def aiter_bytes(self) -> AsyncIterator[Chunk]:
        return self._body()  # only identity content coding reaches here

    async def _body(self) -> AsyncIterator[Chunk]:
        """The body as views of the receive buffer, each valid until the next is asked for."""
        connection = self._connection
        while self.remaining:
            if connection.available == 0:
                try:
                    await connection.wait()
                except (OSError, EOFError) as exc:
                    got = (self.length or 0) - self.remaining
                    raise PlatformUnreachable(
                        f"Could not fetch {_NO_URL}: the connection ended after {got} of {self.length} bytes"
                        f" ({type(exc).__name__})"
                    ) from None
            chunk = connection.take(self.remaining)
            self.remaining -= len(chunk)
            yield chunk

    def skip_buffered_body(self) -> None:
        """Drop a small unread body when all of it has arrived already (keeps the connection)."""
        if 0 < self.remaining <= min(DRAIN, self._connection.available):
            self._connection.start += self.remaining
            self.remaining = 0


class FastGet:
    """Presigned GETs over pooled keep-alive connections; see the module docstring."""

    def __init__(
        self,
        direct: DirectFetch,
        fallback: Opener,
        *,
        max_idle: int = 8,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
    ) -> None:
        self.direct = direct
        self.fallback = fallback
        self.max_idle = max(1, max_idle)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.fast = 0  # answers served here
        self.fallbacks = 0  # requests handed to the fallback
        self.connections = 0  # connections opened
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._open: set[Connection] = set()
        self._ssl: ssl.SSLContext | None = None
        self._hops: dict[tuple[str, str, int], bool] = {}  # origin -> DirectFetch.hop_allowed

    @contextlib.asynccontextmanager
    async def open(self, url: str, *, headers: Mapping[str, str] | None = None) -> AsyncIterator[Response]:
        """A streamed GET of `url`, here or through the fallback (the signature of open_presigned)."""
        extra = _request_headers(headers)
        target = parse_target(url)
        if target is not None and not self._hop_allowed(target):
            target = None  # the fallback refuses it, with its own message
        answer: tuple[Connection, FastResponse] | None = None
        if target is not None:
            try:
                answer = await self._exchange(target, extra)
            except Unusual:
                answer = None
        if answer is None:
            self.fallbacks += 1
            async with self.fallback(url, headers=dict(headers) if headers else None) as response:
                yield response
            return
        connection, response = answer
        self.fast += 1
        try:
            yield response
        finally:
            response.skip_buffered_body()
            self._release(connection, reusable=response.keep_alive and response.remaining == 0)

    def _hop_allowed(self, target: Target) -> bool:
        allowed = self._hops.get(target.origin)
        if allowed is None:
            port = None if target.port == _DEFAULT_PORTS[target.scheme] else target.port
            allowed = self._hops[target.origin] = self.direct.hop_allowed(target.scheme, target.host, port)
        return allowed

    async def aclose(self) -> None:
        """Close every connection (idle or not) and wait, briefly, until they are closed."""
        self._idle.clear()
        connections, self._open = list(self._open), set()
        for connection in connections:
            connection.close()
        if connections:
            await asyncio.wait([c.lost for c in connections], timeout=1.0)

    async def _exchange(self, target: Target, extra: str) -> tuple[Connection, FastResponse]:
        request = (
            f"GET {target.path} HTTP/1.1\r\nHost: {target.authority}\r\nUser-Agent: {self.direct.user_agent}\r\n"
            f"Accept: */*\r\nAccept-Encoding: identity\r\nConnection: keep-alive\r\n{extra}\r\n"
        ).encode("latin-1")
        for attempt in (1, 2):
            connection = await self._acquire(target, fresh=attempt == 2)
            try:
                connection.send(request)
                return connection, await self._answer(connection)
            except _Stale:
                self._discard(connection)
                if attempt == 2:
                    raise PlatformUnreachable(f"Could not fetch {_NO_URL}: the connection closed") from None
            except Malformed as exc:
                self._discard(connection)
                raise PlatformUnreachable(
                    f"Could not fetch {_NO_URL}: the server sent a malformed answer ({exc})"
                ) from None
            except (OSError, EOFError) as exc:
                self._discard(connection)
                raise PlatformUnreachable(f"Could not fetch {_NO_URL}: {type(exc).__name__}") from None
            except BaseException:  # Unusual, cancellation: the connection is in an unknown state
                self._discard(connection)
                raise
        raise AssertionError("unreachable")

    async def _answer(self, connection: Connection) -> FastResponse:
        for _ in range(MAX_INTERIM + 1):
            head = parse_head(await connection.read_head())
            if head.status < 200 and head.status != 101:
                continue  # 100 Continue, 103 Early Hints: the answer follows
            if head.status == 101 or 300 <= head.status < 400:
                raise Unusual(f"HTTP {head.status}")
            if head.headers.get("transfer-encoding") is not None:
                raise Unusual("Transfer-Encoding")
            length = content_length(head.headers)
            if head.status in (204, 304):
                length = 0
            elif head.status in (200, 206):
                if length is None:
                    raise Unusual("no Content-Length")
                coding = (head.headers.get("content-encoding") or "identity").strip().lower()
                if coding not in ("", "identity"):
                    raise Unusual(f"Content-Encoding {coding}")
            tokens = {t.strip().lower() for t in (head.headers.get("connection") or "").split(",")}
            keep_alive = head.version == 1 and "close" not in tokens
            return FastResponse(head, connection, length, keep_alive)
        raise Malformed(f"more than {MAX_INTERIM} interim answers")

    async def _acquire(self, target: Target, *, fresh: bool) -> Connection:
        idle = self._idle.get(target.origin)
        while idle and not fresh:
            connection = idle.pop()
            if connection.alive:
                return connection
            self._discard(connection)
        return await self._connect(target)

    async def _connect(self, target: Target) -> Connection:
        loop = asyncio.get_running_loop()
        context = self._context() if target.scheme == "https" else None
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, protocol = await loop.create_connection(
                    lambda: Connection(target.origin, loop, self.read_timeout),
                    target.host,
                    target.port,
                    ssl=context,
                    server_hostname=target.host if context is not None else None,
                    ssl_handshake_timeout=self.connect_timeout if context is not None else None,
                )
        except OSError as exc:  # refused, unreachable, DNS, TLS verification, timeout
            raise PlatformUnreachable(f"Could not fetch {_NO_URL}: {type(exc).__name__}") from None
        self.connections += 1
        self._open.add(protocol)
        return protocol

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:
            context = self.direct.ssl_context()
            context.set_alpn_protocols(["http/1.1"])
            self._ssl = context
        return self._ssl

    def _release(self, connection: Connection, *, reusable: bool) -> None:
        if reusable:
            connection.answers += 1
        if not (reusable and connection.alive) or sum(map(len, self._idle.values())) >= self.max_idle:
            self._discard(connection)
            return
        self._idle.setdefault(connection.origin, []).append(connection)

    def _discard(self, connection: Connection) -> None:
        connection.close()
        self._open.discard(connection)


def _request_headers(headers: Mapping[str, str] | None) -> str:
    """The caller's header lines; an Authorization header or a line break is a ValueError."""
    if not headers:
        return ""
    lines = []
    for name, value in headers.items():
        lowered = name.lower()
        if lowered == "authorization":
            raise ValueError("presigned fetches carry no Authorization header")
        if not _TOKEN.fullmatch(name) or not _VALUE.fullmatch(value):
            raise ValueError(f"invalid request header {name!r}")
        if lowered in ("host", "connection", "transfer-encoding", "content-length"):
            raise ValueError(f"{name} is set by the client")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines)
