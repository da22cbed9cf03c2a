"""Commit generated files back, and push with a retry that rebases and re-renders."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ..errors import ReconcilerError
from .messages import SUBJECT_PREFIX


class GitError(ReconcilerError):
    pass


@dataclass(frozen=True)
class CommitResult:
    sha: str | None  # None: nothing to commit
    paths: tuple[str, ...]
    ignored: tuple[str, ...] = ()  # generated files .gitignore keeps out of git: left uncommitted, said so


# every path given to git is a file name, never a pattern: `git status -- '*'` (an output named
# `*`, or `leaderboards/*.md`) would otherwise take in, and commit, every file it matches
LITERAL_PATHS = {"GIT_LITERAL_PATHSPECS": "1"}


def literal_paths(repo: Any) -> Any:
    """`repo` (a git.Repo) with every command it runs reading paths literally (LITERAL_PATHS)."""
    repo.git.update_environment(**LITERAL_PATHS)
    return repo


def _repo(root: Path):  # type: ignore[no-untyped-def]
    import git

    try:
        return literal_paths(git.Repo(root, search_parent_directories=False))
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        pass
    try:
        top = git.Repo(root, search_parent_directories=True).working_dir
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(
            f"{root} is not a git repository; --commit needs one", hint="run `git init` or drop --commit"
        ) from None
    raise GitError(
        f"{root} is a folder of the git repository at {top}; --commit needs the project at the repository's top",
        hint="commit the generated files yourself (drop --commit), or move reconciler.toml to the repository's top",
    )


_IN_PROGRESS = (
    ("MERGE_HEAD", "a merge", "git merge --continue` or `git merge --abort"),
    ("rebase-merge", "a rebase", "git rebase --continue` or `git rebase --abort"),
    ("rebase-apply", "a rebase", "git rebase --continue` or `git rebase --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue` or `git cherry-pick --abort"),
    ("REVERT_HEAD", "a revert", "git revert --continue` or `git revert --abort"),
)


def ensure_committable(root: Path, *, push: bool) -> None:
    """Refuse, before anything is applied, a checkout that `commit_paths` (or the push) cannot
    complete: a merge, rebase, cherry-pick or revert in progress, or a detached HEAD to push.
    Otherwise runs would be submitted and their state left staged in the middle of the user's work."""
    repo = _repo(root)
    git_dir = Path(repo.git_dir)
    for name, what, finish in _IN_PROGRESS:
        if (git_dir / name).exists():
            raise GitError(
                f"--commit: {what} is in progress in {root}; nothing was applied",
                hint=f"finish it (`{finish}`), then run reconcile again",
            )
    if push and repo.head.is_detached:
        raise GitError(
            "--push: HEAD is detached, so there is no branch to push to; nothing was applied",
            hint="check out the branch to update (`git switch BRANCH`), or drop --push",
        )


def changed_paths(root: Path, paths: Sequence[str]) -> list[str]:
    """Which of `paths` differ from HEAD (new, modified or deleted)."""
    repo = _repo(root)
    if not paths:
        return []
    # -z: paths verbatim, NUL-separated; without it git quotes a non-ASCII name ("r\303\251sultats.md")
    out = repo.git.status("--porcelain", "-z", "--untracked-files=all", "--", *paths)
    entries = iter(out.split("\0"))
    changed = []
    for entry in entries:
        if len(entry) < 4:
            continue
        changed.append(entry[3:])
        if "R" in entry[:2] or "C" in entry[:2]:  # a rename or copy (staged or not): its source follows
            next(entries, None)
    return sorted(set(changed))


def head_sha(root: Path) -> str:
    """The commit HEAD names now (after a push retry: the one pushed)."""
    return str(_repo(root).head.commit.hexsha)


def committed_text(root: Path, rel: str, rev: str = "HEAD") -> str | None:
    """`rel` as commit `rev` has it (UTF-8 text), or None: not in it, no such commit, or not text."""
    import git

    try:
        return str(_repo(root).git.show(f"{rev}:./{rel}", stdout_as_string=True, strip_newline_in_stdout=False))
    except (git.GitCommandError, GitError, UnicodeDecodeError, ValueError):
        return None


def commit_paths(
    root: Path, paths: Sequence[str], message: str, *, author_name: str, author_email: str
) -> CommitResult:
    """Commit exactly `paths` (nothing else the index may hold); nothing changed is not an error."""
    import git

    repo = _repo(root)
    ignored = ignored_paths(root, paths)
    changed = [p for p in changed_paths(root, paths) if p not in ignored]
    if not changed:
        return CommitResult(None, (), tuple(ignored))
    env = {
        "GIT_AUTHOR_NAME": author_name,
        "GIT_AUTHOR_EMAIL": author_email,
        "GIT_COMMITTER_NAME": author_name,
        "GIT_COMMITTER_EMAIL": author_email,
    }
    try:
        repo.git.add("--", *changed)
        with repo.git.custom_environment(**env):
            repo.git.commit("-m", message, "--only", "--", *changed)
    except git.GitCommandError as exc:
        raise GitError(f"git commit failed: {exc.stderr.strip() or exc}") from None
    return CommitResult(repo.head.commit.hexsha, tuple(changed), tuple(ignored))


def last_change(root: Path, path: str, upto: str) -> str | None:
    """The newest commit on `upto`'s first-parent line (the branch itself: a merge commit, a
    squashed or rebased commit, never a commit of the merged branch) that changed `path`; None
    when git cannot say (not a repository, `upto` unknown). A shallow clone that does not reach
    it names its oldest commit."""
    import git

    try:  # the project may be a folder of the repository: search upwards, as review does
        repo = literal_paths(git.Repo(root, search_parent_directories=True))
        found: str = repo.git.log("-1", "--first-parent", "--format=%H", upto, "--", path)
    except (git.GitCommandError, git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    return found.strip() or None


def ignored_paths(root: Path, paths: Sequence[str]) -> list[str]:
    if not paths:
        return []
    # --stdin -z: names in and out verbatim (git quotes a non-ASCII name in its plain output)
    done = subprocess.run(
        ["git", "check-ignore", "--stdin", "-z"],
        cwd=_repo(root).working_tree_dir,  # names, not patterns: check-ignore refuses LITERAL_PATHS
        input="\0".join(paths).encode(),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:  # 1: none of them is ignored; 128: git could not say (the commit will)
        return []
    return sorted({name for name in done.stdout.decode().split("\0") if name})


@dataclass(frozen=True)
class LocalCommit:
    """One commit on HEAD that no ref of the remote known here reaches: what a push would send."""

    sha: str
    parents: int
    author_name: str
    author_email: str
    subject: str
    paths: tuple[str, ...]

    def shown(self) -> str:
        return f"{self.sha[:10]} {self.subject}"


@dataclass(frozen=True)
class OwnCommits:
    """What a commit of reconciler's own looks like (`commit_paths` with `commit_message`): its
    author, a `reconciler: ` subject, one parent, and no file but the project's generated places
    (`paths`: engine.board_files.generated_places). A push sends only such commits: anyone
    else's unpushed work is theirs to push."""

    author_name: str
    author_email: str
    paths: frozenset[str]

    def made(self, commit: LocalCommit) -> bool:
        return (
            commit.parents == 1
            and (commit.author_name, commit.author_email) == (self.author_name, self.author_email)
            and commit.subject.startswith(SUBJECT_PREFIX)
            and set(commit.paths) <= self.paths
        )


def unpushed_commits(root: Path, remote: str, branch: str) -> list[LocalCommit]:
    """HEAD's commits that a push to `remote`'s `branch` would send, newest first: those the
    branch as last fetched here lacks. A commit another branch of `remote` has is not on this
    one (a `wip` pushed to origin/feature, then merged into main here): it counts as pushed only
    when the branch was never fetched (new to `remote`, or a checkout made by sha), where what
    any ref of `remote` reaches is all there is to go by."""
    import git

    repo = _repo(root)
    tracking = f"refs/remotes/{remote}/{branch}"
    try:
        repo.git.show_ref("--verify", "--quiet", tracking)
        pushed = tracking
    except git.GitCommandError:  # no such ref
        pushed = f"--remotes={remote}"
    try:  # -z: paths verbatim; each commit starts with a record separator, its fields apart by a unit one
        out = repo.git.log(
            "--no-renames", "--name-only", "-z", "--format=%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%s", "HEAD", "--not", pushed,
        )  # fmt: skip
    except git.GitCommandError as exc:
        raise GitError(f"git could not list the commits {remote} lacks: {(exc.stderr or str(exc)).strip()}") from None
    commits = []
    for entry in str(out).split("\x1e")[1:]:
        header, _, names = entry.partition("\0")
        sha, parents, name, email, subject = header.split("\x1f", 4)
        paths = tuple(p.lstrip("\n") for p in names.split("\0") if p.strip("\n"))
        commits.append(LocalCommit(sha, len(parents.split()), name, email, subject, paths))
    return commits


def push_with_retry(
    root: Path,
    *,
    own: OwnCommits,
    rerender: Callable[[str, str], CommitResult],
    remote: str = "origin",
    attempts: int = 3,
    backoff: float = 1.0,
) -> int:
    """Push the commits HEAD has that `remote` lacks: this run's, and any an earlier run's failed
    push left behind. Returns the attempts used; 0: nothing to push. Refuses before pushing
    when one of them is not reconciler's own (`own`).

    Rejected because the branch moved (the remote has newer commits, or another push updated it
    while the remote wrote ours): rebase onto it (or, if our generated files conflict, drop our
    commits and have `rerender(since, upto)` put back what `since..upto` changed on top of it)
    and try again. A push the remote refused (a hook, a protected branch) fails at once; one
    that failed on the way (the network) is tried again, `attempts` times."""
    repo = _repo(root)
    branch = repo.active_branch.name
    unpushed = unpushed_commits(root, remote, branch)
    _refuse_others(unpushed, own, remote, branch)
    if not unpushed:
        return 0
    for attempt in range(1, attempts + 1):
        if _pushed(repo, remote, branch, tries=attempts, backoff=backoff):
            return attempt
        if attempt == attempts:
            break
        _refuse_to_rebase_over_edits(repo, remote, branch)
        repo.git.fetch(remote, branch)
        redone = _rebase_or_redo(repo, own, remote, branch, rerender)
        if redone is not None:  # the files of the commit made again are ours too, should it be redone again
            own = replace(own, paths=own.paths | set(redone.paths))
    raise GitError(
        f"git push to {remote}/{branch} was rejected {attempts} times: it kept getting newer commits;"
        " the commit is kept locally",
        hint="run `reconciler reconcile --commit --push` again",
    )


# the remote took the push and said no: a hook or a branch rule, which no retry changes
_REFUSED = ("hook declined", "protected branch", "GH006", "GH013")
# the branch moved under the push: the remote has commits we lack, or another push updated it
# while the remote was writing ours (`! [remote rejected] main -> main (failed to update ref)`)
_RACED = ("non-fast-forward", "fetch first", "cannot lock ref", "failed to update ref", "incorrect old value provided")

PushFailure = Literal["refused", "raced", "rejected", "failed"]


def push_failure(said: str) -> PushFailure:
    """What a failed `git push` that printed `said` calls for: `refused` (a hook or branch
    protection: stop), `raced` (fetch, rebase, push again), `rejected` for another reason (stop),
    or `failed` on the way, the network (the same push again). A refusal wins over a race: a
    hook's message is the reason, whatever else git printed."""
    if any(w in said for w in _REFUSED):
        return "refused"
    if any(w in said for w in _RACED):
        return "raced"
    return "rejected" if "rejected" in said else "failed"


def _pushed(repo: Any, remote: str, branch: str, *, tries: int, backoff: float) -> bool:
    """Push HEAD to `branch`: True when pushed, False when it raced another push there. A
    failure on the way (the network, a remote that did not answer) is tried again after a
    pause that doubles, `tries` times in all."""
    import git

    for attempt in range(1, tries + 1):
        try:
            repo.git.push(remote, f"HEAD:refs/heads/{branch}")
            return True
        except git.GitCommandError as exc:
            text = _said(exc)
        failure = push_failure(text)
        if failure == "refused":
            raise GitError(
                f"{remote} refused the push to {branch} (a hook or branch protection, not a race): "
                f"{_gist(text)}; the commit is kept locally",
                hint=f"let reconciler's commits onto {branch}, then run `reconciler reconcile --commit --push` again",
            )
        if failure == "raced":
            return False
        if failure == "rejected" or attempt == tries:
            raise GitError(
                f"git push to {remote}/{branch} failed: {_gist(text)}; the commit is kept locally",
                hint=f"once {remote} answers, run `reconciler reconcile --commit --push` again",
            )
        time.sleep(backoff * 2 ** (attempt - 1))
    return False  # not reached: the last try returns or raises


def _said(exc: Any) -> str:
    """What a failed git command printed, without GitPython's `stderr: '...'` around it."""
    parts = [(exc.stderr or "").strip(), (exc.stdout or "").strip()]
    parts = [p.removeprefix("stderr: '").removeprefix("stdout: '").removesuffix("'") for p in parts]
    return "\n".join(p for p in parts if p) or str(exc)


def _gist(text: str) -> str:
    """Why a push failed, in a line: what the remote said, else git's rejection, else its first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    said = [line.removeprefix("remote:").strip() for line in lines if line.startswith("remote:")]
    rejected = [line.strip(" !") for line in lines if "rejected" in line]
    return " ".join([line for line in said if line] or rejected or lines[:1] or [text])


def ensure_pushable(root: Path, own: OwnCommits, remote: str = "origin") -> None:
    """Refuse, before anything is applied, a push that would send a commit not reconciler's own
    (`own`). Found only at push time, the runs would be submitted already, and the commit that
    records them lost with a CI runner. `push_with_retry` asks again: one may appear meanwhile."""
    branch = _repo(root).active_branch.name
    _refuse_others(unpushed_commits(root, remote, branch), own, remote, branch, then="nothing was applied")


def _refuse_others(
    unpushed: Sequence[LocalCommit], own: OwnCommits, remote: str, branch: str, *, then: str = "nothing was pushed"
) -> None:
    """A push sends every commit `remote` lacks: none of them may be anyone else's. `then`: what
    became of the command."""
    others = [c for c in unpushed if not own.made(c)]
    if not others:
        return
    shown = "; ".join(c.shown() for c in others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    raise GitError(
        f"--push: {branch} has {len(others)} commit(s) not on {remote} that reconciler did not make ({shown}); {then}",
        hint=f"push them yourself (`git push {remote} {branch}`), or drop them; then run"
        " `reconciler reconcile --commit --push` again",
    )


def _rebase_or_redo(
    repo: Any, own: OwnCommits, remote: str, branch: str, rerender: Callable[[str, str], CommitResult]
) -> CommitResult | None:
    """Put this job's commits on top of `remote`'s `branch`: rebased (None), or, when that
    conflicts (the state file, a board), dropped and made again by `rerender` (its commit)."""
    import git

    upstream = f"{remote}/{branch}"
    try:
        repo.git.rebase(upstream)
        return None
    except git.GitCommandError as exc:
        try:
            repo.git.rebase("--abort")
        except git.GitCommandError:  # the rebase never started, so nothing was changed
            raise GitError(
                f"push to {upstream} was rejected and rebasing onto it failed: {(exc.stderr or str(exc)).strip()}",
                hint=f"run `git pull --rebase {remote} {branch}` and `git push` by hand",
            ) from None
    ahead = unpushed_commits(Path(repo.working_tree_dir), remote, branch)
    _refuse_others(ahead, own, remote, branch)  # what the reset drops must be ours, and only ours
    upto = str(repo.head.commit.hexsha)
    since = str(repo.git.rev_parse(f"{ahead[-1].sha}^")) if ahead else upto
    repo.git.reset("--hard", upstream)
    try:
        return rerender(since, upto)
    except BaseException as exc:
        # the reset dropped this job's commits, and the re-render that makes them again failed
        # (the platform did not answer): back onto them, so nothing is lost and the next run pushes them
        repo.git.reset("--hard", upto)
        if not isinstance(exc, ReconcilerError):
            raise
        raise GitError(
            f"{exc.message}; the retry of the rejected push stopped, and commit {upto[:10]} is kept locally",
            hint=f"{exc.hint + ', then ' if exc.hint else ''}run `reconciler reconcile --commit --push` again",
        ) from None


def _refuse_to_rebase_over_edits(repo: Any, remote: str, branch: str) -> None:
    """A rejected push is retried by rebasing, and on conflict by resetting: neither may touch
    edits the user has not committed, so with any in the tree the retry stops before it starts."""
    dirty = repo.git.status("--porcelain", "--untracked-files=no").splitlines()
    if not dirty:
        return
    names = [line[3:] for line in dirty]
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    raise GitError(
        f"push to {remote}/{branch} was rejected (it has newer commits) and uncommitted changes in {shown}"
        " block the retry; your changes are untouched and the new commit is kept locally",
        hint=f"commit or stash them (`git stash`), then run `git pull --rebase {remote} {branch}` and `git push`",
    )
