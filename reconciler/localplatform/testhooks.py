"""Test hooks, off unless the platform is started with them (`platform serve --test-hooks`).

- Hostile manifests: `PUT /_test/runs/{run id}/manifest` with `{"files": [{"path", "size"}]}`
  makes that run's manifest list exactly those paths (`../x`, `/abs`, duplicates, anything),
  signs download URLs for them, and serves `size` bytes for each: what a broken or hostile
  platform could send, so clients can prove they refuse it.
- Bulk artifacts (`--bench-artifacts COUNT:SIZE`, or `create_app(bench_artifacts=...)`): every
  run also carries COUNT artifact files of SIZE bytes, for download benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

TEST_PREFIX = "/_test"


@dataclass
class TestHooks:
    enabled: bool = False
    manifests: dict[str, list[tuple[str, int]]] = field(default_factory=dict)

    def override(self, run_id: str) -> list[tuple[str, int]] | None:
        return self.manifests.get(run_id) if self.enabled else None


def hooks_of(request: Request) -> TestHooks:
    hooks: TestHooks = request.app.state.test_hooks
    return hooks


def override_content(path: str, size: int) -> bytes:
    """Deterministic bytes for an overridden manifest entry."""
    seed = (path.encode("utf-8", "replace") + b"\n") or b"\n"
    return (seed * (size // len(seed) + 1))[:size]


def bulk_artifacts(count: int, size: int) -> dict[str, bytes]:
    block = bytes(range(256)) * (size // 256 + 1)
    return {f"artifacts/bench-{i:05d}/blob.bin": (b"%08d" % i + block)[:size] for i in range(count)}


async def set_manifest(request: Request) -> Response:
    hooks = hooks_of(request)
    if not hooks.enabled:
        return JSONResponse({"message": "Not found", "code": "NOT_FOUND"}, status_code=404)
    body: Any = await request.json()
    files = body.get("files") if isinstance(body, dict) else None
    if not isinstance(files, list) or not all(
        isinstance(f, dict) and isinstance(f.get("path"), str) and isinstance(f.get("size"), int) for f in files
    ):
        return JSONResponse({"message": "files must be [{path, size}]", "code": "VALIDATION"}, status_code=400)
    hooks.manifests[request.path_params["run_id"]] = [(f["path"], f["size"]) for f in files]
    return JSONResponse({"run_id": request.path_params["run_id"], "files": len(files)})


def hook_file_url(base: str, run_id: str, index: int) -> str:
    # by index, not by path: a hostile path such as `../x` would not survive URL normalisation
    return f"{base}{TEST_PREFIX}/runs/{run_id}/files/{index}"


async def hook_file(request: Request) -> Response:
    entries = hooks_of(request).override(request.path_params["run_id"]) or []
    index = int(request.path_params["index"])
    if not 0 <= index < len(entries):
        return JSONResponse({"message": "Not found", "code": "NOT_FOUND"}, status_code=404)
    path, size = entries[index]
    return Response(override_content(path, size), media_type="application/octet-stream")


def routes() -> list[Route]:
    return [
        Route(f"{TEST_PREFIX}/runs/{{run_id}}/manifest", set_manifest, methods=["PUT"]),
        Route(f"{TEST_PREFIX}/runs/{{run_id}}/files/{{index:int}}", hook_file, methods=["GET"]),
    ]
