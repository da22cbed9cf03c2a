"""Where the repository is, what reconciler.toml says, and what the environment overrides."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError
from .specs.loader import load_settings
from .specs.models import ProjectSettings

SETTINGS_FILE = "reconciler.toml"
LOCAL_PLATFORM = "local"


@dataclass(frozen=True)
class Project:
    root: Path
    settings: ProjectSettings
    settings_path: Path | None

    @property
    def specs_path(self) -> Path:
        return self.root / self.settings.specs_dir


def find_root(start: Path) -> Path:
    """The nearest directory holding reconciler.toml, else the git worktree top, else `start`."""
    start = start.resolve()
    for candidate in (start, *start.parents):
        if (candidate / SETTINGS_FILE).is_file():
            return candidate
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return start


def load_project(start: Path | None = None) -> Project:
    root = find_root(start or Path.cwd())
    path = root / SETTINGS_FILE
    if not path.is_file():
        return Project(root, ProjectSettings(), None)
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
