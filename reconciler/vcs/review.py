"""What a pull request changes in the specs: each spec as it was at the merge base vs now.

    review_changes(root, "origin/main")   merge base of HEAD and the base ref (GitPython), every
                                          spec file there vs the working tree: added, edited,
                                          deleted, renamed, each with a field-level diff
    field_diff(old, new)                  pure: leaf changes in `dotted` key style, e.g.
                                          agents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4

A rename is a deleted file and an added file with the same explicit `[reconcile] id`, the
same content, or mostly the same text (as git's own rename detection). "Now" is the working
tree, which is what `reconciler plan` reads, so uncommitted and untracked specs count too.
"""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from ..specs.diagnostics import KeyPath, dotted
from ..specs.loader import discover, is_benchmark_document
from ..specs.models import default_spec_id
from .commit import GitError


class _Missing:
    def __repr__(self) -> str:
        return "(unset)"


MISSING: Any = _Missing()
RENAME_SIMILARITY = 0.5
_PLAIN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./:@+-]*$")
_NUMBERISH = re.compile(r"^[+-]?(\d|inf|nan)", re.IGNORECASE)


def format_value(value: Any) -> str:
    """A value on one line: bare for plain identifiers (model names, paths), TOML-like otherwise."""
    if value is MISSING:
        return "(unset)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        if _PLAIN.match(value) and value not in ("true", "false") and not _NUMBERISH.match(value):
            return value
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_one_line(str(k))} = {format_value(v)}" for k, v in value.items()) + "}"
    return _one_line(str(value))  # dates and times


def _one_line(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n")


@dataclass(frozen=True)
class FieldChange:
    path: KeyPath
    old: Any
    new: Any

    @property
    def key(self) -> str:
        return _one_line(dotted(self.path))

    @property
    def kind(self) -> Literal["added", "removed", "changed"]:
        if self.old is MISSING:
            return "added"
        if self.new is MISSING:
            return "removed"
        return "changed"

    def line(self) -> str:
        """`agents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4`."""
        return f"{self.key}: {format_value(self.old)} -> {format_value(self.new)}"

    def document(self) -> dict[str, Any]:
        def plain(v: Any) -> Any:
            return None if v is MISSING else json.loads(json.dumps(v, default=str))

        return {"key": dotted(self.path), "kind": self.kind, "old": plain(self.old), "new": plain(self.new)}


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def _is_table_array(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(v, dict) for v in value)


def _leaves(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif _is_table_array(value):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    else:
        yield path, value


def field_diff(old: Any, new: Any, prefix: KeyPath = ()) -> list[FieldChange]:
    """Leaf-level changes from `old` to `new` (parsed TOML), in the new file's key order.

    Tables recurse by key, arrays of tables by index; any other value (scalars, arrays of
    scalars) is compared whole. A side that is missing, or of another shape, is `MISSING`
    for each leaf of the other side.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[FieldChange] = []
        for key in [*new, *(k for k in old if k not in new)]:
            out += field_diff(old.get(key, MISSING), new.get(key, MISSING), (*prefix, key))
        return out
    if (_is_table_array(old) or _is_table_array(new)) and isinstance(old, list) and isinstance(new, list):
        out = []
        for i in range(max(len(old), len(new))):
            out += field_diff(old[i] if i < len(old) else MISSING, new[i] if i < len(new) else MISSING, (*prefix, i))
        return out
    if old is not MISSING and new is not MISSING and _same(old, new):
        return []
    if old is MISSING and new is MISSING:
        return []
    if _shape(old) != _shape(new):
        removed = [FieldChange(p, v, MISSING) for p, v in _leaves(old, prefix)] if old is not MISSING else []
        added = [FieldChange(p, MISSING, v) for p, v in _leaves(new, prefix)] if new is not MISSING else []
        if removed or added:
            return removed + added
    return [FieldChange(prefix, old, new)]


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "table"
    if _is_table_array(value):
        return "tables"
    return "value"


# --- specs at two points in history ------------------------------------------------------------

Status = Literal["added", "edited", "deleted", "renamed"]


@dataclass(frozen=True)
class SpecChange:
    status: Status
    path: str  # relative to the project root; for a deleted spec, where it was
    spec_id: str
    kind: Literal["run", "benchmark"]
    fields: tuple[FieldChange, ...] = ()
    old_path: str | None = None  # renamed: where it was
    old_spec_id: str | None = None  # renamed: the id it had (differs when the id comes from the path)
    error: str | None = None  # a side that is not valid TOML: no field diff

    @property
    def ids(self) -> tuple[str, ...]:
        """The spec ids whose plan actions belong next to this change."""
        return tuple(dict.fromkeys(i for i in (self.spec_id, self.old_spec_id) if i))

    def document(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "path": self.path,
            "old_path": self.old_path,
            "spec_id": self.spec_id,
            "old_spec_id": self.old_spec_id,
            "kind": self.kind,
            "error": self.error,
            "fields": [f.document() for f in self.fields],
        }


@dataclass(frozen=True)
class Review:
    base_ref: str
    merge_base: str
    changes: tuple[SpecChange, ...]

    def document(self) -> dict[str, Any]:
        return {
            "base_ref": self.base_ref,
            "merge_base": self.merge_base,
            "changes": [c.document() for c in self.changes],
        }


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
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError:
        error = "not UTF-8 text"
    except tomllib.TOMLDecodeError as exc:
        error = f"invalid TOML: {exc}"
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


def fetch_base_commit(root: Path, sha: str, *, depth: int = 50, rounds: int = 6) -> None:
    """Make the commit `sha` and a merge base with HEAD present, fetching from origin when needed.

    A pull request's checkout often has no origin/<base> and is shallow (actions/checkout fetches
    one commit): the base commit is fetched by id, and a shallow HEAD is deepened `depth` commits at
    a time until the two histories meet. A full clone stays full: no --depth is passed to it.
    """
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{root} is not in a git repository; the review needs one") from None
    try:
        shallow = repo.git.rev_parse("--is-shallow-repository").strip() == "true"
        try:
            if not _has_commit(repo, sha):
                repo.git.fetch("--no-tags", *([f"--depth={depth}"] if shallow else []), "origin", sha)
            head = repo.head.commit.hexsha
            for _ in range(rounds):
                if not shallow or repo.merge_base("HEAD", sha):
                    return
                repo.git.fetch("--no-tags", f"--deepen={depth}", "origin", head)
                shallow = repo.git.rev_parse("--is-shallow-repository").strip() == "true"
        except git.GitCommandError as exc:
            raise GitError(
                f"could not fetch the pull request's base commit {sha[:12]} from origin: {exc.stderr.strip() or exc}",
                hint="check out with fetch-depth: 0, or fetch the base branch before `reconciler plan`",
            ) from None
    finally:
        repo.close()


def _has_commit(repo: Any, sha: str) -> bool:
    import git

    try:
        repo.commit(sha)
    except (git.BadName, git.BadObject, ValueError, git.GitCommandError):
        return False
    return True


def review_changes(root: Path, base_ref: str, specs_dir: str = "specs") -> Review:
    """The spec changes between the merge base of HEAD and `base_ref`, and the working tree."""
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"{root} is not in a git repository; --base needs one") from None
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
        top = Path(str(repo.working_tree_dir)).resolve()
        rel_root = PurePosixPath(root.resolve().relative_to(top).as_posix())
        old = dict(_sides_at(merge_base, rel_root, specs_dir))
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
