"""connect(): the in-process local platform, or a remote URL that needs a token."""

from __future__ import annotations

import asyncio
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from reconciler.errors import ConfigError
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy
from reconciler.wiring import connect


@pytest.fixture
def local_app(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """A stand-in for reconciler.localplatform.app: an app that echoes the headers it got."""
    calls: list[dict[str, Any]] = []

    async def runs(request: Request) -> JSONResponse:
        calls[-1]["headers"] = dict(request.headers)
        return JSONResponse({"benchmark_runs": [{"id": "r1"}], "next_offset": None})

    def create_app(db_path: Path, **options: Any) -> Starlette:
        calls.append({"db_path": db_path, "options": options})
        return Starlette(routes=[Route("/api/cli/benchmark-runs", runs)])

    module = types.ModuleType("reconciler.localplatform.app")
    module.create_app = create_app  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "reconciler.localplatform.app", module)
    return calls


def list_runs(client: OsmosisClient) -> list[Any]:
    async def main() -> list[Any]:
        async with client:
            return await client.list_runs()

    return asyncio.run(main())


def test_local_runs_the_platform_in_process_over_the_project_database(
    local_app: list[dict[str, Any]], tmp_path: Path
) -> None:
    client = connect("local", root=tmp_path, token=None, workspace=None, git_identity=None)
    assert [run.id for run in list_runs(client)] == ["r1"]
    assert local_app[0]["db_path"] == tmp_path / ".osmosis" / "local-platform.sqlite3"
    assert (tmp_path / ".osmosis").is_dir()


def test_local_without_a_scope_uses_the_local_workspace(local_app: list[dict[str, Any]], tmp_path: Path) -> None:
    list_runs(connect("local", root=tmp_path, token=None, workspace=None, git_identity=None))
    assert local_app[0]["headers"]["x-osmosis-workspace"] == "local"


def test_local_keeps_a_known_git_identity(local_app: list[dict[str, Any]], tmp_path: Path) -> None:
    list_runs(connect("local", root=tmp_path, token=None, workspace=None, git_identity="Acme/Evals"))
    assert local_app[0]["headers"]["x-osmosis-git"] == "acme/evals"
    assert "x-osmosis-workspace" not in local_app[0]["headers"]


def test_local_never_sends_a_real_token(local_app: list[dict[str, Any]], tmp_path: Path) -> None:
    list_runs(connect("local", root=tmp_path, token="osm_live_real", workspace="team", git_identity=None))
    assert "authorization" not in local_app[0]["headers"]


def test_a_remote_platform_without_a_token_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        connect("https://platform.osmosis.ai", root=tmp_path, token=None, workspace="team", git_identity=None)
    assert "export OSMOSIS_TOKEN=" in (caught.value.hint or "")


def test_a_remote_platform_gets_a_client_for_its_normalised_url(tmp_path: Path) -> None:
    client = connect(
        "HTTPS://Platform.Osmosis.AI/",
        root=tmp_path,
        token="osm_live_x",
        workspace=None,
        git_identity="acme/evals",
        retry=RetryPolicy.disabled(),
    )
    assert client.base_url == "https://platform.osmosis.ai"
    assert client.scope == ("X-Osmosis-Git", "acme/evals")
    asyncio.run(client.aclose())


def test_the_client_alone_cannot_serve_local_without_the_composition_root(tmp_path: Path) -> None:
    from reconciler.osmosis.connect import connect as connect_client

    with pytest.raises(ConfigError, match='platform = "local" is not available here'):
        connect_client("local", root=tmp_path, token=None, workspace=None, git_identity=None)
