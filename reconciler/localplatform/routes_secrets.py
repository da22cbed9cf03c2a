"""`/api/cli/environment-secrets`: list (metadata only), upsert, delete. Values never leave."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..specs.rules import MAX_SECRET_NAME_LENGTH, SECRET_NAME
from .api import ApiError, Context, json_object, ok, page, paging, scoped
from .runview import iso
from .store import SecretRow

_SCOPES = {"all": ("workspace", "user"), "workspace": ("workspace",), "user": ("user",)}


def secret_item(row: SecretRow) -> dict[str, Any]:
    return {
        "id": row.id,
        "name": row.name,
        "scope": row.scope,
        "created_at": iso(row.created_at),
        "updated_at": iso(row.updated_at),
        "creator_name": row.creator_name,
        "updater_name": row.updater_name,
    }


def _url(ctx: Context) -> str:
    return f"{ctx.public_base}/secrets"


def _name(body: dict[str, Any]) -> str:
    name = body.get("name")
    if not isinstance(name, str) or not SECRET_NAME.match(name) or len(name) > MAX_SECRET_NAME_LENGTH:
        raise ApiError(
            400,
            "name must be 1 to 255 characters of A-Z, 0-9 and _, starting with a letter",
            "VALIDATION",
            field="name",
        )
    return name


def _scope(body: dict[str, Any]) -> str:
    scope = body.get("scope", "user")
    if scope not in ("workspace", "user"):
        raise ApiError(400, "scope must be workspace or user", "VALIDATION", field="scope")
    return str(scope)


async def list_secrets(request: Request) -> Response:
    with scoped(request, benchmarks=False) as ctx:
        limit, offset = paging(request)
        scope = request.query_params.get("scope") or "all"
        if scope not in _SCOPES:
            raise ApiError(400, "scope must be all, workspace or user", "VALIDATION", field="scope")
        rows = ctx.db.secrets(ctx.ws, _SCOPES[scope])
        body = page(
            "environment_secrets", [secret_item(r) for r in rows[offset : offset + limit]], len(rows), limit, offset
        )
        body["platform_url"] = _url(ctx)
        return ok(body)


async def set_secret(request: Request) -> Response:
    with scoped(request, benchmarks=False) as ctx:
        body = await json_object(request)
        name, scope = _name(body), _scope(body)
        value = body.get("value")
        if not isinstance(value, str) or not value:
            raise ApiError(400, "value must be a non-empty string", "VALIDATION", field="value")
        row, created = ctx.db.upsert_secret(ctx.ws, scope, name, value, ctx.now)
        return ok({**secret_item(row), "platform_url": _url(ctx)}, status=201 if created else 200)


async def delete_secret(request: Request) -> Response:
    with scoped(request, benchmarks=False) as ctx:
        body = await json_object(request)
        name, scope = _name(body), _scope(body)
        if not ctx.db.delete_secret(ctx.ws, scope, name):
            raise ApiError(404, f"Secret {name} not found in {scope} scope", "SECRET_NOT_FOUND")
        return ok({"deleted": True, "name": name, "scope": scope})
