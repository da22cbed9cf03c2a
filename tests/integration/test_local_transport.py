"""`platform = "local"`: the platform app answers in this process, through the ASGI transport."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request as StarletteRequest
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from reconciler.osmosis.asgi_transport import AsgiTransport
from reconciler.osmosis.transport import Request

REPO = Path(__file__).resolve().parents[2]


def test_a_local_client_never_imports_aiohttp(tmp_path: Path) -> None:
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from reconciler.wiring import connect\n"
        "async def main():\n"
        f"    async with connect('local', root=Path({str(tmp_path)!r}), token=None, workspace=None, git_identity=None) as c:\n"
        "        print(len(await c.list_runs()), len(await c.list_benchmarks()) > 0)\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('aiohttp', 'httpx')))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["0 True", "[]"]


def _app() -> Starlette:
    async def echo(request: StarletteRequest) -> JSONResponse:
        body = await request.body()
        return JSONResponse(
            {"path": request.url.path, "query": dict(request.query_params), "body": body.decode()},
            headers={"X-Seen-Auth": request.headers.get("authorization", "")},
        )

    async def big(request: StarletteRequest) -> StreamingResponse:
        async def pieces() -> AsyncIterator[bytes]:
            for n in range(64):
                yield bytes([n]) * 65536

        return StreamingResponse(pieces(), media_type="application/octet-stream")

    async def boom(request: StarletteRequest) -> JSONResponse:
        raise RuntimeError("broken handler")

    return Starlette(
        routes=[Route("/echo/{rest:path}", echo, methods=["GET", "POST"]), Route("/big", big), Route("/boom", boom)]
    )


def test_requests_reach_the_app_with_path_query_headers_and_body() -> None:
    async def go() -> tuple[int, str, bytes]:
        transport = AsgiTransport(_app())
        answer = await transport.send(
            Request("POST", "http://local.osmosis/echo/a%2Fb?x=1&y=two", {"Authorization": "Bearer t"}, b"hello")
        )
        return answer.status, answer.headers.get("x-seen-auth") or "", answer.body

    status, auth, body = asyncio.run(go())
    assert status == 200 and auth == "Bearer t"
    assert body == b'{"path":"/echo/a/b","query":{"x":"1","y":"two"},"body":"hello"}'


def test_a_streamed_body_arrives_in_pieces_and_whole() -> None:
    async def go() -> tuple[int, int]:
        pieces = total = 0
        async with AsgiTransport(_app()).stream(Request("GET", "http://local.osmosis/big")) as answer:
            async for chunk in answer.chunks():
                pieces, total = pieces + 1, total + len(chunk)
        return pieces, total

    pieces, total = asyncio.run(go())
    assert total == 64 * 65536 and pieces == 64


def test_an_exception_in_the_app_is_a_500_answer() -> None:
    async def go() -> int:
        return (await AsgiTransport(_app()).send(Request("GET", "http://local.osmosis/boom"))).status

    assert asyncio.run(go()) == 500
