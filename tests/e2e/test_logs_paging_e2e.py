"""`reconciler logs` over more than one page (the platform's cap is 200 entries a page), against
`reconciler platform serve` with a finished run of 2 agents × 90 tasks × 2 attempts (over 360 entries)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.served_platform import serve_platform
from tests.e2e.workspace_repo import WorkspaceRepo

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkspaceRepo]:
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=3000.0) as platform:
        repo = WorkspaceRepo(tmp_path_factory.mktemp("repo") / "repo", platform)
        compare = (repo.root / "specs/runs/tb-compare.toml").read_text()
        twice = compare.replace("attempts_per_task = 1", "attempts_per_task = 2").replace('"tb-compare"', '"tb-twice"')
        # the local platform fails a seeded few runs; this one must finish so its log ends with "Run finished"
        twice = twice.replace("[reconcile]", '[env]\nLOCALPLATFORM_FORCE_STATUS = "finished"\n\n[reconcile]', 1)
        (repo.root / "specs/runs/tb-twice.toml").write_text(twice)
        repo.cli("apply", "--auto-approve", "--target", "tb-twice", check=True)
        repo.cli("wait", "--target", "tb-twice", "--interval", "0.1", check=True)
        yield repo


def entries(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["timestamp"], e["message"]) for e in doc["logs"]]


def test_more_entries_than_one_page_come_back_oldest_first_without_gaps(repo: WorkspaceRepo) -> None:
    many = repo.json("logs", "tb-twice", "--limit", "250")
    assert len(many["logs"]) == 250 and many["next_cursor"]
    assert entries(many) == sorted(entries(many), key=lambda e: e[0])
    newest = repo.json("logs", "tb-twice", "--limit", "40")
    assert entries(newest) == entries(many)[-40:]
    assert newest["logs"][-1]["message"] == "Run finished"


def test_the_printed_cursor_continues_exactly_where_the_page_ended(repo: WorkspaceRepo) -> None:
    everything = entries(repo.json("logs", "tb-twice", "--limit", "100000"))
    page = repo.json("logs", "tb-twice", "--limit", "150")
    before = repo.json("logs", "tb-twice", "--limit", "100000", "--cursor", page["next_cursor"])
    assert entries(before) + entries(page) == everything and before["next_cursor"] is None


def test_following_a_finished_run_prints_its_last_entries_and_ends(repo: WorkspaceRepo) -> None:
    done = repo.cli("logs", "tb-twice", "--follow", "--limit", "3", check=True)
    last = repo.json("logs", "tb-twice", "--limit", "3")["logs"]
    assert [line.split(" ", 2)[2].split(": ", 1)[1] for line in done.stdout.splitlines()] == [
        e["message"] for e in last
    ]
    assert "is finished" in done.stderr


def test_a_limit_below_one_is_a_usage_error(repo: WorkspaceRepo) -> None:
    done = repo.cli("logs", "tb-twice", "--limit", "0")
    assert done.returncode == 64 and "--limit" in done.stderr
