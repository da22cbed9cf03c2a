"""Commit generated files back, and push with a retry that rebases and re-renders."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ReconcilerError


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


def push_with_retry(
    root: Path,
    *,
    rerender: Callable[[], CommitResult],
    remote: str = "origin",
    attempts: int = 3,
) -> int:
    """Push HEAD; when rejected, rebase onto the remote (or, if our generated files conflict,
    drop our commit and re-render on top of it) and try again. Returns the attempts used."""
    import git

    repo = _repo(root)
    branch = repo.active_branch.name
    for attempt in range(1, attempts + 1):
        try:
            repo.git.push(remote, f"HEAD:refs/heads/{branch}")
            return attempt
        except git.GitCommandError as exc:
            text = (exc.stderr or "") + (exc.stdout or "")
            if not any(w in text for w in ("rejected", "non-fast-forward", "fetch first")) or attempt == attempts:
                raise GitError(f"git push to {remote}/{branch} failed: {text.strip()}") from None
        _refuse_to_rebase_over_edits(repo, remote, branch)
        repo.git.fetch(remote, branch)
        upstream = f"{remote}/{branch}"
        try:
            repo.git.rebase(upstream)
        except git.GitCommandError as exc:
            try:
                repo.git.rebase("--abort")
            except git.GitCommandError:  # the rebase never started, so nothing was changed
                raise GitError(
                    f"push to {remote}/{branch} was rejected and rebasing onto it failed: "
                    f"{(exc.stderr or str(exc)).strip()}",
                    hint=f"run `git pull --rebase {remote} {branch}` and `git push` by hand",
                ) from None
            ahead = int(repo.git.rev_list("--count", f"{upstream}..HEAD"))
            if ahead > 1:
                raise GitError(
                    f"push was rejected and {ahead} local commits conflict with {upstream}; resolve by hand"
                ) from None
            repo.git.reset("--hard", upstream)  # only our generated commit is dropped; it is re-rendered next
        rerender()
    return attempts


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
