"""Where the repository is, what reconciler.toml says, and what the environment overrides."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from .errors import ConfigError
from .safe_paths import is_git_folder_name, overlaps, write_refusal
from .specs.board_paths import reserved_paths
from .specs.loader import LoadResult, load_settings, load_specs
from .specs.models import SETTINGS_FILE, ProjectSettings

LOCAL_PLATFORM = "local"


class OwnPlace(NamedTuple):
    """Where a path named to write at meets the project's own files."""

    rel: str  # the path, relative to the repository root
    room: str  # the project's place it overlaps (the specs folder, .git, ...)
    what: str  # that place, in words


@dataclass(frozen=True)
class Project:
    root: Path
    settings: ProjectSettings
    settings_path: Path | None

    @property
    def specs_path(self) -> Path:
        return self.root / self.settings.specs_dir

    def load_specs(self, files: Iterable[Path]) -> LoadResult:
        """`files` loaded with every check that needs this project: where each leaderboard would
        be written, by the settings and by the work tree as it is (safe_paths.write_refusal)."""
        return load_specs(
            files,
            self.root,
            self.settings.specs_dir,
            settings=self.settings,
            refusal=functools.partial(write_refusal, self.root),
        )

    def own_place(self, path: Path) -> OwnPlace | None:
        """Where `path` is, lies in or holds one of this project's own places: reconciler.toml, the
        specs, the state file, the outputs, the templates, reconciler's folder (the rooms no
        leaderboard may take either) or a .git folder, this repository's or any other (the project
        may lie below the repository's top, beside its .git). Otherwise None outside the project:
        a place the user chose. The one rule for a path named on the command line to write at
        (`plan --out`, `download --output`)."""
        try:
            resolved = path.resolve()
        except (OSError, RuntimeError):
            return None
        parts = resolved.parts
        git = next((i for i, part in enumerate(parts) if is_git_folder_name(part)), None)
        try:
            rel: str | None = resolved.relative_to(self.root.resolve()).as_posix()
        except ValueError:
            rel = None
        if git is not None:  # hooks and config there run code on the next git command
            room = Path(*parts[: git + 1])
            shown = room.relative_to(self.root.resolve()).as_posix() if rel is not None else str(room)
            return OwnPlace(rel or str(path), shown, "git's folder")
        if rel is None:
            return None
        return next(
            (
                OwnPlace(rel, room, what)
                for room, what in reserved_paths(self.settings)
                if overlaps(rel, room) and (self._within(rel, room) or os.path.lexists(self.root / room))
            ),
            None,
        )

    @staticmethod
    def _within(rel: str, room: str) -> bool:
        """`rel` is the room or lies in it (overlaps() says so too of a folder that holds it: that
        one counts only when the room is there, so `-o .` in a folder that is no project is fine)."""
        return len(PurePosixPath(rel).parts) >= len([p for p in PurePosixPath(room).parts if p != "."])

    def existing_specs_path(self) -> Path:
        """The specs dir, or a ConfigError that says how to get one.

        Without this check a missing folder surfaces as a diagnostic on a file named
        `specs`, which tells a new user nothing about reconciler.toml or `init`.
        """
        path = self.specs_path
        if path.is_dir() or path.is_symlink():  # a looping or dangling link: the loader names what is wrong
            return path
        if self.settings_path is None:
            raise ConfigError(
                f"no {SETTINGS_FILE} in {self.root} or any parent directory, and no {self.settings.specs_dir}/ folder",
                hint=f"run `reconciler init` to create {SETTINGS_FILE} and example specs here, "
                "or run reconciler inside a repository that has one",
            )
        raise ConfigError(
            f"the specs folder {self.settings.specs_dir}/ named by {SETTINGS_FILE} does not exist in {self.root}",
            hint=f"create it, or set specs_dir in {SETTINGS_FILE} to the folder holding your specs",
        )


def find_root(start: Path) -> Path:
    """The nearest directory holding reconciler.toml, else the git worktree top, else `start`."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        marker = candidate / SETTINGS_FILE
        if marker.is_file() or marker.exists() or marker.is_symlink():  # what it is, load_project says
            return candidate
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def load_project(start: Path | None = None) -> Project:
    root = find_root(start or Path.cwd())
    path = root / SETTINGS_FILE
    if not path.exists() and not path.is_symlink():
        return Project(root, ProjectSettings(), None)
    if not path.is_file():
        # a folder, a FIFO or a dangling link where the settings belong: never silently the defaults
        raise ConfigError(
            f"{SETTINGS_FILE} in {root} is not a regular file",
            hint=f"make {SETTINGS_FILE} a file (its settings), or remove it to use the defaults",
        )
    settings, diags = load_settings(path, SETTINGS_FILE)
    if settings is None:
        details = "\n".join(d.render() for d in diags)
        raise ConfigError(f"{SETTINGS_FILE} is invalid:\n{details}")
    return Project(root, settings, path)


def resolve_platform(project: Project, flag: str | None) -> str:
    """Flag > OSMOSIS_PLATFORM_URL > reconciler.toml. In CI there is no silent default."""
    for value in (flag, os.environ.get("OSMOSIS_PLATFORM_URL"), project.settings.platform):
        if value and value.strip():
            return value.strip()
    if os.environ.get("CI", "").lower() in {"1", "true", "yes"}:
        raise ConfigError(
            "no platform configured",
            hint=f'set platform in {SETTINGS_FILE} ("local" or a URL), OSMOSIS_PLATFORM_URL, or pass --platform',
        )
    return LOCAL_PLATFORM


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes"}


@dataclass(frozen=True)
class Owner:
    """The owner written into this repository's ownership markers (`resolve_owner`)."""

    name: str
    # the workspace name, which every repository of the workspace with no GitHub origin and no
    # `owner` writes too: a run marked with it may be another repository's, so none is stopped
    shared: bool = False


def resolve_owner(project: Project, *, origin: str | None, workspace: str | None, platform: str) -> Owner:
    """Whose runs these are: the one rule, written into every run's ownership marker.

    `owner` in reconciler.toml, else the repository's GitHub identity (`origin`, or under
    GitHub Actions the repository the workflow runs for), else, outside CI, the workspace
    name (a local repository with no GitHub origin). The workspace never wins over the
    repository identity: two repositories sharing a workspace must not own each other's runs.
    The workspace name as owner is `shared` on a platform other repositories can reach (not
    `platform = "local"`, whose database is this repository's own).
    """
    configured = (project.settings.owner or "").strip()
    if configured:
        return Owner(configured)
    if origin:
        return Owner(origin)
    if _truthy("GITHUB_ACTIONS") and os.environ.get("GITHUB_REPOSITORY", "").strip():
        return Owner(os.environ["GITHUB_REPOSITORY"].strip().lower())
    if _truthy("CI"):
        raise ConfigError(
            "cannot tell whose runs these are: the repository has no GitHub origin",
            hint=f'set owner = "<org>/<repo>" in {SETTINGS_FILE}, or run in a checkout whose origin is on github.com',
        )
    return Owner((workspace or "").strip() or LOCAL_PLATFORM, shared=platform != LOCAL_PLATFORM)
