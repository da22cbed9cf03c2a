"""A transport of our own for client tests: every request goes to a handler function.

The handler receives a `Sent` (what the client put on the wire) and returns a Response built
with `reply`, or raises TransportError to stand for a network failure of a given kind.
"""

from __future__ import annotations

import gzip
import inspect
import json as jsonlib
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from reconciler.osmosis.transport import Headers, Request, Response, StreamedResponse, TransportError


@dataclass(frozen=True)
class Sent:
    """One request as the fake saw it."""

    method: str
    url: str
    headers: Headers
    content: bytes

    @property
    def raw_path(self) -> bytes:
        return (urlsplit(self.url).path or "/").encode()

    @property
    def path(self) -> str:
        return unquote(urlsplit(self.url).path or "/")

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def params(self) -> dict[str, str]:
        return dict(parse_qsl(urlsplit(self.url).query, keep_blank_values=True))


def reply(
    status: int = 200,
    *,
    json: Any = None,
    text: str | None = None,
    content: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """An answer: `json` (serialized, with its content type), `text`, raw `content`, or nothing."""
    sent = dict(headers or {})
    if json is not None:
        body = jsonlib.dumps(json).encode()
        sent.setdefault("Content-Type", "application/json")
    elif text is not None:
        body = text.encode()
        sent.setdefault("Content-Type", "text/plain; charset=utf-8")
    else:
        body = content or b""
    return Response(status, Headers(sent.items()), body)


@dataclass(frozen=True)
class Broken:
    """A streamed answer whose body breaks off after `body` (a reset connection)."""

    status: int
    headers: Headers
    body: bytes


Handler = Callable[[Sent], "Response | Broken | Awaitable[Response | Broken]"]


class FakeTransport:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.closed = False

    async def _answer(self, request: Request) -> Response | Broken:
        sent = Sent(request.method, request.url, Headers(request.headers.items()), request.body or b"")
        answer = self.handler(sent)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    async def send(self, request: Request) -> Response:
        answer = await self._answer(request)
        if isinstance(answer, Broken):
            raise TransportError("broken", "ReadError: connection reset by peer")
        return answer

    @asynccontextmanager
    async def stream(self, request: Request) -> AsyncIterator[StreamedResponse]:
        yield _Streamed(await self._answer(request))

    async def aclose(self) -> None:
        self.closed = True


class _Streamed:
    def __init__(self, answer: Response | Broken) -> None:
        self._answer = answer

    @property
    def status(self) -> int:
        return self._answer.status

    @property
    def headers(self) -> Headers:
        return self._answer.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        body = self._answer.body
        if (self.headers.get("Content-Encoding") or "").strip().lower() == "gzip":
            body = gzip.decompress(body)  # a transport hands out decoded bytes
        for start in range(0, len(body), 4096):
            yield body[start : start + 4096]
        if isinstance(self._answer, Broken):
            raise TransportError("broken", "ReadError: connection reset by peer")
