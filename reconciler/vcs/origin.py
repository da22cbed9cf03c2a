"""The GitHub identity (`owner/repo`) of a repository, from its `origin` remote.

This is the value of the `X-Osmosis-Git` scope header. As in the official client: the host
must be github.com; https and SSH remotes both count; a trailing `.git` is stripped; the path
must have exactly two segments; the result is lowercased.

    https://github.com/Acme/Evals.git        -> acme/evals
    git@github.com:acme/evals.git            -> acme/evals
    ssh://git@github.com/acme/evals          -> acme/evals
    https://gitlab.com/acme/evals            -> None
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>.*)$")  # git@github.com:owner/repo.git
_SEGMENT = re.compile(r"^[A-Za-z0-9_.-]+$")
_SCHEMES = frozenset({"https", "http", "ssh", "git", "git+ssh", "ssh+git"})


def parse_github_remote(url: str) -> str | None:
    """`owner/repo` (lowercase) for a github.com remote URL, else None."""
    text = url.strip()
    if _URL.match(text):
        try:
            parts = urlsplit(text)
            host = parts.hostname
        except ValueError:
            return None
        if parts.scheme.lower() not in _SCHEMES:
            return None
        path = parts.path
    else:
        match = _SCP.match(text)
        if match is None:
            return None
        host, path = match.group("host"), match.group("path")
    if (host or "").lower() != "github.com":
        return None
    path = path.strip("/")
    if path.lower().endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    segments = path.split("/")
    if len(segments) != 2 or not all(_SEGMENT.match(s) and s not in (".", "..") for s in segments):
        return None
    return "/".join(segments).lower()


def github_identity(root: Path) -> str | None:
    """The GitHub identity of the repository holding `root`, or None when there is none
    (not a git repository, no `origin`, an origin that is not on github.com, or no git).

    The URL is read from the repository's own config file (and the files it includes) with
    `git config --file`: git's own parser, without importing GitPython, which cost every plan
    about 40 ms of imports and ran `git version` itself. Reading one file skips git's
    repository ownership check ("dubious ownership"), as GitPython's reader did.
    """
    start = Path(root).absolute()
    config = _repository_config(start) if start.exists() else None
    if config is None:
        return None
    try:
        found = subprocess.run(
            ["git", "config", "--file", str(config), "--includes", "--get", "remote.origin.url"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git executable
        return None
    if found.returncode != 0:  # 1: no origin url; anything else: a config git cannot read
        return None
    return parse_github_remote(found.stdout)


def _repository_config(start: Path) -> Path | None:
    """The `config` file of the repository holding `start`, found as git finds it: the nearest
    `.git` directory, or `.git` file naming one (`gitdir: ...`, for worktrees and submodules),
    at `start` or above; a linked worktree's config is its main repository's (`commondir`)."""
    for directory in (start, *start.parents):
        dotgit = directory / ".git"
        if dotgit.is_file():
            git_dir = _named_git_dir(dotgit)
        elif (dotgit / "HEAD").is_file():
            git_dir = dotgit
        else:
            continue
        if git_dir is None:
            return None  # a .git file that names no repository ends the search, as it does for git
        common = os.environ.get("GIT_COMMON_DIR")
        if common is None:
            try:
                common = (git_dir / "commondir").read_text().rstrip("\r\n")
            except OSError:
                common = "."
        config = git_dir / common / "config"
        return config if config.is_file() else None
    return None


def _named_git_dir(dotgit: Path) -> Path | None:
    try:
        content = dotgit.read_text().rstrip("\r\n")
    except (OSError, UnicodeError):
        return None
    if not content.startswith("gitdir: "):
        return None
    git_dir = dotgit.parent / content[len("gitdir: ") :]
    return git_dir if (git_dir / "HEAD").is_file() else None
