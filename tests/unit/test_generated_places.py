"""What a commit of reconciler's may touch (board_files.generated_places): a hand-edited state
file cannot widen it to the project's own files."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

from reconciler.engine.board_files import generated_places
from reconciler.engine.session import RepoSession
from reconciler.specs.models import ProjectSettings


def session(generated: list[str]) -> RepoSession:
    project = SimpleNamespace(root=Path("/repo"), settings=ProjectSettings())
    fake = SimpleNamespace(
        project=project, state=SimpleNamespace(generated=generated), desired=SimpleNamespace(benchmarks=())
    )
    return cast(RepoSession, fake)


def test_a_board_the_state_file_records_counts_as_reconcilers() -> None:
    assert "leaderboards/old.md" in generated_places(session(["leaderboards/old.md"]))


def test_a_recorded_path_in_the_projects_own_files_never_counts() -> None:
    edited = ["specs/runs/evil.toml", "reconciler.toml", "templates/plan.md.j2", "../outside.md", "/etc/passwd"]
    assert generated_places(session(edited)) == {".reconciler/state.json"}
