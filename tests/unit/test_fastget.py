"""The raw presigned GET client against a tiny scripted HTTP server on 127.0.0.1.

Each test scripts the server's replies byte for byte (a reply is raw bytes, or a coroutine
that writes what it likes), so malformed, short, chunked and redirecting answers are exact.
The fallback (httpx in production) is a recording fake here: what reaches it is what the
client declined to handle.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from reconciler.osmosis.client import DirectFetch, OsmosisClient
from reconciler.osmosis.errors import PlatformUnreachable
from reconciler.outputs.fastget import BUFFER, MAX_HEAD, FastGet, Malformed, Unusual, parse_head, parse_target
from reconciler.outputs.paths import Accepted
from reconciler.outputs.transfer import Chunk, Response, Transfer

from .download_fake import FAST_RETRY

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
Reply = bytes | Handler  # a handler returns False to close the connection


def ok(body: bytes, *extra: str, status: str = "200 OK") -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def hang_up(data: bytes) -> Handler:
    """Write `data`, then close the connection."""

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(data)
        await writer.drain()
        return False

    return reply


@dataclass
class TinyServer:
    replies: list[Reply]
    requests: list[dict[str, str]] = field(default_factory=list)  # lowercased headers, plus ":target"
    connections: int = 0
    url: str = ""
    _server: asyncio.Server | None = None
    _writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def __aenter__(self) -> TinyServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.append(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                request = {":target": lines[0].split(" ")[1]}
                request.update((k.strip().lower(), v.strip()) for k, v in (ln.split(":", 1) for ln in lines[1:] if ln))
                self.requests.append(request)
                reply = self.replies.pop(0) if self.replies else hang_up(b"")
                if isinstance(reply, bytes):
                    writer.write(reply)
                    await writer.drain()
                elif not await reply(reader, writer):
                    return
        finally:
            writer.close()


@dataclass
class FakeAnswer:
    status_code: int = 299
    body: bytes = b"from the fallback"

    @property
    def headers(self) -> dict[str, str]:
        return {"Content-Length": str(len(self.body))}

    async def _chunks(self) -> AsyncIterator[Chunk]:
        yield self.body

    def aiter_raw(self) -> AsyncIterator[Chunk]:
        return self._chunks()

    def aiter_bytes(self) -> AsyncIterator[Chunk]:
        return self._chunks()


@dataclass
class Fallback:
    calls: list[tuple[str, dict[str, str] | None]] = field(default_factory=list)

    @contextlib.asynccontextmanager
    async def __call__(self, url: str, *, headers: dict[str, str] | None = None) -> AsyncIterator[Response]:
        self.calls.append((url, headers))
        yield FakeAnswer()


def direct(*, allowed: bool = True, context: ssl.SSLContext | None = None) -> DirectFetch:
    return DirectFetch(
        user_agent="reconciler/test",
        hop_allowed=lambda scheme, host, port: allowed,
        ssl_context=(lambda: context) if context is not None else ssl.create_default_context,
    )


def run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(test())


async def fetch(fast: FastGet, url: str, headers: Mapping[str, str] | None = None) -> tuple[int, bytes, Response]:
    async with fast.open(url, headers=headers) as response:
        body = b"".join([bytes(chunk) async for chunk in response.aiter_raw()])
        return response.status_code, body, response


# --- the common case ------------------------------------------------------------------------


def test_a_body_arrives_and_the_connection_is_reused() -> None:
    async def test() -> None:
        async with TinyServer([ok(b"one", "Content-Type: x"), ok(b"two")]) as server:
            fast = FastGet(direct(), Fallback())
            assert (await fetch(fast, f"{server.url}/a?sig=s"))[:2] == (200, b"one")
            assert (await fetch(fast, f"{server.url}/b"))[:2] == (200, b"two")
            await fast.aclose()
        assert server.connections == 1 and fast.fast == 2 and fast.fallbacks == 0

    run(test)


def test_the_request_carries_no_credentials_and_asks_for_identity() -> None:
    async def test() -> None:
        async with TinyServer([ok(b"x")]) as server:
            fast = FastGet(direct(), Fallback())
            await fetch(fast, f"{server.url}/files/a%20b.json?X-Amz-Signature=ab%2Fcd&e=1", {"Range": "bytes=5-"})
            await fast.aclose()
        request = server.requests[0]
        assert request[":target"] == "/files/a%20b.json?X-Amz-Signature=ab%2Fcd&e=1"
        assert request["host"] == server.url.removeprefix("http://")
        assert request["accept-encoding"] == "identity" and request["range"] == "bytes=5-"
        assert request["user-agent"] == "reconciler/test" and request["connection"] == "keep-alive"
        assert "authorization" not in request and "cookie" not in request

    run(test)


def test_an_authorization_header_is_refused_before_any_request() -> None:
    async def test() -> None:
        fast = FastGet(direct(), Fallback())
        with pytest.raises(ValueError, match="no Authorization"):
            async with fast.open("http://127.0.0.1:9/x", headers={"authorization": "Bearer t"}):
                pass

    run(test)


def test_a_body_larger_than_the_buffer_streams_in_bounded_chunks() -> None:
    data = os.urandom(3 * BUFFER + 12345)

    async def test() -> None:
        async with TinyServer([ok(data)]) as server:
            fast = FastGet(direct(), Fallback())
            async with fast.open(f"{server.url}/big") as response:
                sizes, parts = [], []
                async for chunk in response.aiter_raw():
                    sizes.append(len(chunk))
                    parts.append(bytes(chunk))
            await fast.aclose()
        assert b"".join(parts) == data and max(sizes) <= BUFFER

    run(test)


def test_an_error_answer_keeps_its_headers_and_the_connection() -> None:
    async def test() -> None:
        body = b'{"message":"expired"}'
        async with TinyServer([ok(body, "Retry-After: 3", status="503 Unavailable"), ok(b"fine")]) as server:
            fast = FastGet(direct(), Fallback())
            async with fast.open(f"{server.url}/x") as response:
                assert response.status_code == 503 and response.headers.get("retry-after") == "3"
            assert (await fetch(fast, f"{server.url}/x"))[:2] == (200, b"fine")
            await fast.aclose()
        assert server.connections == 1

    run(test)


def test_interim_answers_are_skipped() -> None:
    async def test() -> None:
        async with TinyServer([b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"done")]) as server:
            fast = FastGet(direct(), Fallback())
            assert (await fetch(fast, server.url + "/"))[:2] == (200, b"done")
            await fast.aclose()

    run(test)


# --- malformed and broken answers ------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/2 200 OK\r\nContent-Length: 1\r\n\r\nx",
        b"ICY 200 OK\r\nContent-Length: 1\r\n\r\nx",
        b"HTTP/1.1 20 OK\r\nContent-Length: 1\r\n\r\nx",
        b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1, 2\r\n\r\nx",
        b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nBad Name: x\r\nContent-Length: 0\r\n\r\n",
    ],
    ids=["http2", "not-http", "short-status", "no-colon", "two-lengths", "negative-length", "space-in-name"],
)
def test_a_malformed_answer_is_a_network_error_not_a_fallback(reply: bytes) -> None:
    async def test() -> None:
        async with TinyServer([reply]) as server:
            fallback = Fallback()
            fast = FastGet(direct(), fallback)
            with pytest.raises(PlatformUnreachable, match="malformed") as raised:
                await fetch(fast, f"{server.url}/x?sig=secret")
            await fast.aclose()
        assert fallback.calls == [] and "secret" not in str(raised.value)

    run(test)


def test_a_head_over_the_limit_is_refused_without_reading_on() -> None:
    async def test() -> None:
        huge = b"HTTP/1.1 200 OK\r\n" + b"X-Filler: " + b"a" * (MAX_HEAD + 10) + b"\r\n\r\n"
        async with TinyServer([huge]) as server:
            fast = FastGet(direct(), Fallback())
            with pytest.raises(PlatformUnreachable, match="head over"):
                await fetch(fast, server.url + "/")
            await fast.aclose()

    run(test)


def test_a_short_body_hands_out_what_came_then_fails() -> None:
    async def test() -> None:
        async with TinyServer([hang_up(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345")]) as server:
            fast = FastGet(direct(), Fallback())
            got = []
            with pytest.raises(PlatformUnreachable, match="after 5 of 10 bytes"):
                async with fast.open(server.url + "/") as response:
                    async for chunk in response.aiter_raw():
                        got.append(bytes(chunk))
            await fast.aclose()
        assert b"".join(got) == b"12345"

    run(test)


def test_no_answer_within_the_read_timeout_is_a_network_error() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(5)
        return False

    async def test() -> None:
        async with TinyServer([silent]) as server:
            fast = FastGet(direct(), Fallback(), read_timeout=0.2)
            with pytest.raises(PlatformUnreachable, match="TimeoutError"):
                await fetch(fast, server.url + "/")
            await fast.aclose()

    run(test)


def test_a_refused_connection_is_a_network_error() -> None:
    async def test() -> None:
        async with TinyServer([]) as server:
            url = server.url
        fast = FastGet(direct(), Fallback())
        with pytest.raises(PlatformUnreachable):
            await fetch(fast, url + "/")
        await fast.aclose()

    run(test)


def test_a_keep_alive_connection_closed_while_idle_is_replaced() -> None:
    async def test() -> None:
        async with TinyServer([hang_up(ok(b"first")), ok(b"second")]) as server:
            fast = FastGet(direct(), Fallback())
            assert (await fetch(fast, server.url + "/"))[1] == b"first"
            await asyncio.sleep(0.05)  # the close reaches the idle connection
            assert (await fetch(fast, server.url + "/"))[1] == b"second"
            await fast.aclose()
        assert server.connections == 2

    run(test)


def test_a_reused_connection_closed_before_answering_is_retried_once_on_a_new_one() -> None:
    async def test() -> None:
        # the server closes right after reading the second request: a keep-alive race
        async with TinyServer([ok(b"first"), hang_up(b""), ok(b"second")]) as server:
            fast = FastGet(direct(), Fallback())
            assert (await fetch(fast, server.url + "/"))[1] == b"first"
            assert (await fetch(fast, server.url + "/"))[1] == b"second"
            await fast.aclose()
        assert server.connections == 2 and len(server.requests) == 3

    run(test)


def test_a_new_connection_closed_before_answering_is_not_retried() -> None:
    async def test() -> None:
        async with TinyServer([hang_up(b""), ok(b"never")]) as server:
            fast = FastGet(direct(), Fallback())
            with pytest.raises(PlatformUnreachable):
                await fetch(fast, server.url + "/")
            await fast.aclose()
        assert len(server.requests) == 1

    run(test)


# --- what the fallback handles -------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 302 Found\r\nLocation: https://elsewhere.test/x\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\nabc",
        b"HTTP/1.0 200 OK\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Encoding: gzip\r\n\r\nabc",
        b"HTTP/1.1 206 Partial\r\nContent-Range: bytes 0-2/3\r\n\r\nabc",
        b"HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 3\r\n\r\nabc",
        b"HTTP/1.1 200 OK\nContent-Length: 3\n\nabc",
    ],
    ids=[
        "redirect",
        "chunked",
        "chunked-and-length",
        "no-length",
        "http10-close-delimited",
        "gzip",
        "206-no-length",
        "folded-header",
        "bare-lf",
    ],
)
def test_an_unusual_answer_is_asked_again_through_the_fallback(reply: bytes) -> None:
    async def test() -> None:
        async with TinyServer([hang_up(reply)]) as server:
            fallback = Fallback()
            fast = FastGet(direct(), fallback)
            status, body, _ = await fetch(fast, f"{server.url}/x?sig=1", {"Range": "bytes=1-"})
            await fast.aclose()
        assert (status, body) == (299, b"from the fallback")
        assert fallback.calls == [(f"{server.url}/x?sig=1", {"Range": "bytes=1-"})]
        assert fast.fallbacks == 1 and fast.fast == 0

    run(test)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://127.0.0.1/x",
        "http://user:pw@127.0.0.1/x",
        "http://bücher.test/x",
        "http://127.0.0.1/a b",
        "http://127.0.0.1/a\tb?sig=1",
        "http://127.0.0.1/x?sig=1\r\nX-Injected: 1",
        "http://127.0.0.1/a%zz",
        "http://127.0.0.1/a/../b",
        "http://127.0.0.1:99999/x",
        "http:///x",
    ],
)
def test_urls_httpx_would_rewrite_or_refuse_go_to_the_fallback(url: str) -> None:
    async def test() -> None:
        fallback = Fallback()
        fast = FastGet(direct(), fallback)
        assert (await fetch(fast, url))[0] == 299
        assert fallback.calls == [(url, None)]

    run(test)


def test_a_hop_the_client_refuses_is_left_to_the_fallback_to_refuse() -> None:
    async def test() -> None:
        async with TinyServer([ok(b"never")]) as server:
            fallback = Fallback()
            fast = FastGet(direct(allowed=False), fallback)
            await fetch(fast, server.url + "/x")
            await fast.aclose()
        assert server.connections == 0 and len(fallback.calls) == 1

    run(test)


def test_targets_keep_the_url_exactly() -> None:
    target = parse_target("https://Bucket.S3.example.com:443/runs/r%2F1/a.json?X-Amz-Date=1&sig=a%2Bb")
    assert target is not None
    assert (target.scheme, target.host, target.port) == ("https", "bucket.s3.example.com", 443)
    assert target.authority == "bucket.s3.example.com" and target.path == "/runs/r%2F1/a.json?X-Amz-Date=1&sig=a%2Bb"
    v6 = parse_target("http://[::1]:8080")
    assert v6 is not None and (v6.host, v6.authority, v6.path) == ("::1", "[::1]:8080", "/")


def test_heads_are_parsed_strictly() -> None:
    head = parse_head(b"HTTP/1.1 206 Partial Content\r\nContent-Range:  bytes 1-2/3 \r\nX-A: 1\r\nx-a: 2")
    assert (head.version, head.status) == (1, 206)
    assert head.headers.get("content-range") == "bytes 1-2/3" and head.headers.get("X-A") == "1, 2"
    assert parse_head(b"HTTP/1.0 404").status == 404
    with pytest.raises(Malformed):
        parse_head(b"HTTP/1.1 200 OK\r\n: empty name")
    with pytest.raises(Unusual):
        parse_head(b"HTTP/1.1 200 OK\r\nA: 1\r\n\tfolded")


# --- with the transfer engine --------------------------------------------------------------


def item_for(root: Path, data: bytes) -> Accepted:
    return Accepted(
        path="artifacts/r1/out.bin", type="artifacts", size=len(data), token="t", target=root / "artifacts/r1/out.bin"
    )


async def transfer_one(root: Path, fast: FastGet, item: Accepted, url: str) -> str | None:
    async def refresh(_: Accepted) -> str:
        return url

    transfer = Transfer(fast.open, refresh, root, retry=FAST_RETRY, network_slots=2)
    try:
        outcome = await transfer.fetch(item, url)
    finally:
        transfer.close()
        await fast.aclose()
    return outcome.error


def test_a_connection_closed_mid_body_leaves_a_partial_that_the_next_request_resumes(tmp_path: Path) -> None:
    data = bytes(range(256)) * 40

    async def test() -> None:
        first = hang_up(ok(data)[: -len(data) + 3000])  # the head and 3000 bytes, then the line drops
        rest = ok(data[3000:], f"Content-Range: bytes 3000-{len(data) - 1}/{len(data)}", status="206 Partial Content")
        async with TinyServer([first, rest]) as server:
            item = item_for(tmp_path, data)
            assert await transfer_one(tmp_path, FastGet(direct(), Fallback()), item, server.url + "/f") is None
        assert item.target.read_bytes() == data and not item.partial.exists()
        assert "range" not in server.requests[0] and server.requests[1]["range"] == "bytes=3000-"

    run(test)


def test_a_206_with_the_wrong_range_is_thrown_away_and_the_file_fetched_again(tmp_path: Path) -> None:
    data = b"0123456789" * 100

    async def test() -> None:
        item = item_for(tmp_path, data)
        item.target.parent.mkdir(parents=True)
        item.partial.write_bytes(data[:400])  # left by an earlier process
        wrong = ok(data[401:], f"Content-Range: bytes 401-{len(data) - 1}/{len(data)}", status="206 Partial Content")
        async with TinyServer([wrong, ok(data)]) as server:
            assert await transfer_one(tmp_path, FastGet(direct(), Fallback()), item, server.url + "/f") is None
        assert item.target.read_bytes() == data
        assert server.requests[0]["range"] == "bytes=400-" and "range" not in server.requests[1]

    run(test)


def test_a_body_longer_than_the_manifest_never_lands(tmp_path: Path) -> None:
    data = b"abc" * 10

    async def test() -> None:
        async with TinyServer([ok(data + b"EXTRA")] * 8) as server:
            item = item_for(tmp_path, data)
            error = await transfer_one(tmp_path, FastGet(direct(), Fallback()), item, server.url + "/f")
        assert error is not None and "more than the 30 bytes" in error and not item.target.exists()

    run(test)


# --- TLS ------------------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to make a test certificate")
def test_https_verifies_the_certificate_and_sends_sni(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost"),
            *("-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    names: list[str | None] = []

    def note_sni(sock: ssl.SSLObject | ssl.SSLSocket, name: str | None, context: ssl.SSLContext) -> None:
        names.append(name)

    server_side.sni_callback = note_sni
    trusting = ssl.create_default_context(cafile=str(cert))
    data = os.urandom(2 * BUFFER + 77)

    async def test() -> None:
        served: list[bytes] = []

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            served.append(await reader.readuntil(b"\r\n\r\n"))
            writer.write(ok(data))
            await writer.drain()
            with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
                await reader.read()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=server_side)
        port = server.sockets[0].getsockname()[1]
        try:
            fast = FastGet(direct(context=trusting), Fallback())
            status, body, _ = await fetch(fast, f"https://localhost:{port}/secure?sig=1")
            await fast.aclose()
            untrusting = FastGet(direct(context=ssl.create_default_context()), Fallback())
            with pytest.raises(PlatformUnreachable, match="SSLCertVerificationError"):
                await fetch(untrusting, f"https://localhost:{port}/secure")
            await untrusting.aclose()
        finally:
            server.close()
            await server.wait_closed()
        assert (status, body) == (200, data) and names[0] == "localhost"
        assert served[0].startswith(b"GET /secure?sig=1 HTTP/1.1\r\nHost: localhost:")

    run(test)


# --- when the client may bypass httpx ------------------------------------------------------


def test_the_client_allows_direct_fetches_only_without_a_transport_or_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    async def test() -> None:
        async with OsmosisClient("https://platform.example", token="t", workspace="w") as client:
            fetch_direct = client.direct_fetch()
            assert fetch_direct is not None and fetch_direct.user_agent.startswith("reconciler/")
            assert fetch_direct.hop_allowed("https", "bucket.example", None)
            assert fetch_direct.hop_allowed("http", "127.0.0.1", 8080)
            assert not fetch_direct.hop_allowed("http", "bucket.example", None)
            monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
            assert client.direct_fetch() is None
        from .download_fake import FakePlatform

        async with FakePlatform({}).client() as mocked:
            assert mocked.direct_fetch() is None

    run(test)
