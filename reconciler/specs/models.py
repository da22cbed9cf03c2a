"""Our own tables: `[reconcile]` in run specs, benchmark specs, and `reconciler.toml`."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo, field_validator

from ..safe_paths import overlaps, path_problem
from ..values import Value
from .marker_names import marker_name_problem
from .run_config import RunConfig

OutputType = Literal["summary", "results", "artifacts", "logs", "all"]
ALL_OUTPUT_TYPES: tuple[str, ...] = ("summary", "results", "artifacts", "logs")
SPEC_ID_PATTERN = r"^[a-z0-9][a-z0-9._/-]{0,127}$"
MARKER_ENV_PREFIX = "RECONCILER_"  # reserved: the ownership marker (reconciler.core.identity) lives here


class _Table(Value):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class ReconcileTable(_Table):
    state: Literal["running", "stopped"] = "running"
    on_change: Literal["replace", "queue"] = "replace"
    download: list[OutputType] = Field(default_factory=lambda: list[OutputType](["summary", "results"]))
    protect: bool = False
    id: str | None = Field(default=None, pattern=SPEC_ID_PATTERN)
    # An existing run (name or id) this spec takes over instead of submitting: kept in git, so the
    # run stays this spec's even though its environment carries no ownership marker.
    adopt: str | None = Field(default=None, min_length=1, max_length=256)

    def download_types(self) -> tuple[str, ...]:
        if "all" in self.download:
            return ALL_OUTPUT_TYPES
        return tuple(t for t in ALL_OUTPUT_TYPES if t in self.download)


class RunSpec(_Table):
    """A run spec: the platform config plus how reconciler should keep it."""

    id: str
    path: str
    config: RunConfig
    reconcile: ReconcileTable


class BenchmarkTable(_Table):
    ref: str


class LeaderboardTable(_Table):
    output: str
    rank_by: Literal["pass_at_1", "pass_at_k", "cost_per_task", "time_per_task", "tokens_per_task"] = "pass_at_1"
    scope: Literal["workspace", "repo"] = "workspace"
    chart: str | None = None
    name: str | None = None  # the marker name when rendering into an existing file

    @field_validator("output", "chart")
    @classmethod
    def _inside_the_work_tree(cls, value: str | None) -> str | None:
        return None if value is None else _writable(value)

    @field_validator("name")
    @classmethod
    def _a_marker_can_hold_it(cls, value: str | None) -> str | None:
        problem = None if value is None else marker_name_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class PolicyTable(_Table):
    max_attempts_per_run: int | None = Field(default=None, ge=1)
    require_smoke: bool = False


class BenchmarkDocument(_Table):
    benchmark: BenchmarkTable
    leaderboard: LeaderboardTable | None = None
    policy: PolicyTable = Field(default_factory=PolicyTable)


class BenchmarkSpec(_Table):
    id: str
    path: str
    benchmark: BenchmarkTable
    leaderboard: LeaderboardTable | None
    policy: PolicyTable


class ApplySettings(_Table):
    max_attempts_per_apply: int | None = Field(default=None, ge=1)
    prune: bool = False
    parallelism: int = Field(default=4, ge=1, le=64)


def _one_line(value: str | None) -> str | None:
    """A name sent in a header, written into markers or into a commit: one line of printable text."""
    if value is not None and not value.isprintable():
        raise ValueError("must be one line of printable text (no newline, tab or control character)")
    return value


def _git_identity_part(value: str) -> str:
    """What git takes as an author's name or email: one line, not blank, no < or > (git would drop
    them silently, or refuse the commit after the runs were submitted)."""
    _one_line(value)
    if not value.strip():
        raise ValueError("must not be empty")
    if "<" in value or ">" in value:
        raise ValueError("must not contain < or >")
    return value


class CommitSettings(_Table):
    author_name: Annotated[str, AfterValidator(_git_identity_part)] = "reconciler"
    author_email: Annotated[str, AfterValidator(_git_identity_part)] = "reconciler@users.noreply.github.com"


SETTINGS_FILE = "reconciler.toml"  # the project's settings, at its root


class ProjectSettings(_Table):
    """`reconciler.toml` at the repository root. Secrets never live here."""

    platform: str | None = None
    workspace: Annotated[str | None, AfterValidator(_one_line)] = None
    owner: Annotated[str | None, AfterValidator(_one_line)] = (
        None  # written into each run's ownership marker; default: the GitHub origin
    )
    specs_dir: str = "specs"
    state_file: str = ".reconciler/state.json"
    outputs_dir: str = ".osmosis/benchmarks"
    # the sharded workflow's split: N shards by spec id (default: one per benchmark). Here, not a
    # workflow input: every run of the workflow must split alike, or one run's shard job and
    # another's (each in its own concurrency group) hold the same spec at once and both submit it
    shards: int | None = Field(default=None, ge=1, le=256)
    apply: ApplySettings = Field(default_factory=ApplySettings)
    commit: CommitSettings = Field(default_factory=CommitSettings)

    @field_validator("platform")
    @classmethod
    def _local_or_http(cls, value: str | None) -> str | None:
        # the scheme only: the URL itself is read where the client is made (osmosis.urls), and
        # an `ftp://` typed here is named at its line by validate, not at the first platform call
        scheme, sep, _ = (value or "").strip().partition("://")
        if sep and scheme.lower() not in ("http", "https"):
            raise ValueError('must be "local" or an http(s) URL, such as https://platform.osmosis.ai')
        return value

    @field_validator("specs_dir", "state_file", "outputs_dir")
    @classmethod
    def _inside_the_work_tree(cls, value: str, info: ValidationInfo) -> str:
        value = _writable(value)
        # what reconciler writes never lands among the specs it reads, nor in one another
        for other in ("specs_dir", "state_file"):
            theirs = info.data.get(other)
            if other != info.field_name and isinstance(theirs, str) and overlaps(value, theirs):
                raise ValueError(f"{value!r} overlaps {other} {theirs!r}; keep the two apart")
        return value


def _writable(value: str) -> str:
    problem = path_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def default_spec_id(path: str, specs_root: str) -> str:
    """The path under the specs dir without `.toml`, e.g. `runs/tb-smoke`.

    Worked out on the strings when both are already in the form PurePosixPath prints (the
    loader's paths are: a plan of 1,000 specs spent 16 ms parsing them as paths), else as paths;
    both ways give the same id (tests/unit/test_spec_ids.py)."""
    if not (_plain(path) and _plain(specs_root)):
        return _spec_id_of_paths(path, specs_root)
    rel = path[len(specs_root) + 1 :] if path.startswith(specs_root + "/") else path
    name = rel.rpartition("/")[2]
    dot = name.rfind(".")
    return rel[: len(rel) - len(name) + dot] if 0 < dot < len(name) - 1 else rel


def _plain(path: str) -> bool:
    """A relative path as PurePosixPath prints it: no empty, `.` or trailing parts."""
    return path not in ("", ".") and all(part not in ("", ".") for part in path.split("/"))


def _spec_id_of_paths(path: str, specs_root: str) -> str:
    p = PurePosixPath(path)
    try:
        rel = p.relative_to(PurePosixPath(specs_root))
    except ValueError:
        rel = p
    return str(rel.with_suffix(""))
