"""Test-wide settings: nothing a test runs may read or write the user's own per-machine cache, and
every test sees the environment of a developer's shell, whether the suite itself runs in CI or not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reconciler.engine.machine_cache import CACHE_DIR_ENV
from tests.github_fake import FakeGitHub


@pytest.fixture(autouse=True, scope="session")
def _machine_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    # the CLI subprocesses inherit os.environ, so they use this directory too
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_DIR_ENV, str(tmp_path_factory.mktemp("machine-cache")))
        # Under CI reconciler refuses to guess a platform or an owner; the tests that are about CI
        # say so in their own environment, and every other test behaves as on a laptop.
        for name in (
            "CI",
            "GITHUB_ACTIONS",
            "GITHUB_REPOSITORY",
            "GITHUB_SHA",
            "GITHUB_EVENT_NAME",
            "GITHUB_EVENT_PATH",
        ):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    """A fake GitHub REST API served on 127.0.0.1, for the tests of comments, statuses and workflows."""
    with FakeGitHub().serve() as fake:
        yield fake
