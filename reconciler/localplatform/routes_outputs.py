"""Run outputs: the manifest, presigned download URLs, and the file route that serves them.

Manifests and URLs pin a snapshot (the simulated moment they describe, in the file `token`
and the URL's `at`), so the bytes served always match the size the manifest announced.
The file route needs no auth header; it honours single `Range` requests (206/416) and sends
raw bytes (never compressed).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from .api import ApiError, Context, json_object, ok, platform_of, scoped
from .outputs import OUTPUT_TYPES, OutputCache, path_type
from .routes_runs import find_run
from .runview import RunView
from .signing import URL_LIFETIME_SECONDS, sign_url, verify
from .testhooks import hook_file_url, hooks_of

MAX_URL_BATCH = 500
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_CONTENT_TYPES = {".csv": "text/csv; charset=utf-8", ".txt": "text/plain; charset=utf-8", ".json": "application/json"}


def _cache(request: Request) -> OutputCache:
    cache: OutputCache = request.app.state.outputs
    return cache


def snapshot(view: RunView) -> str:
    """The simulated moment a manifest describes, as an exact float repr."""
    if view.stopped_at is not None:
        return repr(view.stopped_at)
    return repr(min(view.now, view.row.end_at))


def _ready_view(ctx: Context, ref: str) -> RunView:
    view = find_run(ctx, ref)
    if not view.has_outputs:
        raise ApiError(409, "Outputs are not yet available for pending or queued benchmark runs.", "OUTPUTS_NOT_READY")
    return view


def _types(request: Request) -> list[str]:
    raw = request.query_params.get("types") or "summary,results"
    wanted: list[str] = []
    for part in raw.split(","):
        value = part.strip().lower()
        if value and value not in wanted:
            wanted.append(value)
    if "all" in wanted:
        return list(OUTPUT_TYPES)
    unknown = [t for t in wanted if t not in OUTPUT_TYPES]
    if unknown or not wanted:
        raise ApiError(
            400,
            f"Unknown output type(s): {', '.join(unknown) or raw!r}; choose from {', '.join(OUTPUT_TYPES)}, all",
            "VALIDATION",
            field="types",
        )
    return wanted


def _token(at: str, content: bytes) -> str:
    return f"{at}:{hashlib.sha256(content).hexdigest()[:16]}"


async def manifest(request: Request) -> Response:
    with scoped(request) as ctx:
        view = _ready_view(ctx, request.path_params["ref"])
        wanted = _types(request)
        at = snapshot(view)
        hostile = hooks_of(request).override(view.row.id)
        if hostile is not None:  # test hook: list exactly what the test asked for
            listed = [{"path": p, "size": n, "token": f"{at}:hook"} for p, n in hostile]
            return ok({"files": listed, "totals": {"files": len(listed)}, "status": view.status})
        files = _cache(request).files(RunView(view.row, ctx.db, ctx.now, ctx.public_base, at=float(at)))
        chosen = [(path, content) for path, content in files.items() if path_type(path) in wanted]
        by_type = {t: {"files": 0, "bytes": 0} for t in wanted}
        for path, content in chosen:
            entry = by_type[str(path_type(path))]
            entry["files"] += 1
            entry["bytes"] += len(content)
        totals = {"files": len(chosen), "bytes": sum(len(c) for _, c in chosen), "by_type": by_type}
        listed = [{"path": path, "size": len(content), "token": _token(at, content)} for path, content in chosen]
        return ok({"files": listed, "totals": totals, "status": view.status})


async def download_urls(request: Request) -> Response:
    with scoped(request) as ctx:
        body = await json_object(request)
        items = body.get("items")
        if not isinstance(items, list) or not 1 <= len(items) <= MAX_URL_BATCH:
            raise ApiError(400, f"items must be a list of 1 to {MAX_URL_BATCH} files", "VALIDATION", field="items")
        view = _ready_view(ctx, request.path_params["ref"])
        current = snapshot(view)
        out: list[dict[str, Any]] = []
        snapshots: dict[float, dict[str, bytes]] = {}
        key = platform_of(request).store.signing_key
        hostile = {p: i for i, (p, _) in enumerate(hooks_of(request).override(view.row.id) or [])}
        for i, item in enumerate(items):
            path = item.get("path") if isinstance(item, dict) else None
            token = item.get("token") if isinstance(item, dict) else None
            if isinstance(path, str) and path in hostile:
                out.append({"path": path, "url": hook_file_url(ctx.base, view.row.id, hostile[path]), "token": token})
                continue
            if not isinstance(path, str) or path_type(path) is None:
                raise ApiError(400, f"items[{i}].path is not a run output path", "VALIDATION", field=f"items[{i}].path")
            at = token.split(":", 1)[0] if isinstance(token, str) and ":" in token else current
            try:
                moment = float(at)
            except ValueError:
                raise ApiError(
                    400, f"items[{i}].token is not one this server issued", "VALIDATION", field=f"items[{i}].token"
                ) from None
            if not 0.0 <= moment <= float(current):  # never issued: a snapshot from the future (or nan)
                raise ApiError(
                    400, f"items[{i}].token is not one this server issued", "VALIDATION", field=f"items[{i}].token"
                )
            if moment not in snapshots:
                snapshots[moment] = _cache(request).files(
                    RunView(view.row, ctx.db, ctx.now, ctx.public_base, at=moment)
                )
            if path not in snapshots[moment]:
                raise ApiError(404, f"Run output not found: {path}", "OUTPUT_NOT_FOUND", field=f"items[{i}].path")
            entry = {"path": path, "url": sign_url(key, ctx.base, view.row.id, path, at, ctx.now)}
            if isinstance(token, str):
                entry["token"] = token
            out.append(entry)
        return ok({"items": out, "expires_in": URL_LIFETIME_SECONDS})


def _byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) of a single satisfiable range; None to send the whole file; 416 otherwise."""
    if not header:
        return None
    match = _RANGE.match(header.strip())
    if match is None:
        return None  # multiple or malformed ranges: ignore the header, send everything
    first, last = match.groups()
    if first == "" and last == "":
        return None
    if first == "":
        length = int(last)
        if length == 0 or size == 0:
            raise _unsatisfiable(size)
        return max(0, size - length), size - 1
    start = int(first)
    end = size - 1 if last == "" else min(int(last), size - 1)
    if start >= size or (last != "" and int(last) < start):
        raise _unsatisfiable(size)
    return start, end


def _unsatisfiable(size: int) -> ApiError:
    return ApiError(
        416, "Requested range not satisfiable", "RANGE_NOT_SATISFIABLE", headers={"Content-Range": f"bytes */{size}"}
    )


async def output_file(request: Request) -> Response:
    """GET a presigned URL: no auth header; 403 when expired or tampered with."""
    platform = platform_of(request)
    run_id, path = request.path_params["run_id"], request.path_params["path"]
    query = request.query_params
    problem = verify(
        platform.store.signing_key,
        run_id,
        path,
        query.get("at", ""),
        query.get("expires", ""),
        query.get("sig", ""),
        platform.clock(),
    )
    if problem == "expired":
        raise ApiError(403, "This download URL has expired; request a new one", "URL_EXPIRED")
    if problem is not None:
        raise ApiError(403, "This download URL is not valid", "URL_SIGNATURE_INVALID")
    with platform.store.session() as db:
        row = db.run(None, run_id)
        if row is None:
            raise ApiError(404, "Run output not found", "OUTPUT_NOT_FOUND")
        view = RunView(row, db, platform.clock(), str(request.base_url).rstrip("/"), at=float(query["at"]))
        content = _cache(request).files(view).get(path)
    if content is None:
        raise ApiError(404, "Run output not found", "OUTPUT_NOT_FOUND")
    suffix = path[path.rfind(".") :] if "." in path.rsplit("/", 1)[-1] else ""
    headers = {"Accept-Ranges": "bytes", "Cache-Control": "no-store"}
    media_type = _CONTENT_TYPES.get(suffix, "application/octet-stream")
    span = _byte_range(request.headers.get("range"), len(content))
    if span is None:
        return Response(content, media_type=media_type, headers=headers)
    first, last = span
    headers["Content-Range"] = f"bytes {first}-{last}/{len(content)}"
    return Response(content[first : last + 1], status_code=206, media_type=media_type, headers=headers)
