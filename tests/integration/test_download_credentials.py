"""Presigned GETs never carry credentials (token, scope, netrc, cookies).

A real HTTP server records every request's headers.

The server plays the platform (run, manifest, download URLs: these need the token) and the
bucket (the files, one of them behind a redirect). The client is the real one, over aiohttp.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiohttp import web

from reconciler.engine.downloads import download_run
from reconciler.osmosis.client import OsmosisClient
from reconciler.outputs.layout import run_dir_name

TOKEN = "osm_live_secret_token"
RUN = {"id": "run-1", "name": "bright-otter", "status": "finished"}
FILES = {"summary.csv": b"agent_index,model\n0,m\n", "results.csv": b"result_id\nr1\n", "logs.txt": b"line\n" * 50}


class Recorder:
    def __init__(self) -> None:
        self.api: list[dict[str, str]] = []
        self.files: list[dict[str, str]] = []
        self.base = ""

    def app(self) -> web.Application:
        app = web.Application()
        runs = "/api/cli/benchmark-runs/{ref}"
        app.router.add_get(runs, self.run)
        app.router.add_get(runs + "/outputs/manifest", self.manifest)
        app.router.add_post(runs + "/outputs/download-urls", self.urls)
        app.router.add_get("/bucket/{path:.+}", self.file)
        app.router.add_get("/moved/{path:.+}", self.moved)
        return app

    def _api(self, request: web.Request) -> None:
        self.api.append(dict(request.headers))

    async def run(self, request: web.Request) -> web.Response:
        self._api(request)
        answer = web.json_response({"benchmark_run": RUN, "agents": [], "progress": {}})
        # a platform (or its load balancer) may set a cookie; a presigned GET must not carry it
        answer.set_cookie("session", "cookie-secret", path="/")
        return answer

    async def manifest(self, request: web.Request) -> web.Response:
        self._api(request)
        files = [{"path": p, "size": len(b), "token": f"t-{p}"} for p, b in FILES.items()]
        return web.json_response({"files": files, "totals": {"files": len(files)}})

    async def urls(self, request: web.Request) -> web.Response:
        self._api(request)
        items = (await request.json())["items"]
        # logs.txt goes through a redirect: the second hop must be as bare as the first
        prefix = {"logs.txt": "moved"}
        urls = [{**i, "url": f"{self.base}/{prefix.get(i['path'], 'bucket')}/{i['path']}?sig=abc"} for i in items]
        return web.json_response({"items": urls, "expires_in": 900})

    async def moved(self, request: web.Request) -> web.StreamResponse:
        self.files.append(dict(request.headers))
        raise web.HTTPFound(f"/bucket/{request.match_info['path']}?sig=def")

    async def file(self, request: web.Request) -> web.Response:
        self.files.append(dict(request.headers))
        return web.Response(body=FILES[request.match_info["path"]])


def test_presigned_gets_carry_no_authorization_no_scope_header_and_no_cookie(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a ~/.netrc entry for the host must not turn into Basic credentials on a presigned GET
    netrc = tmp_path / "netrc"
    netrc.write_text("machine localhost login someone password hunter2\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    recorder = Recorder()

    async def go() -> str:
        runner = web.AppRunner(recorder.app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        # a host name, not an address: cookie jars keep no cookie set by a bare IP address
        recorder.base = f"http://localhost:{port}"
        try:
            async with OsmosisClient(recorder.base, token=TOKEN, workspace="team") as client:
                report = await download_run(
                    client, run="bright-otter", types=("summary", "results", "logs"), output_root=tmp_path / "out"
                )
        finally:
            await runner.cleanup()
        return report.status

    assert asyncio.run(go()) == "success"
    run_dir = tmp_path / "out" / run_dir_name(RUN["name"], RUN["id"])
    assert {p: (run_dir / p).read_bytes() for p in FILES} == FILES
    assert len(recorder.files) == 4  # three files, one of them through a redirect
    for headers in recorder.files:
        names = {name.lower() for name in headers}
        assert "authorization" not in names and "x-osmosis-workspace" not in names and "cookie" not in names
        assert TOKEN not in " ".join(headers.values())
    # the same client did send its token to the API: the check above can fail
    assert recorder.api and all(h.get("Authorization") == f"Bearer {TOKEN}" for h in recorder.api)
