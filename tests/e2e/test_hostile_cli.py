"""Bad input to the real command gives a clear error naming what is wrong, never "internal error".

Each case runs `python -m reconciler.cli` in a child process, as a user or CI would.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.errors import ExitCode
from tests.e2e.remote_race import clone_behind_origin

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "tests" / "corpus" / "good" / "official-smoke.toml"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "GITHUB_", "RECONCILER_"))}
    # the timeout only keeps a regression from hanging the suite
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def make_repo(root: Path) -> Path:
    (root / "specs" / "runs").mkdir(parents=True)
    shutil.copyfile(SPEC, root / "specs" / "runs" / "smoke.toml")
    (root / "reconciler.toml").write_text('platform = "local"\nspecs_dir = "specs"\n')
    (root / ".gitignore").write_text(".osmosis/\n.reconciler/lock\n")
    (root / "NOTES.md").write_text("notes\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "specs")
    return root


def assert_clean_failure(done: subprocess.CompletedProcess[str], code: int, *fragments: str) -> None:
    assert done.returncode == code, done.stdout + done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    for fragment in fragments:
        assert fragment in done.stderr, done.stderr


def test_a_state_file_nested_100k_deep_is_named_with_the_way_out(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / ".reconciler").mkdir()
    (root / ".reconciler" / "state.json").write_text("[" * 100_000 + "]" * 100_000)
    done = cli(root, "plan")
    assert_clean_failure(done, 1, ".reconciler/state.json is unreadable: nested too deeply to read", "hint: delete it")


def test_a_state_file_that_is_a_fifo_is_named_instead_of_read(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / ".reconciler").mkdir()
    os.mkfifo(root / ".reconciler" / "state.json")
    done = cli(root, "plan")
    assert_clean_failure(done, 1, ".reconciler/state.json is not a regular file", "hint: delete it")


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        yield sock.getsockname()[1]


def test_platform_serve_on_a_busy_port_says_so_and_how_to_pick_another(tmp_path: Path, busy_port: int) -> None:
    done = cli(tmp_path, "platform", "serve", "--port", str(busy_port), "--db", str(tmp_path / "p.sqlite3"))
    assert_clean_failure(done, 1, f"port {busy_port} on 127.0.0.1 is already in use", "--port (0 picks a free one)")
    assert not (tmp_path / "p.sqlite3").exists()


def test_platform_serve_on_a_host_that_is_no_address_names_the_host(tmp_path: Path) -> None:
    done = cli(tmp_path, "platform", "serve", "--host", "bad..host", "--port", "0", "--db", str(tmp_path / "p.db"))
    assert_clean_failure(done, 1, "--host 'bad..host' is not an address to listen on", "use 127.0.0.1")
    assert not (tmp_path / "p.db").exists()


def test_platform_serve_refuses_a_db_that_is_not_sqlite_and_leaves_it_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "notes.txt"
    db.write_text("my notes, not a database\n")
    done = cli(tmp_path, "platform", "serve", "--port", "0", "--db", str(db))
    assert_clean_failure(done, 1, f"--db {db} is not a database the local platform can use")
    assert db.read_text() == "my notes, not a database\n"


@pytest.mark.parametrize("command", ["apply", "reconcile"])
@pytest.mark.parametrize("value", ["nan", "inf", "-1", "soon"])
def test_lock_timeout_must_be_a_finite_number_of_seconds(tmp_path: Path, command: str, value: str) -> None:
    done = cli(tmp_path, command, f"--lock-timeout={value}")
    assert_clean_failure(done, ExitCode.USAGE, "Invalid value for '--lock-timeout'", repr(value))


def test_a_push_rejected_while_the_tree_has_edits_keeps_them_and_says_what_to_do(tmp_path: Path) -> None:
    remote, ours = clone_behind_origin(make_repo(tmp_path / "seed"), tmp_path, their_subject="theirs")
    (ours / "NOTES.md").write_text("my edit, not committed\n")

    done = cli(ours, "reconcile", "--commit", "--push")

    assert_clean_failure(
        done,
        1,
        "push to origin/main was rejected",
        "uncommitted changes in NOTES.md",
        "hint: commit or stash them (`git stash`), then run `git pull --rebase origin main` and `git push`",
    )
    assert (ours / "NOTES.md").read_text() == "my edit, not committed\n"
    assert git(ours, "log", "-1", "--format=%s").startswith("reconciler:")
    assert git(remote, "log", "-1", "--format=%s", "main") == "theirs"


def test_a_model_name_with_bidi_overrides_reaches_the_leaderboards_as_escapes(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "specs" / "runs").mkdir(parents=True)
    (root / "specs" / "benchmarks").mkdir()
    spec = SPEC.read_text().replace(
        'model = "openai/gpt-5.2"', 'model = "openai/gpt\\u202e2.5-tpg\\u202c\\u2066x\\u2069"'
    )
    spec = spec.replace('[tasks]\ntask_names = ["terminal-bench/git-multibranch"]\n', "")  # the board needs every task
    (root / "specs" / "runs" / "bidi.toml").write_text(
        spec.replace("max_concurrent_attempts = 1", "max_concurrent_attempts = 100")
    )
    (root / "specs" / "benchmarks" / "tb.toml").write_text(
        '[benchmark]\nref = "terminal-bench-2-1"\n\n[leaderboard]\noutput = "leaderboards/tb.md"\nchart = "leaderboards/tb.svg"\n'
    )
    (root / "reconciler.toml").write_text('platform = "local"\nspecs_dir = "specs"\n')
    git(root.parent, "init", "-q", str(root))

    done = cli(root, "reconcile", "--wait")

    assert done.returncode == 0, done.stdout + done.stderr
    markdown = (root / "leaderboards" / "tb.md").read_text()
    svg = (root / "leaderboards" / "tb.svg").read_text()
    for text in (markdown, svg):
        assert not any(c in text for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
    assert "gpt\\u202e2.5-tpg\\u202c\\u2066x\\u2069" in markdown
    assert "gpt\\u202e2.5-tpg\\u202c\\u2066x\\u2069" in svg


@pytest.mark.parametrize(
    ("out", "says"),
    [
        ("", "--out . is a folder"),
        ("NOTES.md/plan.json", "cannot save the plan to NOTES.md/plan.json"),
        ("reconciler.toml", "is one of this project's own files (reconciler.toml)"),
        ("specs/runs/plan.toml", "is one of this project's own files (specs/runs/plan.toml)"),
        (".reconciler/state.json", "is one of this project's own files (.reconciler/state.json)"),
        (".git/plan.json", "is one of this project's own files (.git/plan.json), in git's folder"),
        (
            "vendor/lib/.git/plan.json",
            "is one of this project's own files (vendor/lib/.git/plan.json), in git's folder",
        ),
    ],
)
def test_plan_out_never_writes_over_the_projects_own_files_or_fails_inside(tmp_path: Path, out: str, says: str) -> None:
    root = make_repo(tmp_path / "repo")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    done = cli(root, "plan", "--out", out)
    assert_clean_failure(done, ExitCode.USAGE, says)
    assert {p: p.read_bytes() for p in before} == before


def test_plan_out_never_writes_into_the_git_folder_above_a_project_in_a_subfolder(tmp_path: Path) -> None:
    mono = tmp_path / "mono"
    project = make_repo(mono / "evals")  # its own .git, then moved up: the project lies below the top
    (project / ".git").rename(mono / ".git")
    config = (mono / ".git/config").read_bytes()
    done = cli(project, "plan", "--out", "../.git/config")
    assert_clean_failure(done, ExitCode.USAGE, "in git's folder")
    assert (mono / ".git/config").read_bytes() == config


def test_plan_out_never_replaces_a_fifo(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    os.mkfifo(tmp_path / "pipe")
    done = cli(root, "plan", "--out", str(tmp_path / "pipe"))
    assert_clean_failure(done, ExitCode.USAGE, f"--out {tmp_path / 'pipe'} is not a regular file")
    assert stat.S_ISFIFO((tmp_path / "pipe").lstat().st_mode)


def test_plan_out_never_replaces_a_symlink_nor_writes_through_it(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (tmp_path / "kept.txt").write_text("kept\n")
    (tmp_path / "link.json").symlink_to(tmp_path / "kept.txt")
    done = cli(root, "plan", "--out", str(tmp_path / "link.json"))
    assert_clean_failure(done, ExitCode.USAGE, f"--out {tmp_path / 'link.json'} is a symlink")
    assert (tmp_path / "link.json").readlink() == tmp_path / "kept.txt"
    assert (tmp_path / "kept.txt").read_text() == "kept\n"


def test_plan_out_replaces_a_regular_file(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (tmp_path / "plan.json").write_text("an older plan\n")
    done = cli(root, "plan", "--out", str(tmp_path / "plan.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"plan_file_version": 1' in (tmp_path / "plan.json").read_text()


def test_apply_of_a_plan_file_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    os.mkfifo(root / "plan.json")
    assert_clean_failure(cli(root, "apply", "plan.json", "--auto-approve"), ExitCode.USAGE, "not a regular file")


@pytest.mark.parametrize("command", [("wait", "--interval", "inf"), ("logs", "x", "-f", "--interval", "nan")])
def test_a_poll_interval_that_never_ends_or_never_waits_is_refused(tmp_path: Path, command: tuple[str, ...]) -> None:
    done = cli(make_repo(tmp_path / "repo"), *command)
    assert done.returncode == ExitCode.USAGE and "--interval" in done.stderr


def test_an_empty_run_name_is_a_run_that_is_not_there(tmp_path: Path) -> None:
    done = cli(make_repo(tmp_path / "repo"), "download", "")
    assert done.returncode == 1 and "Benchmark run not found: the name is empty" in done.stdout
    assert "HTTP 307" not in done.stdout + done.stderr


@pytest.mark.parametrize("field", ["author_name", "author_email"])
def test_a_commit_author_git_would_refuse_is_named_by_validate(tmp_path: Path, field: str) -> None:
    root = make_repo(tmp_path / "repo")
    with (root / "reconciler.toml").open("a") as toml:
        toml.write(f'[commit]\n{field} = "a\\u0000b"\n')
    done = cli(root, "validate")
    assert done.returncode != 0 and f"commit.{field}" in done.stdout + done.stderr
    assert "internal error" not in done.stderr


def test_a_secret_value_that_is_not_text_is_refused_before_the_platform(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OSMOSIS_", "GITHUB_", "RECONCILER_"))}
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "secrets", "set", "FOO"],
        cwd=root, env=env, input=b"\xff\xfe", capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == ExitCode.USAGE and b"FOO on standard input is not UTF-8 text" in done.stderr


@pytest.mark.parametrize("kind", ["folder", "fifo", "dangling link"])
def test_a_settings_file_that_is_not_a_file_is_refused_not_ignored(tmp_path: Path, kind: str) -> None:
    root = make_repo(tmp_path / "repo")
    toml = root / "reconciler.toml"
    toml.unlink()
    if kind == "folder":
        toml.mkdir()
    elif kind == "fifo":
        os.mkfifo(toml)
    else:
        toml.symlink_to(tmp_path / "missing.toml")
    assert_clean_failure(cli(root, "validate"), 1, "reconciler.toml in", "is not a regular file")


@pytest.mark.parametrize("field", ["workspace", "owner"])
def test_a_workspace_or_owner_of_several_lines_is_named_by_validate(tmp_path: Path, field: str) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "reconciler.toml").write_text(f'platform = "local"\nspecs_dir = "specs"\n{field} = "a\\nb"\n')
    done = cli(root, "validate")
    assert (
        done.returncode != 0 and "reconciler.toml:3" in done.stdout + done.stderr and field in done.stdout + done.stderr
    )


@pytest.mark.parametrize("platform", ["ftp://platform.example", "file:///etc", "ssh://x"])
def test_a_platform_of_another_scheme_is_named_by_validate_at_its_line(tmp_path: Path, platform: str) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "reconciler.toml").write_text(f'specs_dir = "specs"\nplatform = "{platform}"\n')
    done = cli(root, "validate")
    assert_clean_failure(done, 1, "reconciler.toml:2", 'platform: must be "local" or an http(s) URL')
