"""The one port through which the client speaks HTTP: a request in, status, headers and body out.

Two adapters implement it: reconciler.osmosis.aiohttp_transport for URLs (the network) and
reconciler.osmosis.asgi_transport for an ASGI app in this process (no socket). Everything
above the port (retries, typed errors, redaction, paging, redirects of presigned URLs) is
written once, against these types, and tested with a fake transport.

A failure below HTTP is a TransportError whose `kind` tells the retry rules what may have
happened on the other side:

    not_sent   no connection was made: the server cannot have seen the request
    invalid    the request cannot be sent at all (a malformed URL, an unsupported scheme)
    timeout    the server did not answer in time; it may have acted
    broken     the connection failed after the request left; it may have acted
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Literal, Protocol

FailureKind = Literal["not_sent", "invalid", "timeout", "broken"]


class TransportError(Exception):
    """The exchange failed below HTTP; `kind` is what the retry rules read (module docstring)."""

    def __init__(self, kind: FailureKind, detail: str) -> None:
        super().__init__(detail)
        self.kind: FailureKind = kind
        self.detail = detail


class Headers(Mapping[str, str]):
    """Response or request headers, looked up case-insensitively; a repeated name keeps its first value."""

    __slots__ = ("_items",)

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        items: dict[str, str] = {}
        for name, value in pairs:
            items.setdefault(name.lower(), value)
        self._items = items

    def __getitem__(self, key: str) -> str:
        return self._items[key.lower()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return self._items.get(key.lower(), default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"Headers({sorted(self._items)!r})"


@dataclass(frozen=True)
class Request:
    """One HTTP request. `url` is absolute and already encoded (query included)."""

    method: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | None = None
    timeout: float | None = None  # seconds for the whole exchange; None: the transport's default


@dataclass(frozen=True)
class Response:
    """A whole answer, body read."""

    status: int
    headers: Headers
    body: bytes = b""


class StreamedResponse(Protocol):
    """An answer whose body is read chunk by chunk (downloads: memory stays flat in file size)."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Headers: ...

    def chunks(self) -> AsyncIterator[bytes]:
        """The body, decoded, in pieces; raises TransportError when the connection breaks."""


class Transport(Protocol):
    """Sends requests; follows no redirects (the caller decides which hop is allowed)."""

    async def send(self, request: Request) -> Response:
        """The answer, or TransportError."""

    def stream(self, request: Request) -> AbstractAsyncContextManager[StreamedResponse]:
        """The answer with its body unread; leaving the block releases the connection."""

    async def aclose(self) -> None:
        """Release connections; the transport is not used afterwards."""
