"""Which output types a user asked for, and which manifest paths may be written, and where.

`parse_types` reads `--type` exactly as the official client does (docs/platform-api.md §3): a comma
list drawn from summary, results, artifacts, logs, or `all` on its own; values are trimmed,
lowercased and de-duplicated, in the user's order.

`screen` decides, for every file of a manifest, whether it may land under the run folder:

    refused when the path                               reason (reported in files_failed)
    is empty, starts with `/`, holds `\\` or a NUL        outside the fixed run layout
    has an empty, `.` or `..` segment                    outside the fixed run layout
    has a `.git` segment, in any case (git would run     outside the fixed run layout
      the config or hooks written there)
    is not summary.csv, results.csv, logs.txt or         outside the fixed run layout
      artifacts/<a>/<b>[/...]
    belongs to a type that was not requested             type not requested
    appears twice (also: differs only in case or in      duplicate / conflicting path
      Unicode normal form, as safe_paths.overlaps
      compares, or one path is a folder of another)
    has a last segment shaped like a partial file        reserved for partial files
      (`.<name>.<8 hex>.partial`, any case)
    passes through a symlink already on disk             crosses a local symlink
      (wherever it leads: two folders that are one
      would let one file overwrite another)

A refused path is never opened, created or written; every other path is joined to the run
folder segment by segment, so the destination is always inside it.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..safe_paths import fold, is_git_folder_name
from .layout import TYPES, category

OUTSIDE_LAYOUT = "Manifest path is outside the fixed run layout"
NOT_REQUESTED = "Manifest path is outside the requested types"
DUPLICATE = "Manifest path is a duplicate path"
SYMLINK = "Manifest path crosses a local symlink, and reconciler never writes through one"
RESERVED = "Manifest path has the shape of reconciler's partial files"
PARTIAL_SUFFIX = ".partial"
NAME_MAX = 255  # bytes in one file name, on every file system reconciler writes to
_KEY = 8  # hex digits of a partial's key
_CONTROL = re.compile(r"[\x00-\x1f]")
_PARTIAL_SHAPE = re.compile(rf"^\..+\.[0-9a-f]{{{_KEY}}}{re.escape(PARTIAL_SUFFIX)}$", re.IGNORECASE | re.DOTALL)


class TypeSelectionError(ValueError):
    """`--type` could not be read; the message is the official client's."""


def parse_types(value: str | Sequence[str] | None) -> tuple[str, ...]:
    """`summary,results` -> ("summary", "results"); `all` -> every type; None -> the default."""
    if value is None:
        return ("summary", "results")
    raw = value.split(",") if isinstance(value, str) else [p for v in value for p in v.split(",")]
    parts = [p.strip().lower() for p in raw]
    if not parts or any(not p for p in parts):
        raise TypeSelectionError(
            "--type must be a comma-separated list of output types (summary, results, artifacts, logs) or all"
        )
    if "all" in parts:
        if any(p != "all" for p in parts):
            raise TypeSelectionError("--type all cannot be combined with other output types")
        return TYPES
    unknown = sorted({p for p in parts if p not in TYPES})
    if unknown:
        raise TypeSelectionError(f"Unknown --type value(s): {', '.join(unknown)}. Choose from: {', '.join(TYPES)}, all")
    return tuple(dict.fromkeys(parts))


def partial_name(name: str, size: int, token: str | None) -> str:
    """The temporary sibling a file streams into: `.<stem>.<key>.partial`.

    The key is derived from what the manifest says about the file (its size and token), so a
    re-run after a crash finds and resumes the same partial, and a file whose manifest entry
    changed starts over instead of being stitched from two different versions. The stem is
    the file's name, cut short (`_stem`) when the partial's name would not fit NAME_MAX.
    No manifest file can have such a name (RESERVED), so cleaning partials up never removes one.
    """
    key = hashlib.sha256(f"{size}\x1f{token or ''}".encode()).hexdigest()[:_KEY]
    return f".{_stem(name)}.{key}{PARTIAL_SUFFIX}"


def _stem(name: str) -> str:
    """`name`, or when `.<name>.<key>.partial` would be longer than NAME_MAX bytes, its start
    (whole characters) and `~` and 8 hex digits of its hash. Only a file named exactly like
    another's shortened stem (that long, with that hash) shares its partials: in one run, and
    only its partials, never a landed file."""
    room = NAME_MAX - len(f"..{'0' * _KEY}{PARTIAL_SUFFIX}")
    if len(name.encode()) <= room:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    head = name.encode()[: room - len(digest) - 1].decode(errors="ignore")
    return f"{head}~{digest}"


@functools.lru_cache(maxsize=256)
def partial_pattern(name: str) -> re.Pattern[str]:
    """Matches the partial-file names of every version of the file `name`."""
    return re.compile(rf"^\.{re.escape(_stem(name))}\.[0-9a-f]{{{_KEY}}}{re.escape(PARTIAL_SUFFIX)}$")


@dataclass(frozen=True)
class Accepted:
    path: str  # as the manifest wrote it
    type: str
    size: int
    token: str | None
    target: Path  # run folder / segments

    @functools.cached_property
    def folder(self) -> Path:
        return self.target.parent

    @functools.cached_property
    def partial_file(self) -> str:
        """The partial's name in `folder` (`partial_name`)."""
        return partial_name(self.target.name, self.size, self.token)

    @functools.cached_property
    def partial(self) -> Path:
        return self.folder / self.partial_file


@dataclass(frozen=True)
class Refused:
    path: str
    reason: str


def layout_problem(path: str) -> str | None:
    """Why a path can never be written, whatever was requested; None when it fits the layout."""
    if not path:
        return f"{OUTSIDE_LAYOUT} (empty path)."
    if path.startswith("/"):
        return f"{OUTSIDE_LAYOUT} (absolute path)."
    if "\\" in path:
        return f"{OUTSIDE_LAYOUT} (backslash in path)."
    if _CONTROL.search(path):
        return f"{OUTSIDE_LAYOUT} (control character in path)."
    segments = path.split("/")
    if any(s in ("", ".", "..") for s in segments):
        return f"{OUTSIDE_LAYOUT} (empty, '.' or '..' segment)."
    if any(is_git_folder_name(s) for s in segments):
        return f"{OUTSIDE_LAYOUT} ('.git' segment, which git would read as a repository's own folder)."
    if category(path) is None:
        return f"{OUTSIDE_LAYOUT}."
    return None


def through_symlink(run_dir: Path, segments: Sequence[str], seen: dict[str, bool | None] | None = None) -> bool:
    """True when joining `segments` onto `run_dir` passes through a symlink, wherever it leads.

    Only what is on disk now can redirect a write; components that do not exist yet will be
    created by us as plain folders, so they are never links. `seen` carries what was learnt
    about each prefix across calls (True: a link; False: missing, so nothing below can be one;
    None: exists and is not a link), so a manifest costs one lstat per distinct folder.
    """
    memo: dict[str, bool | None] = {} if seen is None else seen
    current = os.fspath(run_dir)
    for segment in segments:
        current = os.path.join(current, segment)  # noqa: PTH118 - str keys: cheaper than Path objects, per file
        verdict = memo[current] if current in memo else memo.setdefault(current, _prefix_verdict(current))
        if verdict is not None:
            return verdict
    return False


def _prefix_verdict(current: str) -> bool | None:
    try:
        mode = os.lstat(current).st_mode
    except OSError:
        return False  # missing: we create the rest as plain folders
    return True if stat.S_ISLNK(mode) else None


def screen(
    files: Iterable[tuple[str, int, str | None]],
    types: Sequence[str],
    run_dir: Path,
) -> tuple[list[Accepted], list[Refused]]:
    """Split manifest files (path, size, token) into those we may write and those we refuse."""
    entries = list(files)
    wanted = set(types)
    counts: dict[str, int] = {}
    folded: dict[str, set[str]] = {}
    for path, _size, _token in entries:
        counts[path] = counts.get(path, 0) + 1
        folded.setdefault(fold(path), set()).add(path)
    problems = {p: layout_problem(p) for p in counts}
    valid = {p for p, problem in problems.items() if problem is None}
    folders = {fold("/".join(p.split("/")[:i])) for p in valid for i in range(1, p.count("/") + 1)}

    accepted: list[Accepted] = []
    refused: list[Refused] = []
    seen: dict[str, bool | None] = {}
    for path, size, token in entries:
        reason = problems[path]
        kind = category(path) if reason is None else None
        if reason is None and kind not in wanted:
            reason = f"{NOT_REQUESTED} ({kind} was not requested)."
        if reason is None and counts[path] > 1:
            reason = f"{DUPLICATE}."
        if reason is None and len(folded[fold(path)]) > 1:
            reason = f"{DUPLICATE} (another path differs from it only in letter case or Unicode form)."
        if reason is None and fold(path) in folders:
            reason = f"{DUPLICATE} (another manifest path needs this name)."
        segments = path.split("/")
        if reason is None and _PARTIAL_SHAPE.match(segments[-1]):
            reason = f"{RESERVED}."
        if reason is None and through_symlink(run_dir, segments, seen):
            reason = f"{SYMLINK}."
        if reason is not None:
            refused.append(Refused(path=path, reason=reason))
            continue
        assert kind is not None
        accepted.append(Accepted(path=path, type=kind, size=size, token=token, target=run_dir.joinpath(*segments)))
    return accepted, refused


def inside(run_dir: Path, target: Path) -> bool:
    """True when the target's folder resolves inside the run folder (or is it); False when a
    symlink loop keeps it from resolving (Python before 3.13 raises RuntimeError for one; later
    ones resolve what they can, and opening through the loop fails instead). Other errors of
    the file system are raised."""
    try:
        root = run_dir.resolve()
        parent = target.parent.resolve()
    except RuntimeError:
        return False
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return False
        raise
    return parent == root or root in parent.parents


def regular_size(path: Path | str, *, dir_fd: int | None = None) -> int | None:
    """The size of a regular file (not following a final symlink; relative to `dir_fd` when
    given), else None."""
    try:
        st = os.stat(path, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None
