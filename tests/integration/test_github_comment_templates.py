"""The plan comment a pull request's reviewers read is drawn by the base commit's templates, never
by the pull request's own: a template is code from the pull request's author, and could make the
comment say "No changes" over a paid submit (real git repositories, `plan --github-comment` as a
subprocess against a fake GitHub)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.github_fake import FakeGitHub
from tests.integration.test_github_review_base import PR, RECONCILER, REPO, git, pull_request_env

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PACKAGED = (ROOT / "reconciler/render/templates/plan.md.j2").read_text()
LIE = "### reconciler plan\n\n**No changes.** The platform matches the specs.\n"
HOUSE = "House style: every plan is read by two people.\n\n"
NOTE = "This pull request's `templates/` draw this plan differently"


def make_origin(tmp_path: Path, *, base_template: str | None, pr_template: str | None) -> Path:
    """main: the example specs (and `base_template` as templates/plan.md.j2); the pull request: a new run
    spec, and `pr_template` in its place."""
    origin = tmp_path / "origin"
    (origin / "specs/runs").mkdir(parents=True)
    for spec in ("specs/benchmarks/terminal-bench-2-1.toml", "specs/runs/tb-smoke.toml"):
        (origin / spec).parent.mkdir(parents=True, exist_ok=True)
        (origin / spec).write_text((ROOT / spec).read_text())
    (origin / "reconciler.toml").write_text('platform = "local"\nworkspace = "templates"\n')
    (origin / ".gitignore").write_text(".osmosis/\n.reconciler/\n")
    if base_template is not None:
        (origin / "templates").mkdir()
        (origin / "templates/plan.md.j2").write_text(base_template)
    git(tmp_path, "init", "-q", "-b", "main", str(origin))
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "specs")
    git(origin, "checkout", "-q", "-b", "change-model")  # the branch `pull_request_env` names
    smoke = (origin / "specs/runs/tb-smoke.toml").read_text()
    (origin / "specs/runs/tb-smoke-2.toml").write_text(smoke.replace('id = "tb-smoke"', 'id = "tb-smoke-2"'))
    if pr_template is not None:
        (origin / "templates").mkdir(exist_ok=True)
        (origin / "templates/plan.md.j2").write_text(pr_template)
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "a second smoke run")
    git(origin, "checkout", "-q", "main")
    return origin


def comment_of(tmp_path: Path, origin: Path, github: FakeGitHub) -> tuple[subprocess.CompletedProcess[str], str]:
    git(tmp_path, "clone", "-q", "--branch", "change-model", origin.as_uri(), "work")
    env = pull_request_env(tmp_path, origin, github)
    done = subprocess.run(
        [RECONCILER, "plan", "--github-comment"],
        cwd=tmp_path / "work", env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    comments = github.comments(REPO, PR)
    return done, str(comments[0]["body"]) if comments else ""


def test_a_pull_request_whose_template_says_no_changes_still_shows_its_submits(
    tmp_path: Path, github: FakeGitHub
) -> None:
    origin = make_origin(tmp_path, base_template=None, pr_template=LIE)
    done, body = comment_of(tmp_path, origin, github)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| + | submit | tb-smoke-2 |" in body.replace("`", "")
    assert "paid submit(s)" in body and NOTE in body and "packaged with reconciler (the base commit" in body


def test_the_base_branchs_own_template_draws_the_comment_without_a_note(tmp_path: Path, github: FakeGitHub) -> None:
    origin = make_origin(tmp_path, base_template=HOUSE + PACKAGED, pr_template=None)
    done, body = comment_of(tmp_path, origin, github)
    assert done.returncode == 0, done.stdout + done.stderr
    assert HOUSE.strip() in body and NOTE not in body


def test_a_pull_request_that_edits_the_base_template_is_shown_with_the_base_one(
    tmp_path: Path, github: FakeGitHub
) -> None:
    origin = make_origin(tmp_path, base_template=HOUSE + PACKAGED, pr_template=LIE)
    _, body = comment_of(tmp_path, origin, github)
    base = git(origin, "rev-parse", "main")[:12]
    assert HOUSE.strip() in body and f"the base commit {base}" in body and "tb-smoke-2" in body


def test_a_pull_request_template_that_fails_still_fails_the_plan(tmp_path: Path, github: FakeGitHub) -> None:
    origin = make_origin(tmp_path, base_template=None, pr_template="{{ plan.nope.nope }}\n")
    done, _ = comment_of(tmp_path, origin, github)
    assert done.returncode == 1
    assert "templates/plan.md.j2" in done.stdout + done.stderr


def test_a_base_template_that_is_a_link_is_read_as_absent(tmp_path: Path) -> None:
    from reconciler.vcs.review import files_at

    repo = tmp_path / "repo"
    (repo / "templates").mkdir(parents=True)
    (repo / "templates/plan.md.j2").symlink_to("/etc/passwd")
    (repo / "templates/leaderboard.md.j2").write_text("{{ rows }}\n")
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "templates")
    assert files_at(repo, git(repo, "rev-parse", "HEAD"), "templates", limit=1024) == {
        "leaderboard.md.j2": "{{ rows }}\n"
    }
