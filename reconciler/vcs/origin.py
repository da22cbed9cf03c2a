"""The GitHub identity (`owner/repo`) of a repository, from its `origin` remote.

This is the value of the `X-Osmosis-Git` scope header. The host must be GitHub's: github.com,
www.github.com or ssh.github.com (SSH over port 443), any port; https and SSH remotes both count;
a trailing `.git` is stripped; the path must have exactly two segments; the result is lowercased.
An SSH remote on a host alias counts when the user's SSH configuration points it at GitHub
(`ssh -G`): such a clone is CI's repository, and without its identity its runs got another owner
and were all submitted again.

    https://github.com/Acme/Evals.git              -> acme/evals
    https://www.github.com/acme/evals              -> acme/evals
    git@github.com:acme/evals.git                  -> acme/evals
    ssh://git@ssh.github.com:443/acme/evals.git    -> acme/evals
    git@github-work:acme/evals.git                 -> acme/evals (if ~/.ssh/config says github.com)
    https://gitlab.com/acme/evals                  -> None
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>.*)$")  # git@github.com:owner/repo.git
_SEGMENT = re.compile(r"^[A-Za-z0-9_.-]+$")
_SCHEMES = frozenset({"https", "http", "ssh", "git", "git+ssh", "ssh+git"})
_SSH_SCHEMES = frozenset({"ssh", "git+ssh", "ssh+git"})
_GITHUB_HOSTS = frozenset({"github.com", "www.github.com", "ssh.github.com"})
# A host handed to `ssh -G`: a name, never an option (git refuses hosts starting with "-" too)
_SSH_HOST = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_SSH_TIMEOUT = 5.0


def parse_github_remote(url: str, resolve_host: Callable[[str], str | None] | None = None) -> str | None:
    """`owner/repo` (lowercase) for a GitHub remote URL, else None.

    `resolve_host` maps the host of an SSH remote that is not GitHub's to the host SSH would
    really connect to (`ssh_hostname`); it is asked nothing about https remotes, which SSH's
    configuration does not touch, nor about GitHub's own hosts. Without it this is pure.
    """
    text = url.strip()
    if _URL.match(text):
        try:
            parts = urlsplit(text)
            host = parts.hostname
        except ValueError:
            return None
        scheme = parts.scheme.lower()
        if scheme not in _SCHEMES:
            return None
        is_ssh = scheme in _SSH_SCHEMES
        path = parts.path
    else:
        match = _SCP.match(text)
        if match is None:
            return None
        host, path = match.group("host"), match.group("path")
        is_ssh = True
    if not host:
        return None
    resolved = resolve_host(host) if is_ssh and resolve_host is not None and not _is_github_host(host) else host
    if not _is_github_host(resolved):
        return None
    path = path.strip("/")
    if path.lower().endswith(".git"):
        path = path[: -len(".git")].rstrip("/")
    segments = path.split("/")
    if len(segments) != 2 or not all(_SEGMENT.match(s) and s not in (".", "..") for s in segments):
        return None
    return "/".join(segments).lower()


def _is_github_host(host: str | None) -> bool:
    return (host or "").lower() in _GITHUB_HOSTS


def ssh_hostname(host: str, config_file: Path | None = None) -> str | None:
    """The host SSH connects to for `host` after the user's SSH configuration (`HostName`),
    from `ssh -G`, which evaluates the configuration and connects nowhere (though a `Match exec`
    line runs its command, and `CanonicalizeHostname` asks DNS: hence the bound). None if ssh is
    missing, fails or takes over 5 s. `config_file` (`ssh -F`) replaces ~/.ssh/config,
    for tests: ssh finds ~ from the password database, not $HOME."""
    if not _SSH_HOST.match(host):
        return None
    command = ["ssh", *(["-F", str(config_file)] if config_file is not None else []), "-G", "--", host]
    try:
        found = subprocess.run(
            command, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=_SSH_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if found.returncode != 0:
        return None
    for line in found.stdout.splitlines():
        key, _, value = line.partition(" ")
        if key.lower() == "hostname":
            return value.strip() or None
    return None


def github_identity(root: Path) -> str | None:
    """The GitHub identity of the repository holding `root`, or None when there is none
    (not a git repository, no `origin`, an origin that is not on GitHub, or no git). An SSH
    origin on another host is looked up in the user's SSH configuration (`ssh_hostname`).

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
    return parse_github_remote(found.stdout, resolve_host=ssh_hostname)


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
