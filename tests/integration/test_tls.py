"""https to the platform: the server's certificate is verified against the CA bundle the system
(or SSL_CERT_FILE) names, and a certificate nobody vouches for is refused, never trusted.

aiohttp is imported with its own default TLS contexts left empty (osmosis/aiohttp_transport.py
says why); every https request carries the verified context instead. A real TLS server on
127.0.0.1 with a certificate from a throwaway CA (trustme) stands for the platform, reached
directly or through a tunnelling proxy named by HTTPS_PROXY."""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import trustme

from reconciler.osmosis import aiohttp_transport
from reconciler.osmosis.aiohttp_transport import AiohttpTransport
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.errors import PlatformError
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Request, TransportError

PAGE = {"benchmark_runs": [], "total_count": 0, "has_more": False, "next_offset": None}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps(PAGE).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def https_url(ca: trustme.CA) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The verified context built anew, from the CA file the test names in SSL_CERT_FILE."""
    aiohttp_transport._verified_tls.cache_clear()
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    yield
    aiohttp_transport._verified_tls.cache_clear()


@pytest.fixture
def vouched(ca: trustme.CA, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusting: None) -> None:
    """SSL_CERT_FILE names a bundle holding the test CA, which issued the server's certificate."""
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))


def get(url: str) -> int:
    async def go() -> int:
        transport = AiohttpTransport(timeout=10)
        try:
            return (await transport.send(Request("GET", f"{url}/api/cli/benchmark-runs"))).status
        finally:
            await transport.aclose()

    return asyncio.run(go())


def test_a_server_whose_certificate_the_ca_bundle_vouches_for_is_spoken_to(https_url: str, vouched: None) -> None:
    assert get(https_url) == 200


def test_the_platform_client_lists_runs_over_verified_https(https_url: str, vouched: None) -> None:
    async def runs() -> list[object]:
        async with OsmosisClient(https_url, token="t", workspace="w", retry=RetryPolicy.disabled()) as client:
            return list(await client.list_runs())

    assert asyncio.run(runs()) == []


def test_a_certificate_no_trusted_ca_vouches_for_is_refused(
    https_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusting: None
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-bundle.pem"))
    with pytest.raises(TransportError, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        get(https_url)


def test_the_platform_client_reports_an_unverifiable_server_without_sending_anything(
    https_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusting: None
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-bundle.pem"))

    async def runs() -> list[object]:
        async with OsmosisClient(https_url, token="t", workspace="w", retry=RetryPolicy.disabled()) as client:
            return list(await client.list_runs())

    with pytest.raises(PlatformError, match=r"(?i)certificate"):
        asyncio.run(runs())


def test_importing_the_transport_leaves_the_environment_as_it_was_and_aiohttps_own_contexts_empty() -> None:
    """In a fresh interpreter (here aiohttp may be imported already): the CA variables the import
    pointed elsewhere are given back, and aiohttp's default contexts trust nobody (fail closed)."""
    script = (
        "import json, os; before = {k: os.environ.get(k) for k in ('SSL_CERT_FILE', 'SSL_CERT_DIR')};"
        "import reconciler.osmosis.aiohttp_transport; import aiohttp.connector as c;"
        "after = {k: os.environ.get(k) for k in before};"
        "print(json.dumps([before == after, c._SSL_CONTEXT_VERIFIED.cert_store_stats()['x509_ca']]))"
    )
    for env in ({"SSL_CERT_FILE": "/somewhere/ca.pem"}, {}):
        base = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR")}
        done = subprocess.run(
            [sys.executable, "-c", script], env=base | env, capture_output=True, text=True, check=True
        )
        assert json.loads(done.stdout) == [True, 0]


# --- behind an HTTPS_PROXY: the tunnel (CONNECT) carries the same verified TLS ---


class _ConnectProxy:
    """A forward proxy that only tunnels (CONNECT), as corporate proxies do for https; it records
    each request line, and never sees inside the tunnel."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self._server: asyncio.Server | None = None

    async def start(self) -> str:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        line = head.split(b"\r\n", 1)[0].decode()
        self.requests.append(line)
        method, target, _ = line.split(" ")
        if method != "CONNECT":
            writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        host, port = target.rsplit(":", 1)
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


def runs_through_proxy(https_url: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[object] | str, list[str]]:
    """The client's run listing with HTTPS_PROXY set (its result, or the error's message), and the
    request lines the proxy saw."""
    proxy = _ConnectProxy()
    for name in ("NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)

    async def go() -> list[object] | str:
        monkeypatch.setenv("HTTPS_PROXY", await proxy.start())
        try:
            async with OsmosisClient(https_url, token="t", workspace="w", retry=RetryPolicy.disabled()) as client:
                return list(await client.list_runs())
        except PlatformError as exc:
            return exc.message
        finally:
            await proxy.stop()

    result = asyncio.run(go())
    return result, proxy.requests


def test_through_an_https_proxy_the_platform_is_spoken_to_over_a_verified_tunnel(
    https_url: str, monkeypatch: pytest.MonkeyPatch, vouched: None
) -> None:
    result, seen = runs_through_proxy(https_url, monkeypatch)
    assert result == []
    assert seen == [f"CONNECT {https_url.removeprefix('https://')} HTTP/1.1"]


def test_through_an_https_proxy_a_certificate_no_trusted_ca_vouches_for_is_still_refused(
    https_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusting: None
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "no-such-bundle.pem"))
    result, seen = runs_through_proxy(https_url, monkeypatch)
    assert isinstance(result, str) and "certificate" in result.lower()
    assert len(seen) == 1 and seen[0].startswith("CONNECT ")
