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

import configparser
import re
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
    (not a git repository, no `origin`, an origin that is not on github.com, or no git)."""
    try:
        import git  # GitPython; imported here so that commands without git stay fast
    except ImportError:  # GitPython refuses to import when no git executable is found
        return None
    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return None
    try:
        url = repo.remote("origin").url
    except (ValueError, git.GitError, configparser.Error):  # ValueError: no remote named origin
        return None
    finally:
        repo.close()
    return parse_github_remote(url) if isinstance(url, str) else None
