"""A scriptable fake of the platform's output endpoints, behind our FakeTransport.

It serves one run: its detail, a manifest (the real files, or any hostile list of entries),
download URLs, and the files themselves with Range support. Faults are scripted per path as
a queue of behaviours consumed one request at a time:

    "500"            answer 500
    "403"            answer 403 (an expired URL)
    "truncate:N"     send only the first N bytes of what was asked for, then end cleanly
    "drop:N"         send N bytes, then the connection breaks
    "ignore-range"   answer 200 with the whole file even when a Range was asked
    "bad-range"      answer 206 with a Content-Range that does not start where asked
    "long"           send the file plus extra bytes
    "404"            answer 404
    "gzip"           send the file gzip-compressed with Content-Encoding: gzip
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Headers, Response
from reconciler.outputs.layout import category
from tests.fake_transport import Broken, FakeTransport, Sent, reply

BASE = "http://fake.test"
RUN_ID = "0b5d6c1e-run"
RUN_NAME = "tb-smoke-7"


async def _no_sleep(_: float) -> None:
    return None


FAST_RETRY = RetryPolicy(
    max_attempts=4, base_delay=0.0, max_delay=0.0, max_total_seconds=5.0, jitter=False, sleep=_no_sleep
)


@dataclass
class FakePlatform:
    files: dict[str, bytes]
    status: str = "finished"
    manifest: list[dict[str, Any]] | None = None  # entries as sent; default: the files
    faults: dict[str, list[str]] = field(default_factory=dict)
    omit: set[str] = field(default_factory=set)  # paths the download-urls answer leaves out
    url_batches: list[int] = field(default_factory=list)
    file_requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range)
    manifest_requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    delay: float = 0.0
    on_file_request: Callable[[str], None] | None = None

    def client(self, retry: RetryPolicy = FAST_RETRY) -> OsmosisClient:
        return OsmosisClient(
            BASE,
            token="test-token",
            workspace="w",
            transport=FakeTransport(lambda request: self.handle(request)),
            retry=retry,
            allow_insecure=True,
        )

    def entries(self, types: str | None = None) -> list[dict[str, Any]]:
        if self.manifest is not None:
            return self.manifest
        wanted = set((types or "summary,results,artifacts,logs").split(","))
        return [
            {"path": p, "size": len(b), "token": f"tok-{p}"} for p, b in self.files.items() if category(p) in wanted
        ]

    async def handle(self, request: Sent) -> Response | Broken:
        path = request.path
        if path.startswith("/files/"):
            return await self._file(request, unquote(path[len("/files/") :]))
        run_path = f"/api/cli/benchmark-runs/{RUN_ID}"
        if request.method == "GET" and path in (run_path, f"/api/cli/benchmark-runs/{RUN_NAME}"):
            run = {"id": RUN_ID, "name": RUN_NAME, "status": self.status}
            return reply(200, json={"benchmark_run": run, "agents": [], "progress": {}})
        if path == f"{run_path}/outputs/manifest":
            self.manifest_requests += 1
            entries = self.entries(request.params.get("types"))
            return reply(200, json={"files": entries, "totals": {"files": len(entries)}})
        if path == f"{run_path}/outputs/download-urls":
            items = json.loads(request.content)["items"]
            self.url_batches.append(len(items))
            urls = [
                {
                    "path": i["path"],
                    "token": i.get("token"),
                    "url": f"{BASE}/files/{quote(i['path'], safe='/')}?sig=s3cr3t",
                }
                for i in items
                if i["path"] not in self.omit
            ]
            return reply(200, json={"items": urls, "expires_in": 900})
        return reply(404, json={"message": "Not found", "code": "NOT_FOUND"})

    async def _file(self, request: Sent, path: str) -> Response | Broken:
        asked = request.headers.get("Range")
        self.file_requests.append((path, asked))
        assert "Authorization" not in request.headers, "presigned fetches carry no credentials"
        if self.on_file_request is not None:
            self.on_file_request(path)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                await asyncio.sleep(self.delay)
        finally:
            self.in_flight -= 1
        fault = self.faults[path].pop(0) if self.faults.get(path) else None
        if fault in ("500", "403", "404"):
            return reply(int(fault), text="no")
        data = self.files[path]
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", asked or "")
        if match and fault != "ignore-range":
            start = int(match.group(1))
        body = data[start:]
        headers = {"Content-Length": str(len(body))}
        status = 200
        if start:
            status = 206
            first = start + 1 if fault == "bad-range" else start
            headers["Content-Range"] = f"bytes {first}-{len(data) - 1}/{len(data)}"
        if fault and fault.startswith("truncate:"):
            body = body[: int(fault.split(":")[1])]
            headers["Content-Length"] = str(len(body))
        if fault and fault.startswith("drop:"):
            return Broken(status, Headers(headers.items()), body[: int(fault.split(":")[1])])
        if fault == "gzip":
            body = gzip.compress(body)
            headers.update({"Content-Length": str(len(body)), "Content-Encoding": "gzip"})
        if fault == "long":
            body += b"EXTRA"
            headers["Content-Length"] = str(len(body))
        return reply(status, headers=headers, content=body)


def sample_files() -> dict[str, bytes]:
    return {
        "summary.csv": b"agent_index,model\n0,m\n",
        "results.csv": b"result_id,outcome\n" + b"r,passed\n" * 500,
        "logs.txt": b"log line\n" * 100,
        "artifacts/r1/trajectory.json": bytes(range(256)) * 200,
        "artifacts/r1/verifier/stdout.txt": b"PASS\n",
    }
