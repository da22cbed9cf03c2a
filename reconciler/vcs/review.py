"""What a pull request changes in the specs: each spec as it was at the merge base vs now.

    review_changes(root, "origin/main")   merge base of HEAD and the base ref (GitPython), every
                                          spec file there vs the working tree: added, edited,
                                          deleted, renamed, each with a field-level diff
                                          (the values and `field_diff` live in `core.review`)

A rename is a deleted file and an added file with the same explicit `[reconcile] id`, the
same content, or mostly the same text (as git's own rename detection). "Now" is the working
tree, which is what `reconciler plan` reads, so uncommitted and untracked specs count too.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from ..core.review import MISSING, SpecChange, Status, field_diff
from ..core.review import Review as Review  # built here; callers that run git import it from here too
from ..specs.diagnostics import Diagnostic
from ..specs.loader import discover, is_benchmark_document, parse_document
from ..specs.models import default_spec_id
from .commit import GitError

RENAME_SIMILARITY = 0.5


@dataclass(frozen=True)
class _Side:
    path: str
    text: str
    data: dict[str, Any] | None
    error: str | None
    spec_id: str
    kind: Literal["run", "benchmark"]
    explicit_id: bool


def _side(path: str, raw: bytes, specs_dir: str) -> _Side:
    data: dict[str, Any] | None = None
    error = None
    text = ""
    # read as the loader reads a spec file: a revision on either side may be any bytes at all
    doc = parse_document(raw, path)
    if isinstance(doc, Diagnostic):
        error = doc.message.removeprefix("is ") + (f" (line {doc.line})" if doc.line > 1 else "")
        with contextlib.suppress(UnicodeDecodeError):
            text = raw.decode("utf-8")
    else:
        text, data = doc.text, doc.data
    explicit = None
    kind: Literal["run", "benchmark"] = "run"
    if data is not None:
        if is_benchmark_document(data):
            kind = "benchmark"
        else:
            table = data.get("reconcile")
            candidate = table.get("id") if isinstance(table, dict) else None
            explicit = candidate if isinstance(candidate, str) and candidate else None
    return _Side(path, text, data, error, explicit or default_spec_id(path, specs_dir), kind, explicit is not None)


def compare_sides(old: Mapping[str, _Side], new: Mapping[str, _Side]) -> list[SpecChange]:
    """Pair files by path, then pair the leftovers as renames; everything else is added or deleted."""
    out: list[SpecChange] = []
    for path in sorted(set(old) & set(new)):
        a, b = old[path], new[path]
        if a.text != b.text:
            out.append(_change("edited", a, b))
    deleted = {p: old[p] for p in sorted(set(old) - set(new))}
    added = {p: new[p] for p in sorted(set(new) - set(old))}
    for a_path, b_path in _renames(deleted, added):
        out.append(_change("renamed", deleted.pop(a_path), added.pop(b_path)))
    out += [SpecChange("deleted", s.path, s.spec_id, s.kind, error=s.error) for s in deleted.values()]
    for s in added.values():
        fields = tuple(field_diff(MISSING, s.data)) if s.data is not None else ()
        out.append(SpecChange("added", s.path, s.spec_id, s.kind, fields, error=s.error))
    return sorted(out, key=lambda c: (c.path, c.status))


def _change(status: Status, a: _Side, b: _Side) -> SpecChange:
    error = b.error or a.error
    fields = tuple(field_diff(a.data, b.data)) if a.data is not None and b.data is not None else ()
    renamed = status == "renamed"
    return SpecChange(
        status,
        b.path,
        b.spec_id,
        b.kind,
        fields,
        old_path=a.path if renamed else None,
        old_spec_id=a.spec_id if renamed or a.spec_id != b.spec_id else None,
        error=error,
    )


def _renames(deleted: Mapping[str, _Side], added: Mapping[str, _Side]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    used: set[str] = set()
    for a in deleted.values():  # the same explicit id, or the same parsed content
        for b in added.values():
            if b.path in used:
                continue
            if (a.explicit_id and b.explicit_id and a.spec_id == b.spec_id) or (
                a.data is not None and a.data == b.data
            ):
                pairs.append((a.path, b.path))
                used.add(b.path)
                break
    taken = {p for p, _ in pairs}
    scored = sorted(
        (
            (-difflib.SequenceMatcher(None, a.text, b.text).ratio(), a.path, b.path)
            for a in deleted.values()
            if a.path not in taken
            for b in added.values()
            if b.path not in used
        ),
    )
    for score, a_path, b_path in scored:
        if -score < RENAME_SIMILARITY:
            break
        if a_path in taken or b_path in used:
            continue
        pairs.append((a_path, b_path))
        taken.add(a_path)
        used.add(b_path)
    return pairs


NO_PROMPTS = {"GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never"}
FETCH_SECONDS = 120  # one fetch from origin: an origin that never answers must not hold a job (and its lock)


def fetch_base_commit(root: Path, sha: str, *, depth: int = 50, rounds: int = 6) -> None:
    """Make the commit `sha` and a merge base with HEAD present, fetching from origin when needed.

    A pull request's checkout often has no origin/<base> and is shallow (actions/checkout fetches
    one commit): the base commit is fetched by id, and a shallow HEAD is deepened `depth` commits at
    a time until the two histories meet. A full clone stays full: no --depth is passed to it.
    git never asks for a user name or password on the terminal here (NO_PROMPTS): in a job with no
    one to answer, a fetch that would ask fails instead of waiting forever.
    """
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{root} is not in a git repository; the review needs one") from None
    repo.git.update_environment(**NO_PROMPTS)
    try:
        shallow = repo.git.rev_parse("--is-shallow-repository").strip() == "true"
        try:
            if not has_commit(repo, sha):
                repo.git.fetch(
                    "--no-tags",
                    *([f"--depth={depth}"] if shallow else []),
                    "origin",
                    sha,
                    kill_after_timeout=FETCH_SECONDS,
                )
            head = repo.head.commit.hexsha
            for _ in range(rounds):
                if not shallow or repo.merge_base("HEAD", sha):
                    return
                repo.git.fetch("--no-tags", f"--deepen={depth}", "origin", head, kill_after_timeout=FETCH_SECONDS)
                shallow = repo.git.rev_parse("--is-shallow-repository").strip() == "true"
        except git.GitCommandError as exc:
            raise GitError(
                f"could not fetch the pull request's base commit {sha[:12]} from origin: {exc.stderr.strip() or exc}",
                hint="check out with fetch-depth: 0, or fetch the base branch before `reconciler plan`",
            ) from None
    finally:
        repo.close()


def _repo_at(root: Path, needs: str = "") -> Any:
    """The git repository holding `root` (GitPython's Repo; the caller closes it)."""
    import git

    try:
        return git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{root} is not in a git repository{needs}") from None


def _commit_in(repo: Any, sha: str) -> Any:
    """The commit `sha` of `repo`, or a GitError saying this clone lacks it."""
    import git

    try:
        return repo.commit(sha)
    except (git.BadName, git.BadObject, ValueError, git.GitCommandError):
        raise GitError(f"commit {sha[:12]} is not in this clone", hint="fetch it first") from None


def _below_top(repo: Any, root: Path) -> PurePosixPath:
    """Where the project at `root` lies in the repository (`.` at its top)."""
    top = Path(str(repo.working_tree_dir)).resolve()
    return PurePosixPath(root.resolve().relative_to(top).as_posix())


def has_commit(repo: Any, sha: str) -> bool:
    import git

    try:
        repo.commit(sha)
    except (git.BadName, git.BadObject, ValueError, git.GitCommandError):
        return False
    return True


def review_changes(root: Path, base_ref: str, specs_dir: str = "specs") -> Review:
    """The spec changes between the merge base of HEAD and `base_ref`, and the working tree."""
    import git

    repo = _repo_at(root, "; --base needs one")
    try:
        try:
            base = repo.commit(base_ref)
        except (git.BadName, git.BadObject, ValueError, git.GitCommandError):
            raise GitError(
                f"unknown base ref {base_ref!r}",
                hint="fetch it first (for example `git fetch origin main`; in Actions, checkout with fetch-depth: 0)",
            ) from None
        try:
            bases = repo.merge_base("HEAD", base)
        except git.GitCommandError as exc:
            raise GitError(f"git merge-base HEAD {base_ref} failed: {exc.stderr.strip() or exc}") from None
        if not bases:
            raise GitError(f"HEAD and {base_ref} have no common history, so there is nothing to review against")
        merge_base = bases[0]
        old = dict(_sides_at(merge_base, _below_top(repo, root), specs_dir))
    finally:
        repo.close()
    specs_path = root / specs_dir
    new = {}
    if specs_path.is_dir():
        for file in discover([specs_path]):
            if file.is_file():
                path = file.resolve().relative_to(root.resolve()).as_posix()
                new[path] = _side(path, file.read_bytes(), specs_dir)
    return Review(base_ref, merge_base.hexsha, tuple(compare_sides(old, new)))


_REGULAR_BLOBS = (0o100644, 0o100755)  # never a link (0o120000) or a submodule


def file_at(root: Path, sha: str, rel: str, *, limit: int) -> str | None:
    """The UTF-8 text of the project's file `rel` as it is in the commit `sha`; None when it is
    not there, is not a regular file of at most `limit` bytes, or is not UTF-8."""

    repo = _repo_at(root)
    try:
        commit = _commit_in(repo, sha)
        try:
            item = commit.tree / (_below_top(repo, root) / rel).as_posix()
        except KeyError:
            return None
        if item.type != "blob" or item.mode not in _REGULAR_BLOBS or item.size > limit:
            return None
        try:
            return str(item.data_stream.read().decode("utf-8"))
        except UnicodeDecodeError:
            return None
    finally:
        repo.close()


def files_at(root: Path, sha: str, folder: str, *, limit: int) -> dict[str, str]:
    """The UTF-8 text files under `folder` (relative to the project at `root`) as they are in the
    commit `sha`: name below the folder -> text. Only regular files of at most `limit` bytes; a
    link, a larger file or one that is not UTF-8 is left out, as if absent.

    What a pull request must not control is read from its base this way (the plan comment's
    templates), never from the pull request's own checkout."""

    repo = _repo_at(root)
    try:
        commit = _commit_in(repo, sha)
        where = _below_top(repo, root) / folder
        tree: Any  # GitPython's tree walk is typed as a union of every object kind
        try:
            tree = commit.tree / where.as_posix()
        except KeyError:
            return {}
        if tree.type != "tree":
            return {}
        out: dict[str, str] = {}
        for item in tree.traverse():
            if item.type != "blob" or item.mode not in _REGULAR_BLOBS or item.size > limit:
                continue
            try:
                text = item.data_stream.read().decode("utf-8")
            except UnicodeDecodeError:
                continue
            out[PurePosixPath(item.path).relative_to(where).as_posix()] = text
        return out
    finally:
        repo.close()


def _sides_at(commit: Any, rel_root: PurePosixPath, specs_dir: str) -> Iterator[tuple[str, _Side]]:
    where = (rel_root / PurePosixPath(specs_dir)).as_posix()
    try:
        tree = commit.tree / where
    except KeyError:
        return
    for item in tree.traverse():
        if item.type != "blob" or not item.path.endswith(".toml"):
            continue
        full = PurePosixPath(item.path)
        path = full.relative_to(rel_root).as_posix() if str(rel_root) != "." else full.as_posix()
        if any(part.startswith(".") for part in PurePosixPath(path).parts):
            continue
        yield path, _side(path, item.data_stream.read(), specs_dir)
