"""The network adapter: what each failure below HTTP is called, against real sockets."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

import pytest

from reconciler.osmosis.aiohttp_transport import AiohttpTransport
from reconciler.osmosis.transport import Request, TransportError

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nobody listens there


async def serving(handler: Handler, action: Callable[[str], Awaitable[object]]) -> object:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        return await action(f"http://127.0.0.1:{port}")
    finally:
        server.close()
        await server.wait_closed()


async def answer(raw: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(raw)
    await writer.drain()
    writer.close()


def test_a_refused_connection_was_never_sent() -> None:
    async def go() -> None:
        transport = AiohttpTransport()
        try:
            await transport.send(Request("GET", f"http://127.0.0.1:{free_port()}/x"))
        finally:
            await transport.aclose()

    with pytest.raises(TransportError) as caught:
        asyncio.run(go())
    assert caught.value.kind == "not_sent"


def test_a_body_cut_short_is_a_broken_connection() -> None:
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b"x" * 10

    async def fetch(base: str) -> object:
        transport = AiohttpTransport()
        try:
            async with transport.stream(Request("GET", base + "/file")) as response:
                return b"".join([chunk async for chunk in response.chunks()])
        finally:
            await transport.aclose()

    with pytest.raises(TransportError) as caught:
        asyncio.run(serving(lambda r, w: answer(raw, r, w), fetch))
    assert caught.value.kind == "broken"


def test_redirects_are_handed_back_not_followed() -> None:
    raw = b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n"

    async def fetch(base: str) -> object:
        transport = AiohttpTransport()
        try:
            response = await transport.send(Request("GET", base + "/x?sig=a%2Fb"))
            return response.status, response.headers.get("location")
        finally:
            await transport.aclose()

    assert asyncio.run(serving(lambda r, w: answer(raw, r, w), fetch)) == (302, "/elsewhere")


def test_the_url_is_sent_byte_for_byte() -> None:
    seen: list[bytes] = []

    async def record(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        seen.append(head.split(b"\r\n", 1)[0])
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")
        await writer.drain()
        writer.close()

    async def fetch(base: str) -> object:
        transport = AiohttpTransport()
        try:
            return (await transport.send(Request("GET", base + "/a%2Fb/c%20d?X-Sig=a%2Bb%3D&e=f"))).status
        finally:
            await transport.aclose()

    assert asyncio.run(serving(record, fetch)) == 204
    assert seen == [b"GET /a%2Fb/c%20d?X-Sig=a%2Bb%3D&e=f HTTP/1.1"]
