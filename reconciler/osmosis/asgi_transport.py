"""The in-process adapter of the transport port: calls an ASGI app directly, with no socket.

`platform = "local"` runs the local platform inside the reconciler process; its requests go
straight into the app's ASGI callable. Not aiohttp-asgi-connector (an aiohttp connector that
does the same): it would make every local plan import aiohttp (0.1-0.2 s of imports even
without the CA bundle parses osmosis/aiohttp_transport.py spares it), for no gain: nothing
crosses a network. This adapter needs nothing but asyncio.

Each request runs the app as a task of the caller's event loop. `send` gathers the whole
answer; `stream` hands the body over chunk by chunk through a small queue, so a large output
file never sits in memory whole. An exception inside the app becomes a 500 answer, as a
server would send (the app's own error handling normally answers first).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import unquote, urlsplit

from .transport import Headers, Request, Response, StreamedResponse, TransportError

Message = MutableMapping[str, Any]
App = Callable[
    [MutableMapping[str, Any], Callable[[], Awaitable[Message]], Callable[[Message], Awaitable[None]]],
    Awaitable[None],
]
_QUEUED_CHUNKS = 4  # body pieces buffered between the app and the reader (backpressure beyond)
_ERROR = Response(500, Headers([("content-type", "text/plain")]), b"Internal Server Error")


class AsgiTransport:
    """Requests to `app`, answered in this process. Redirects are not followed (the port's rule)."""

    def __init__(self, app: App, *, client: tuple[str, int] = ("127.0.0.1", 123)) -> None:
        self._app = app
        self._client = client

    async def send(self, request: Request) -> Response:
        async with self.stream(request) as answer:
            body = b"".join([chunk async for chunk in answer.chunks()])
            return Response(answer.status, answer.headers, body)

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[StreamedResponse]:
        scope = self._scope(request)
        exchange = _Exchange(request.body or b"")
        task = asyncio.create_task(self._run(scope, exchange))
        try:
            start = await exchange.started
            yield _Streamed(start, exchange)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def aclose(self) -> None:
        return None

    async def _run(self, scope: MutableMapping[str, Any], exchange: _Exchange) -> None:
        try:
            await self._app(scope, exchange.receive, exchange.send)
        except asyncio.CancelledError:
            raise
        except Exception:
            if not exchange.started.done():
                exchange.started.set_result(_ERROR)
                await exchange.body.put(_ERROR.body)
            elif not exchange.complete:  # Starlette re-raises after sending its own 500: that answer stands
                await exchange.body.put(TransportError("broken", "the application failed while answering"))
        else:
            if not exchange.started.done():
                exchange.started.set_result(_ERROR)
                await exchange.body.put(_ERROR.body)
        await exchange.body.put(None)

    def _scope(self, request: Request) -> MutableMapping[str, Any]:
        parts = urlsplit(request.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise TransportError("invalid", f"not an http(s) URL: {parts.scheme or '(no scheme)'}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        raw_path = parts.path or "/"
        headers = [(k.lower().encode("latin-1"), str(v).encode("latin-1")) for k, v in request.headers.items()]
        if not any(k == b"host" for k, _ in headers):
            headers.insert(0, (b"host", parts.netloc.encode("latin-1")))
        if request.body is not None and not any(k == b"content-length" for k, _ in headers):
            headers.append((b"content-length", str(len(request.body)).encode()))
        return {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": request.method.upper(),
            "scheme": parts.scheme,
            "path": unquote(raw_path),
            "raw_path": raw_path.encode("latin-1"),
            "query_string": parts.query.encode("latin-1"),
            "root_path": "",
            "headers": headers,
            "client": self._client,
            "server": (parts.hostname, port),
        }


class _Exchange:
    """One request's ASGI channel: the request body in, the answer's start and body pieces out."""

    def __init__(self, body: bytes) -> None:
        self._body = body
        self._sent_body = False
        self.started: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self.body: asyncio.Queue[bytes | TransportError | None] = asyncio.Queue(maxsize=_QUEUED_CHUNKS)
        self.complete = False  # the last body piece was sent
        self._disconnected = asyncio.Event()  # never set: the reader leaving cancels the app instead

    async def receive(self) -> Message:
        if not self._sent_body:
            self._sent_body = True
            return {"type": "http.request", "body": self._body, "more_body": False}
        await self._disconnected.wait()  # only asked after the body: wait until the reader leaves
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            pairs = [(bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in message.get("headers", [])]
            if not self.started.done():
                self.started.set_result(Response(int(message["status"]), Headers(pairs)))
        elif message["type"] == "http.response.body":
            chunk = bytes(message.get("body", b""))
            if chunk:
                await self.body.put(chunk)
            if not message.get("more_body", False):
                self.complete = True


class _Streamed:
    def __init__(self, start: Response, exchange: _Exchange) -> None:
        self._start = start
        self._exchange = exchange

    @property
    def status(self) -> int:
        return self._start.status

    @property
    def headers(self) -> Headers:
        return self._start.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        while True:
            piece = await self._exchange.body.get()
            if piece is None:
                return
            if isinstance(piece, TransportError):
                raise piece
            yield piece
