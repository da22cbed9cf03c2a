"""Whose runs these are: one rule, from reconciler.toml, the repository identity, CI and the workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.errors import ConfigError
from reconciler.settings import Project, resolve_owner
from reconciler.specs.models import ProjectSettings

CI_VARS = ("CI", "GITHUB_ACTIONS", "GITHUB_REPOSITORY")


def project(owner: str | None = None) -> Project:
    return Project(Path("/repo"), ProjectSettings(owner=owner), None)


@pytest.fixture(autouse=True)
def no_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in CI_VARS:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("owner", "origin", "workspace", "expected"),
    [
        ("team/evals", "acme/one", "shared", "team/evals"),
        (None, "acme/one", "shared", "acme/one"),
        (None, "acme/one", None, "acme/one"),
        (None, None, "shared", "shared"),
        (None, None, None, "local"),
    ],
    ids=["setting-wins", "origin-beats-workspace", "origin", "no-origin-workspace", "nothing-local"],
)
def test_the_owner_follows_one_order_of_precedence(
    owner: str | None, origin: str | None, workspace: str | None, expected: str
) -> None:
    assert resolve_owner(project(owner), origin=origin, workspace=workspace, platform="local").name == expected


def test_under_ci_without_a_github_origin_the_owner_is_an_error_not_the_workspace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ConfigError) as caught:
        resolve_owner(project(), origin=None, workspace="shared", platform="https://osmosis.test")
    assert "no GitHub origin" in caught.value.message and "owner" in (caught.value.hint or "")


def test_under_github_actions_the_workflow_repository_is_the_owner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_REPOSITORY", "Acme/Evals")
    assert (
        resolve_owner(project(), origin=None, workspace="shared", platform="https://osmosis.test").name == "acme/evals"
    )


@pytest.mark.parametrize(
    ("owner", "origin", "platform", "shared"),
    [
        (None, None, "https://osmosis.test", True),
        (None, None, "local", False),
        ("shared", None, "https://osmosis.test", False),
        (None, "acme/one", "https://osmosis.test", False),
    ],
    ids=["workspace-on-a-platform", "workspace-on-its-own-local-database", "named-in-settings", "origin"],
)
def test_only_the_workspace_name_as_owner_on_a_reachable_platform_is_shared(
    owner: str | None, origin: str | None, platform: str, shared: bool
) -> None:
    """Every repository of the workspace with no GitHub origin and no `owner` writes the workspace
    name; `owner = "<workspace>"` in reconciler.toml says this repository is the only one."""
    assert resolve_owner(project(owner), origin=origin, workspace="shared", platform=platform).shared is shared
