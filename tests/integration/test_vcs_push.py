"""Pushing reconciler's commits to a real bare origin: only its own, again after a failure on the
way, never again after a refusal, and redone on top of the other job's commits after a race."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reconciler.errors import ReconcilerError
from reconciler.vcs.commit import (
    CommitResult,
    GitError,
    OwnCommits,
    commit_paths,
    committed_text,
    push_with_retry,
)
from tests.git_cli import git

STATE = ".reconciler/state.json"
OWN = OwnCommits("reconciler", "reconciler@users.noreply.github.com", frozenset({STATE}))


@pytest.fixture
def clone(tmp_path: Path) -> tuple[Path, Path]:
    """(a bare origin, a clone of it) whose `main` both have one commit."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    ours = clone_with_commit(remote, tmp_path / "ours", "README.md", "readme")
    git(ours, "push", "-q", "origin", "main")
    return remote, ours


def clone_with_commit(remote: Path, dest: Path, name: str, message: str) -> Path:
    """A clone of `remote` at `dest` with one commit more, adding the file `name`."""
    subprocess.run(["git", "clone", "-q", str(remote), str(dest)], check=True, capture_output=True)
    (dest / name).write_text(f"{message}\n")
    git(dest, "add", name)
    git(dest, "commit", "-qm", message)
    return dest


def own_commit(root: Path, lines: list[str]) -> str:
    """A commit of the state file as reconciler makes it; its sha."""
    (root / STATE).parent.mkdir(exist_ok=True)
    (root / STATE).write_text("".join(f"{line}\n" for line in lines))
    done = commit_paths(
        root, [STATE], "reconciler: update run state\n", author_name=OWN.author_name, author_email=OWN.author_email
    )
    assert done.sha is not None
    return done.sha


def no_race(since: str, upto: str) -> CommitResult:
    raise AssertionError(f"nothing raced, so nothing is made again ({since}..{upto})")


def test_a_commit_an_earlier_run_could_not_push_is_pushed(clone: tuple[Path, Path]) -> None:
    remote, ours = clone
    left = own_commit(ours, ["run r1"])
    assert push_with_retry(ours, own=OWN, rerender=no_race) == 1
    assert git(remote, "rev-parse", "main") == left


def test_with_nothing_unpushed_nothing_is_pushed(clone: tuple[Path, Path]) -> None:
    remote, ours = clone
    before = git(remote, "rev-parse", "main")
    assert push_with_retry(ours, own=OWN, rerender=no_race) == 0
    assert git(remote, "rev-parse", "main") == before


def test_a_commit_reconciler_did_not_make_is_never_pushed(clone: tuple[Path, Path]) -> None:
    remote, ours = clone
    before = git(remote, "rev-parse", "main")
    (ours / "NOTES.md").write_text("my unpushed work\n")
    git(ours, "add", "NOTES.md")
    git(ours, "commit", "-qm", "my notes")
    mine = git(ours, "rev-parse", "HEAD")
    own_commit(ours, ["run r1"])
    with pytest.raises(GitError) as refused:
        push_with_retry(ours, own=OWN, rerender=no_race)
    assert "main has 1 commit(s) not on origin that reconciler did not make" in refused.value.message
    assert f"{mine[:10]} my notes" in refused.value.message and "nothing was pushed" in refused.value.message
    assert git(remote, "rev-parse", "main") == before


def test_a_commit_only_another_branch_of_origin_has_is_not_pushed_to_this_one(clone: tuple[Path, Path]) -> None:
    remote, ours = clone
    before = git(remote, "rev-parse", "main")
    git(ours, "switch", "-qc", "feature")
    (ours / "WIP.md").write_text("not reviewed\n")
    git(ours, "add", "WIP.md")
    git(ours, "commit", "-qm", "wip")
    git(ours, "push", "-q", "origin", "feature")  # on origin, but on origin/feature only
    wip = git(ours, "rev-parse", "HEAD")
    git(ours, "switch", "-q", "main")
    git(ours, "merge", "-q", "--ff-only", "feature")
    own_commit(ours, ["run r1"])
    with pytest.raises(GitError) as refused:
        push_with_retry(ours, own=OWN, rerender=no_race)
    assert f"main has 1 commit(s) not on origin that reconciler did not make ({wip[:10]} wip)" in refused.value.message
    assert git(remote, "rev-parse", "main") == before


def test_a_branch_new_to_origin_is_pushed_with_the_commits_it_shares_with_origin(clone: tuple[Path, Path]) -> None:
    remote, ours = clone
    git(ours, "switch", "-qc", "results")  # no origin/results yet: what origin has anywhere counts as pushed
    left = own_commit(ours, ["run r1"])
    assert push_with_retry(ours, own=OWN, rerender=no_race) == 1
    assert git(remote, "rev-parse", "results") == left


def test_a_push_that_failed_on_the_way_is_tried_again_and_lands(clone: tuple[Path, Path], tmp_path: Path) -> None:
    remote, ours = clone
    failed = tmp_path / "failed-once"
    flaky = tmp_path / "flaky-receive-pack"
    flaky.write_text(
        "#!/bin/sh\n"
        f"if [ ! -e '{failed}' ]; then : > '{failed}'; echo 'fatal: the remote end hung up unexpectedly' >&2; exit 128; fi\n"
        'exec git-receive-pack "$@"\n'
    )
    flaky.chmod(0o755)
    git(ours, "config", "remote.origin.receivepack", str(flaky))
    left = own_commit(ours, ["run r1"])
    push_with_retry(ours, own=OWN, rerender=no_race, backoff=0.01)
    assert failed.exists()  # the first push did fail
    assert git(remote, "rev-parse", "main") == left


def test_a_push_the_remote_refuses_fails_at_once_and_says_why(clone: tuple[Path, Path], tmp_path: Path) -> None:
    remote, ours = clone
    before = git(remote, "rev-parse", "main")
    seen = tmp_path / "pushes-seen"
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        f"#!/bin/sh\necho push >> '{seen}'\necho 'error: GH006: Protected branch update failed for refs/heads/main.' >&2\nexit 1\n"
    )
    hook.chmod(0o755)
    left = own_commit(ours, ["run r1"])
    with pytest.raises(GitError) as refused:
        push_with_retry(ours, own=OWN, rerender=no_race, backoff=0.01)
    assert "origin refused the push to main (a hook or branch protection, not a race)" in refused.value.message
    assert "GH006: Protected branch update failed for refs/heads/main." in refused.value.message
    assert seen.read_text().splitlines() == ["push"]  # the remote was asked once, not raced against
    assert git(remote, "rev-parse", "main") == before and git(ours, "rev-parse", "HEAD") == left


def test_a_push_another_push_overtook_on_the_remote_is_rebased_and_lands(
    clone: tuple[Path, Path], tmp_path: Path
) -> None:
    remote, ours = clone
    other = clone_with_commit(remote, tmp_path / "other", "CHANGELOG.md", "theirs")
    git(other, "push", "-q", "origin", "HEAD:refs/heads/theirs")
    theirs = git(other, "rev-parse", "HEAD")
    # their push lands on main while the remote is taking ours: git says
    # `! [remote rejected] main -> main (failed to update ref)`, after `cannot lock ref`
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        'if [ ! -e "$GIT_DIR/raced" ]; then : > "$GIT_DIR/raced"\n'
        "  env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES"
        " git update-ref refs/heads/main refs/heads/theirs\nfi\n"
    )
    hook.chmod(0o755)
    own_commit(ours, ["run r1"])
    assert push_with_retry(ours, own=OWN, rerender=no_race, backoff=0.01) == 2
    assert git(remote, "rev-parse", "main^") == theirs
    assert git(remote, "show", f"main:{STATE}") == "run r1"


def other_job_pushed_first(remote: Path, tmp_path: Path) -> str:
    """Another job's clone commits its state file and pushes it first; its commit."""
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True, capture_output=True)
    theirs = own_commit(other, ["their run"])
    git(other, "push", "-q", "origin", "main")
    return theirs


def test_a_race_that_conflicts_redoes_every_unpushed_commit_of_reconcilers(
    clone: tuple[Path, Path], tmp_path: Path
) -> None:
    remote, ours = clone
    other_job_pushed_first(remote, tmp_path)
    own_commit(ours, ["run r1"])  # a push that failed left this one
    own_commit(ours, ["run r1", "run r2"])

    def redo(since: str, upto: str) -> CommitResult:
        # what our commits since..upto added, on top of the state file the other job pushed
        before = set((committed_text(ours, STATE, since) or "").splitlines())
        added = [line for line in (committed_text(ours, STATE, upto) or "").splitlines() if line not in before]
        own_commit(ours, (ours / STATE).read_text().splitlines() + added)
        return CommitResult(git(ours, "rev-parse", "HEAD"), (STATE,))

    assert push_with_retry(ours, own=OWN, rerender=redo) == 2
    assert git(remote, "show", f"main:{STATE}").splitlines() == ["their run", "run r1", "run r2"]


def test_a_retry_whose_rerender_fails_puts_the_branch_back_on_the_jobs_commit(
    clone: tuple[Path, Path], tmp_path: Path
) -> None:
    remote, ours = clone
    theirs = other_job_pushed_first(remote, tmp_path)
    mine = own_commit(ours, ["run r1"])

    def unreachable(since: str, upto: str) -> CommitResult:
        (ours / STATE).write_text("their run\nrun r1\n")  # what was put back before the platform failed
        raise ReconcilerError("cannot reach the platform")

    with pytest.raises(GitError) as stopped:
        push_with_retry(ours, own=OWN, rerender=unreachable)
    assert stopped.value.message.startswith("cannot reach the platform; ")
    assert f"commit {mine[:10]} is kept locally" in stopped.value.message
    assert git(ours, "rev-parse", "HEAD") == mine
    assert git(ours, "status", "--porcelain") == ""  # the state file is as the job committed it
    assert git(remote, "rev-parse", "main") == theirs
