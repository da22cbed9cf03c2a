"""The review of spec changes against a base branch, on real temporary git repositories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reconciler.core.review import Review, SpecChange
from reconciler.vcs.commit import GitError
from reconciler.vcs.review import review_changes

COMPARE = """[experiment]
benchmark = "terminal-bench-2-1"

[[agents]]
harness = "terminus-2"

[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"

[[agents]]
harness = "terminus-2"

[agents.model]
type = "provider"
model = "{model}"
api_key_secret = "OPENAI_API_KEY"

[reconcile]
id = "tb-compare"
"""

SMOKE = """[experiment]
benchmark = "terminal-bench-2-1"

[tasks]
task_names = ["terminal-bench/git-multibranch"]

[[agents]]
harness = "codex"

[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
"""


def git(root: Path, *args: str) -> str:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    done = subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def commit_all(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """main: tb-compare (two agents), old-smoke, and stay; then the branch `feature` checked out."""
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, "specs/runs/tb-compare.toml", COMPARE.format(model="openai/gpt-5.2"))
    write(tmp_path, "specs/runs/old-smoke.toml", SMOKE)
    write(tmp_path, "specs/runs/stay.toml", SMOKE.replace("codex", "terminus-2"))
    commit_all(tmp_path, "specs on main")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    return tmp_path


def by_path(review: Review) -> dict[str, SpecChange]:
    return {c.path: c for c in review.changes}


def test_edit_delete_and_add_on_a_branch_are_each_reviewed(repo: Path) -> None:
    write(repo, "specs/runs/tb-compare.toml", COMPARE.format(model="anthropic/claude-sonnet-4"))
    (repo / "specs/runs/old-smoke.toml").unlink()
    write(repo, "specs/runs/hle.toml", '[experiment]\nbenchmark = "hle"\n\n[tasks]\ntask_set = "parity"\n')
    commit_all(repo, "edit, delete, add")

    changes = by_path(review_changes(repo, "main"))

    assert sorted((c.status, c.spec_id) for c in changes.values()) == [
        ("added", "runs/hle"),
        ("deleted", "runs/old-smoke"),
        ("edited", "tb-compare"),
    ]
    assert [f.line() for f in changes["specs/runs/tb-compare.toml"].fields] == [
        "agents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4"
    ]
    assert [f.line() for f in changes["specs/runs/hle.toml"].fields] == [
        "experiment.benchmark: (unset) -> hle",
        "tasks.task_set: (unset) -> parity",
    ]
    assert changes["specs/runs/old-smoke.toml"].fields == ()


def test_unchanged_specs_are_not_listed(repo: Path) -> None:
    write(repo, "specs/runs/tb-compare.toml", COMPARE.format(model="x/y"))
    assert "specs/runs/stay.toml" not in by_path(review_changes(repo, "main"))


def test_the_review_is_against_the_merge_base_not_the_base_tip(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    write(repo, "specs/runs/stay.toml", SMOKE.replace("codex", "claude-code"))
    commit_all(repo, "main moves on")
    git(repo, "checkout", "-q", "feature")
    review = review_changes(repo, "main")
    assert review.changes == ()
    assert review.merge_base == git(repo, "merge-base", "HEAD", "main")


def test_uncommitted_and_untracked_specs_count(repo: Path) -> None:
    write(repo, "specs/runs/tb-compare.toml", COMPARE.format(model="a/b"))
    write(repo, "specs/runs/draft.toml", SMOKE.replace("codex", "openhands"))
    assert {c.status for c in review_changes(repo, "main").changes} == {"edited", "added"}


def test_a_move_keeping_its_explicit_id_is_a_rename(repo: Path) -> None:
    (repo / "specs/runs/compare").mkdir()
    git(repo, "mv", "specs/runs/tb-compare.toml", "specs/runs/compare/tb.toml")
    [change] = review_changes(repo, "main").changes
    assert (change.status, change.old_path, change.spec_id, change.old_spec_id) == (
        "renamed",
        "specs/runs/tb-compare.toml",
        "tb-compare",
        "tb-compare",
    )


def test_a_move_without_an_explicit_id_changes_the_spec_id(repo: Path) -> None:
    git(repo, "mv", "specs/runs/old-smoke.toml", "specs/runs/smoke.toml")
    [change] = review_changes(repo, "main").changes
    assert (change.status, change.old_spec_id, change.spec_id) == ("renamed", "runs/old-smoke", "runs/smoke")


def test_a_renamed_and_edited_spec_shows_its_field_diff(repo: Path) -> None:
    (repo / "specs/runs/old-smoke.toml").unlink()
    write(repo, "specs/runs/smoke.toml", SMOKE.replace("openai/gpt-5.2", "openai/gpt-5.2-mini"))
    [change] = review_changes(repo, "main").changes
    assert change.status == "renamed"
    assert [f.line() for f in change.fields] == ["agents[0].model.model: openai/gpt-5.2 -> openai/gpt-5.2-mini"]


def test_a_spec_that_no_longer_parses_is_reported_without_fields(repo: Path) -> None:
    write(repo, "specs/runs/stay.toml", "[experiment\n")
    [change] = review_changes(repo, "main").changes
    assert change.status == "edited"
    assert change.error is not None and change.error.startswith("invalid TOML")


def test_a_spec_nested_too_deeply_on_either_side_is_reported_as_the_loader_reports_it(repo: Path) -> None:
    """Arrays nested 50,000 deep make a recursive TOML parser overflow: the review reads both
    revisions of a spec with the loader's own rule, never into an internal error."""
    write(repo, "specs/runs/deep.toml", "x = " + "[" * 50_000 + "]" * 50_000 + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a hostile spec on the base side")
    write(repo, "specs/runs/deep.toml", SMOKE)
    changes = {c.spec_id: c for c in review_changes(repo, "HEAD").changes}
    assert changes["runs/deep"].error is not None and "nests deeper than" in changes["runs/deep"].error


def test_an_unknown_base_ref_says_how_to_fetch_it(repo: Path) -> None:
    with pytest.raises(GitError, match="unknown base ref 'origin/nope'") as info:
        review_changes(repo, "origin/nope")
    assert "fetch-depth: 0" in (info.value.hint or "")


def test_a_project_in_a_subdirectory_reviews_its_own_specs(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, "evals/specs/runs/a.toml", SMOKE)
    write(tmp_path, "specs/runs/elsewhere.toml", SMOKE)
    commit_all(tmp_path, "two projects")
    write(tmp_path, "evals/specs/runs/a.toml", SMOKE.replace("codex", "openhands"))
    write(tmp_path, "specs/runs/elsewhere.toml", SMOKE.replace("codex", "openhands"))
    [change] = review_changes(tmp_path / "evals", "main").changes
    assert (change.path, [f.line() for f in change.fields]) == (
        "specs/runs/a.toml",
        ["agents[0].harness: codex -> openhands"],
    )
