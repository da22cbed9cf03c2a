"""The GitHub owner/repo identity of a repository's origin (the X-Osmosis-Git scope)."""

from __future__ import annotations

import shutil
import subprocess
from functools import partial
from pathlib import Path

import pytest

from reconciler.vcs import origin
from reconciler.vcs.origin import github_identity, parse_github_remote, ssh_hostname


@pytest.mark.parametrize(
    ("url", "identity"),
    [
        ("https://github.com/acme/evals", "acme/evals"),
        ("https://github.com/Acme/Evals.git", "acme/evals"),
        ("https://github.com/acme/evals.git/", "acme/evals"),
        ("https://x-access-token:abc@github.com/acme/evals.git", "acme/evals"),
        ("HTTPS://GitHub.com/acme/evals", "acme/evals"),
        ("git@github.com:acme/evals.git", "acme/evals"),
        ("git@github.com:Acme/my.repo", "acme/my.repo"),
        ("github.com:acme/evals", "acme/evals"),
        ("ssh://git@github.com/acme/evals", "acme/evals"),
        ("ssh://git@github.com:22/acme/evals.git", "acme/evals"),
        ("  https://github.com/acme/evals\n", "acme/evals"),
        ("https://gitlab.com/acme/evals", None),
        ("git@gitlab.com:acme/evals.git", None),
        ("https://github.example.com/acme/evals", None),
        ("https://github.com/acme", None),
        ("https://github.com/acme/evals/tree/main", None),
        ("https://github.com/acme/.git", None),
        ("https://github.com/acme/..", None),
        ("file:///srv/git/acme/evals", None),
        ("/srv/git/evals.git", None),
        ("", None),
    ],
)
def test_parse_github_remote(url: str, identity: str | None) -> None:
    assert parse_github_remote(url) == identity


def test_the_ssh_over_443_host_is_github() -> None:
    assert parse_github_remote("ssh://git@ssh.github.com:443/acme/evals.git") == "acme/evals"


def test_the_www_host_is_github() -> None:
    assert parse_github_remote("https://www.github.com/Acme/Evals") == "acme/evals"


def test_an_ssh_alias_counts_when_its_host_resolves_to_github() -> None:
    aliases = {"github-work": "github.com"}
    assert parse_github_remote("git@github-work:acme/evals.git", resolve_host=aliases.get) == "acme/evals"
    assert parse_github_remote("ssh://git@github-work/acme/evals", resolve_host=aliases.get) == "acme/evals"


def test_an_ssh_alias_is_none_without_a_resolver_or_when_it_resolves_to_nothing() -> None:
    assert parse_github_remote("git@github-work:acme/evals.git") is None
    assert parse_github_remote("git@github-work:acme/evals.git", resolve_host=lambda host: None) is None


def test_a_gitlab_host_is_github_only_if_ssh_says_so() -> None:
    asked: list[str] = []

    def resolve(host: str) -> str | None:
        asked.append(host)
        return host

    assert parse_github_remote("git@gitlab.com:acme/evals.git", resolve_host=resolve) is None
    assert parse_github_remote("https://gitlab.com/acme/evals", resolve_host=resolve) is None  # https: ssh not asked
    assert asked == ["gitlab.com"]
    assert parse_github_remote("git@gitlab.com:acme/evals.git", resolve_host=lambda host: "github.com") == "acme/evals"


def test_a_github_host_is_never_resolved() -> None:
    def resolve(host: str) -> str | None:
        raise AssertionError(f"resolved {host}")

    assert parse_github_remote("git@github.com:acme/evals.git", resolve_host=resolve) == "acme/evals"


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no ssh executable")
def test_ssh_hostname_reads_an_alias_from_the_ssh_config(tmp_path: Path) -> None:
    # ssh finds ~/.ssh/config through the password database, not $HOME, so the test names the file with -F
    config = tmp_path / "ssh_config"
    config.write_text("Host github-work\n  HostName github.com\n")
    resolve = partial(ssh_hostname, config_file=config)
    assert resolve("github-work") == "github.com"
    assert parse_github_remote("git@github-work:acme/evals.git", resolve_host=resolve) == "acme/evals"


def test_ssh_hostname_never_passes_an_option_to_ssh() -> None:
    assert ssh_hostname("-oProxyCommand=touch pwned") is None


def test_ssh_hostname_is_none_without_an_ssh_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert ssh_hostname("github-work") is None


def test_ssh_hostname_is_none_when_ssh_hangs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ssh").write_text("#!/bin/sh\nexec sleep 10\n")
    (tmp_path / "bin" / "ssh").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr(origin, "_SSH_TIMEOUT", 0.2)
    assert ssh_hostname("github-work") is None


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def repo(path: Path, origin: str | None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    if origin is not None:
        git(path, "remote", "add", "origin", origin)
    return path


def test_github_identity_reads_an_https_origin(tmp_path: Path) -> None:
    assert github_identity(repo(tmp_path / "r", "https://github.com/Acme/Evals.git")) == "acme/evals"


def test_github_identity_reads_an_ssh_origin(tmp_path: Path) -> None:
    assert github_identity(repo(tmp_path / "r", "git@github.com:acme/evals.git")) == "acme/evals"


def test_github_identity_resolves_an_ssh_alias_through_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path / "r", "git@github-work:acme/evals.git")
    monkeypatch.setattr(origin, "ssh_hostname", {"github-work": "github.com"}.get)
    assert github_identity(root) == "acme/evals"


def test_github_identity_works_from_a_subdirectory(tmp_path: Path) -> None:
    root = repo(tmp_path / "r", "https://github.com/acme/evals")
    (root / "specs" / "runs").mkdir(parents=True)
    assert github_identity(root / "specs" / "runs") == "acme/evals"


def test_github_identity_ignores_remotes_other_than_origin(tmp_path: Path) -> None:
    root = repo(tmp_path / "r", None)
    git(root, "remote", "add", "upstream", "https://github.com/acme/evals")
    assert github_identity(root) is None


def test_github_identity_is_none_for_an_origin_off_github(tmp_path: Path) -> None:
    assert github_identity(repo(tmp_path / "r", "https://gitlab.com/acme/evals")) is None


def test_github_identity_is_none_outside_a_repository(tmp_path: Path) -> None:
    assert github_identity(tmp_path) is None


def test_github_identity_is_none_for_a_missing_directory(tmp_path: Path) -> None:
    assert github_identity(tmp_path / "nowhere") is None


def test_github_identity_of_a_linked_worktree_is_its_main_repositorys(tmp_path: Path) -> None:
    root = repo(tmp_path / "r", "https://github.com/acme/evals")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first")
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert github_identity(tmp_path / "wt") == "acme/evals"


def test_github_identity_follows_config_includes(tmp_path: Path) -> None:
    root = repo(tmp_path / "r", None)
    (tmp_path / "shared.gitconfig").write_text('[remote "origin"]\n\turl = git@github.com:acme/evals.git\n')
    git(root, "config", "include.path", str(tmp_path / "shared.gitconfig"))
    assert github_identity(root) == "acme/evals"


def test_github_identity_is_none_under_a_git_file_that_names_no_repository(tmp_path: Path) -> None:
    repo(tmp_path / "r", "https://github.com/acme/evals")
    (tmp_path / "r" / "sub").mkdir()
    (tmp_path / "r" / "sub" / ".git").write_text("gitdir: ../nowhere\n")
    assert github_identity(tmp_path / "r" / "sub") is None


def test_github_identity_is_none_without_a_git_executable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = repo(tmp_path / "r", "https://github.com/acme/evals")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    assert github_identity(root) is None


def test_github_identity_is_none_for_a_missing_directory_inside_a_repository(tmp_path: Path) -> None:
    root = repo(tmp_path / "r", "https://github.com/acme/evals")
    assert github_identity(root / "nowhere") is None
