"""Files -> validated specs, or diagnostics that point at the line of the offending key."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import tomli  # its compiled build parses specs 2.5-3x faster than the standard library's copy (tomllib)
from pydantic import BaseModel, ValidationError

from ..files import NotRegularFile, TooLarge, read_regular
from ..safe_paths import fold
from . import rules
from .board_paths import board_path_problems, board_write_problems
from .diagnostics import Diagnostic, KeyPath, Severity, dotted
from .errors_text import describe_error
from .models import (
    MARKER_ENV_PREFIX,
    BenchmarkDocument,
    BenchmarkSpec,
    ProjectSettings,
    ReconcileTable,
    RunSpec,
    default_spec_id,
)
from .run_config import RunConfig
from .spec_ids import spec_id_problem, spec_id_warning
from .toml_bounds import MAX_SPEC_BYTES, check_depth
from .toml_positions import Position, key_on_line, key_positions, locate

M = TypeVar("M", bound=BaseModel)
_LONG_NUMBER = re.compile(r"[0-9A-Fa-f_]{1000,}")  # far past any number a spec holds
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_TWICE = re.compile(r"Cannot (?:declare|overwrite a value|mutate immutable namespace)(?: \((.*)\))?")
_TOML_EOF = re.compile(r"\s*\(at end of document\)\s*$")


@dataclass
class Document:
    """A parsed TOML file that can tell where each key was written.

    Positions are scanned only when a diagnostic needs one: a clean spec never pays for it.
    """

    path: str
    data: dict[str, Any]
    text: str
    _positions: dict[KeyPath, Position] | None = None

    @property
    def positions(self) -> dict[KeyPath, Position]:
        if self._positions is None:
            self._positions = key_positions(self.text)
        return self._positions

    def at(self, key: KeyPath, code: str, message: str, **kw: Any) -> Diagnostic:
        line, col = locate(self.positions, key)
        return Diagnostic(file=self.path, line=line, col=col, key=dotted(key), message=message, code=code, **kw)


@dataclass
class LoadResult:
    run_specs: list[RunSpec] = field(default_factory=list)
    benchmark_specs: list[BenchmarkSpec] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: int = 0

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]


def _file_error(path: str, code: str, message: str, line: int = 1, col: int = 1) -> Diagnostic:
    return Diagnostic(file=path, line=line, col=col, key="(file)", message=message, code=code)


def read_document(path: Path, display: str) -> Document | Diagnostic:
    """Read and parse one TOML file; any failure is a diagnostic, never an exception.

    Only regular files are opened (a FIFO would block forever, a device could be endless), at
    most MAX_SPEC_BYTES are read, and the depth of keys and values is bounded before parsing.
    """
    raw = _read_regular(path, display)
    if isinstance(raw, Diagnostic):
        return raw
    return parse_document(raw, display)


def parse_document(raw: bytes, display: str) -> Document | Diagnostic:
    """Parse a spec file's bytes, wherever they came from (a file, a git revision): the one rule
    for what is text, how deep it may nest and what is TOML; any failure is a diagnostic."""
    if b"\x00" in raw:
        return _file_error(display, "NOT_TEXT", "is a binary file, not TOML text")
    if raw.startswith(b"\xef\xbb\xbf"):  # what some Windows editors put first
        return _file_error(
            display,
            "NOT_UTF8",
            "starts with a byte-order mark, which TOML does not allow: save it as UTF-8 without BOM",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return _file_error(display, "NOT_UTF8", "is not UTF-8 text", line, col)
    too_deep = check_depth(text)
    if too_deep is not None:
        return _file_error(display, "TOO_DEEP", too_deep.message, too_deep.line, too_deep.col)
    try:
        data = tomli.loads(text)
    except tomli.TOMLDecodeError as exc:
        return _toml_error(display, text, exc)
    except ValueError:  # an integer literal longer than Python converts (sys.get_int_max_str_digits)
        found = _LONG_NUMBER.search(text)
        line = text.count("\n", 0, found.start()) + 1 if found else 1
        col = found.start() - (text.rfind("\n", 0, found.start()) + 1) + 1 if found else 1
        return _file_error(display, "TOML_SYNTAX", "invalid TOML: a number with thousands of digits", line, col)
    return Document(display, data, text)


def _toml_error(display: str, text: str, exc: tomli.TOMLDecodeError) -> Diagnostic:
    message = str(exc)
    match = _TOML_POSITION.search(message)
    line, col = (int(match.group(1)), int(match.group(2))) if match else (text.count("\n") + 1, 1)
    if not match and _TOML_EOF.search(message):
        message = _TOML_EOF.sub("", message) + " at end of file"
    message = _TOML_POSITION.sub("", message)
    declared = _TOML_TWICE.match(message)
    if declared:
        key = ".".join(re.findall(r"'([^']*)'", declared.group(1) or ""))
        found = key_on_line(text, line)
        if found is not None:
            key, (line, col) = dotted(found[0]), found[1]
        return Diagnostic(
            file=display,
            line=line,
            col=col,
            key=key or "(file)",
            code="TOML_DUPLICATE",
            message="is declared twice; merge the two into one table or key",
        )
    return _file_error(display, "TOML_SYNTAX", f"invalid TOML: {message[:1].lower()}{message[1:]}", line, col)


def _read_regular(path: Path, display: str) -> bytes | Diagnostic:
    try:
        info = path.stat()
    except FileNotFoundError:
        return _file_error(display, "NOT_FOUND", "no such file")
    except OSError as exc:
        return _file_error(display, "UNREADABLE", _os_reason(exc))
    if stat.S_ISDIR(info.st_mode):
        return _folder_error(path, display)
    if not stat.S_ISREG(info.st_mode):
        return _file_error(display, "NOT_A_FILE", f"is a {_kind(info.st_mode)}, not a regular file; remove it")
    if info.st_size > MAX_SPEC_BYTES:
        return _too_big(display)
    try:
        return read_regular(path, MAX_SPEC_BYTES)  # swapped for a FIFO since the look above: still refused
    except NotRegularFile:
        return _file_error(display, "NOT_A_FILE", "is not a regular file; remove it")
    except TooLarge:
        return _too_big(display)
    except OSError as exc:
        return _file_error(display, "UNREADABLE", _os_reason(exc))


def _folder_error(path: Path, display: str) -> Diagnostic:
    """A folder among the spec files: one named `*.toml`, or one `discover` could not list."""
    try:
        with os.scandir(path):
            pass
    except OSError as exc:
        # its specs are unknown: a plan without them would call their runs orphans
        denied = exc.errno in (errno.EACCES, errno.EPERM)
        fix = "make it readable (chmod u+rx)" if denied else "fix it"
        return _file_error(
            display,
            "UNREADABLE",
            f"is a folder that cannot be listed ({exc.strerror or exc}), so its specs cannot be read; {fix} or move it out",
        )
    return _file_error(display, "NOT_A_FILE", "is a directory, not a spec file; rename it or move it out")


def _too_big(display: str) -> Diagnostic:
    limit = MAX_SPEC_BYTES // 1024
    return _file_error(display, "TOO_LARGE", f"is larger than {limit} KiB; a spec is a few KiB, split or trim it")


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "cannot be read: a symlink that points back at itself (a loop); fix or remove the link"
    return f"cannot be read: {exc.strerror or exc}"


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def validate_model(doc: Document, model: type[M], data: Any, prefix: KeyPath = ()) -> tuple[M | None, list[Diagnostic]]:
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        out: list[Diagnostic] = []
        seen: set[tuple[str, str]] = set()
        for err in exc.errors():
            path, message, code = describe_error(err, model)
            full = (*prefix, *path)
            key = (dotted(full), message)
            if key in seen:
                continue
            seen.add(key)
            out.append(doc.at(full, code, message))
        return None, out


def load_run_spec(doc: Document, spec_id: str) -> tuple[RunSpec | None, list[Diagnostic]]:
    data = dict(doc.data)
    reconcile_raw = data.pop("reconcile", {})
    config, diags = validate_model(doc, RunConfig, data)
    reconcile, rdiags = validate_model(doc, ReconcileTable, reconcile_raw, ("reconcile",))
    rules_on = config
    pruned: list[KeyPath] = []
    if config is None:
        # Schema errors first; then check the rules on what remains once the bad keys are cut out,
        # so one run of `validate` reports a pasted key next to a typo in another table.
        rules_on, pruned = _validate_pruned(data)
    for finding in rules.check(rules_on) if rules_on is not None else []:
        if any(finding.path[: len(p)] == p for p in pruned):
            continue
        diags.append(doc.at(finding.path, finding.code, finding.message, severity=finding.severity, hint=finding.hint))
    if rules_on is not None:
        diags += _reserved_marker_env(doc, rules_on)
    diags += rdiags
    diags = list(dict.fromkeys(diags))  # a shared [env] key can trip the same rule once per agent
    diags.sort(key=lambda d: (d.line, d.col))
    if config is None or reconcile is None or any(d.severity is Severity.ERROR for d in diags):
        return None, diags
    return RunSpec(id=reconcile.id or spec_id, path=doc.path, config=config, reconcile=reconcile), diags


def _reserved_marker_env(doc: Document, config: RunConfig) -> list[Diagnostic]:
    scopes: list[tuple[KeyPath, dict[str, str]]] = [(("env",), config.env)]
    scopes += [(("agents", i, "env"), a.env) for i, a in enumerate(config.agents)]
    return [
        doc.at(
            (*base, name),
            "ENV_RESERVED",
            f"the prefix {MARKER_ENV_PREFIX} is reserved for reconciler's ownership marker",
        )
        for base, env in scopes
        for name in env
        if name.startswith(MARKER_ENV_PREFIX)
    ]


def _validate_pruned(data: dict[str, Any], rounds: int = 4) -> tuple[RunConfig | None, list[KeyPath]]:
    import copy

    data = copy.deepcopy(data)
    pruned: list[KeyPath] = []
    for _ in range(rounds):
        try:
            return RunConfig.model_validate(data), pruned
        except ValidationError as exc:
            for err in exc.errors():
                path, _msg, code = describe_error(err, RunConfig)
                if code == "MISSING" or not _neutralise(data, path, _PLACEHOLDERS.get(err["type"])):
                    return None, pruned
                pruned.append(path)
    return None, pruned


# A wrongly typed value is swapped for a harmless one of the right type; findings under it are dropped.
_PLACEHOLDERS: dict[str, Any] = {
    "string_type": "PLACEHOLDER",
    "int_type": 1,
    "float_type": 1.0,
    "bool_type": False,
    "list_type": [],
    "dict_type": {},
}


def _neutralise(data: Any, path: KeyPath, placeholder: Any) -> bool:
    node = data
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    last = path[-1] if path else None
    if isinstance(node, dict) and last in node:
        if placeholder is None:
            del node[last]
        else:
            node[last] = placeholder
        return True
    if isinstance(node, list) and isinstance(last, int) and last < len(node) and placeholder is not None:
        node[last] = placeholder
        return True
    return False


def load_benchmark_spec(doc: Document, spec_id: str) -> tuple[BenchmarkSpec | None, list[Diagnostic]]:
    parsed, diags = validate_model(doc, BenchmarkDocument, doc.data)
    if parsed is None:
        return None, diags
    spec = BenchmarkSpec(
        id=spec_id,
        path=doc.path,
        benchmark=parsed.benchmark,
        leaderboard=parsed.leaderboard,
        policy=parsed.policy,
    )
    return spec, diags


def is_benchmark_document(data: dict[str, Any]) -> bool:
    return "benchmark" in data and "experiment" not in data and "agents" not in data


def discover(paths: Sequence[Path]) -> list[Path]:
    """Spec files under `paths`, sorted. A directory ending in .toml is kept so it can be reported,
    and so is a folder that cannot be listed: its specs must not vanish from the plan unseen
    (`apply --prune` would stop their runs), so the loader reports it as an error."""
    found: set[Path] = set()
    for p in paths:
        if p.is_dir() and p.suffix != ".toml":
            found.update(_walk(p))
        else:
            found.add(p)
    return sorted(found)


def _walk(top: Path) -> Iterator[Path]:
    """Every `*.toml` below `top` whose name and folders below `top` are not hidden, and every
    folder it cannot list, found as pathlib's rglob finds them: folders are listed with scandir
    and a symlinked folder is never entered (it may lead back up), a link named `*.toml` is kept
    for the reader to judge. Only names below `top` hide: the repository may live under ~/.cache.

    rglob skips a folder it may not read without a word, and recurses (a thousand nested
    folders exhaust the stack): this walk keeps its own stack and keeps such a folder."""
    pending = [str(top)]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            yield Path(folder)  # read_document names it and why
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
            except OSError:  # its kind cannot be told: the reader names what is wrong with it
                yield Path(entry.path)
                continue
            if entry.name.endswith(".toml"):
                yield Path(entry.path)
            if is_folder:
                pending.append(entry.path)


def _same_id(ids: dict[str, tuple[str, str]], spec_id: str, where: str) -> str | None:
    """Why `spec_id` (of the file at `where`) is an id already used, or None (and it is taken now).

    Ids are compared as file names are on the file systems that compare case-blind and in one
    Unicode form (safe_paths.fold): `runs/Café` and `runs/café` print alike, are one file on
    macOS and Windows, and `--target` could not tell them apart."""
    other = ids.setdefault(fold(spec_id), (where, spec_id))
    if other == (where, spec_id):
        return None
    used_by, as_written = other
    if as_written == spec_id:
        return f"spec id {spec_id!r} is also used by {used_by}"
    return (
        f"spec id {spec_id!r} is also used by {used_by}, as {as_written!r}: some file systems take the two for one"
        " name (they differ only in case, in Unicode form, or by a case folding such as ß and ss)"
    )


def id_in_use(loaded: LoadResult, spec_id: str, where: str) -> str | None:
    """Why a new spec at `where` may not take `spec_id`, or None: the loaded run and benchmark
    specs share one namespace of ids, compared as `load_specs` compares them (`_same_id`)."""
    ids: dict[str, tuple[str, str]] = {}
    taken = [(b.id, b.path) for b in loaded.benchmark_specs] + [(r.id, r.path) for r in loaded.run_specs]
    for used, path in taken:
        _same_id(ids, used, path)
    return _same_id(ids, spec_id, where)


def load_specs(
    files: Iterable[Path],
    root: Path,
    specs_dir: str,
    *,
    settings: ProjectSettings | None = None,
    refusal: Callable[[str], str | None] | None = None,
) -> LoadResult:
    """Load every file; collect all problems across all files (never stop at the first). With the
    project's `settings`, where each leaderboard would be written is checked too (board_paths),
    and with `refusal` (safe_paths.write_refusal on the work tree: this module does no I/O but
    read the files it is given) whether the work tree as it is would take each file."""
    result = LoadResult()
    board_texts: dict[str, Document] = {}
    ids: dict[str, tuple[str, str]] = {}  # run specs: folded id -> (where it is used, the id as written)
    bench_ids: dict[str, tuple[str, str]] = {}  # the same, of benchmark specs
    # the text alone locates a key for the diagnostic below; keeping each parsed document
    # until every file is read would hold its TOML tree beside its model (about 1 MiB per
    # 1,000 specs at the peak of a plan)
    run_texts: dict[str, Document] = {}
    root = root.resolve()
    for path in files:
        result.files += 1
        display = _display(path, root)
        doc = read_document(path, display)
        if isinstance(doc, Diagnostic):
            result.diagnostics.append(doc)
            continue
        spec_id = default_spec_id(display, specs_dir)
        if is_benchmark_document(doc.data):
            bspec, diags = load_benchmark_spec(doc, spec_id)
            result.diagnostics += diags
            if bspec is not None and (bad := _bad_id(doc, bspec.id, (), "rename the file")) is not None:
                result.diagnostics.append(bad)
            elif bspec is not None and (clash := _same_id(bench_ids, bspec.id, display)) is not None:
                result.diagnostics.append(doc.at((), "DUPLICATE_ID", clash))
            elif bspec is not None:
                result.benchmark_specs.append(bspec)
                board_texts[bspec.id] = Document(doc.path, {}, doc.text)
                result.diagnostics += _lookalike(doc, bspec.id, ())
            continue
        spec, diags = load_run_spec(doc, spec_id)
        result.diagnostics += diags
        if spec is None:
            continue
        bad = _bad_id(
            doc, spec.id, ("reconcile", "id") if spec.reconcile.id else (), "rename the file or set [reconcile] id"
        )
        if bad is not None:
            result.diagnostics.append(bad)
            continue
        clash = _same_id(ids, spec.id, display)
        if clash is not None:
            key: KeyPath = ("reconcile", "id") if spec.reconcile.id else ()
            result.diagnostics.append(doc.at(key, "DUPLICATE_ID", f"{clash}; give one a different [reconcile] id"))
            continue
        run_texts[spec.id] = Document(doc.path, {}, doc.text)
        result.run_specs.append(spec)
        result.diagnostics += _lookalike(doc, spec.id, ("reconcile", "id") if spec.reconcile.id else ())
    # one namespace for `--target` and the state file: a run spec may not take a benchmark spec's id
    taken = {fold(b.id): b.path for b in result.benchmark_specs}
    for spec in [s for s in result.run_specs if fold(s.id) in taken]:
        result.run_specs.remove(spec)
        result.diagnostics.append(
            run_texts[spec.id].at(
                ("reconcile", "id"),
                "DUPLICATE_ID",
                f"spec id {spec.id!r} is the id of the benchmark spec {taken[fold(spec.id)]}; give this run spec another [reconcile] id",
            )
        )
    if settings is not None:
        problems = board_path_problems(result.benchmark_specs, settings)
        for problem in problems:
            result.diagnostics.append(
                board_texts[problem.spec_id].at(
                    ("leaderboard", problem.key),
                    "UNSAFE_PATH",
                    f"{problem.path!r} overlaps {problem.what} ({problem.other}); {problem.hint}",
                )
            )
        reported = frozenset((p.spec_id, p.key) for p in problems)
        written = board_write_problems(result.benchmark_specs, refusal, skip=reported) if refusal else []
        for spec_id, board_key, message in written:
            result.diagnostics.append(board_texts[spec_id].at(("leaderboard", board_key), "UNSAFE_PATH", message))
    return result


def _bad_id(doc: Document, spec_id: str, key: KeyPath, fix: str) -> Diagnostic | None:
    """An error at `key` (the file, for an id from its path) when `spec_id` breaks the spec id rules.

    One rule for run and benchmark specs: a run's id becomes its ownership marker (one that cannot
    come back from the platform leaves the run unrecognised, submitted again), and every id is
    printed in plans, reviews and commit subjects, where a newline or a bidi override forges lines."""
    problem = spec_id_problem(spec_id)
    if problem is None:
        return None
    return doc.at(key, "BAD_SPEC_ID", f"spec id {spec_id!r} {problem}; {fix}")


def _lookalike(doc: Document, spec_id: str, key: KeyPath) -> list[Diagnostic]:
    """A warning at `key` (the file, for an id from its path) when the id mixes lookalike scripts."""
    why = spec_id_warning(spec_id)
    if why is None:
        return []
    return [doc.at(key, "LOOKALIKE_ID", f"spec id {spec_id!r} {why}", severity=Severity.WARNING)]


def load_settings(path: Path, display: str) -> tuple[ProjectSettings | None, list[Diagnostic]]:
    doc = read_document(path, display)
    if isinstance(doc, Diagnostic):
        return None, [doc]
    return validate_model(doc, ProjectSettings, doc.data)


def _display(path: Path, root: Path) -> str:
    """The path as users see it: relative to the repository root when inside it."""
    if os.sep == "/":
        # what relative_to gives for a path spelled under the root, without parsing both again
        text, base = str(path), str(root).rstrip("/") + "/"
        if text.startswith(base) and len(text) > len(base):
            return text[len(base) :]
    with contextlib.suppress(ValueError):
        return path.relative_to(root).as_posix()
    # resolved only when the path as given is not under the root (a symlinked checkout, a
    # relative path): resolving costs a system call per path component
    with contextlib.suppress(OSError, RuntimeError, ValueError):  # a symlink loop: reading the file reports it
        return path.resolve().relative_to(root).as_posix()
    return path.as_posix()
