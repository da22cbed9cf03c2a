"""`reconciler reconcile` end to end in temp git repositories on the embedded local platform."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from reconciler.core import scoring
from tests.e2e.remote_race import clone_behind_origin, cloned
from tests.local_cli import cli

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def make_repo(root: Path) -> Path:
    """A copy of this repository's desired state, committed, as a user's clone would have it."""
    root.mkdir(parents=True)
    shutil.copytree(REPO / "specs", root / "specs")
    shutil.copy(REPO / "reconciler.toml", root / "reconciler.toml")
    (root / ".gitignore").write_text(".osmosis/\n.reconciler/lock\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "specs")
    return root


def ranked_rows(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if re.match(r"^\| \d+", line)]


@pytest.fixture(scope="module")
def reconciled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """The README's main job, once: `reconciler reconcile --wait` in a fresh clone."""
    root = make_repo(tmp_path_factory.mktemp("reconciled") / "repo")
    started = time.monotonic()
    done = cli(root, "reconcile", "--wait")
    assert done.returncode == 0, done.stdout + done.stderr
    return root, time.monotonic() - started


def test_reconcile_wait_converges_within_a_minute_and_writes_a_ranked_leaderboard(
    reconciled: tuple[Path, float],
) -> None:
    root, elapsed = reconciled
    assert elapsed < 60
    board = (root / "leaderboards/terminal-bench-2-1.md").read_text()
    assert len(ranked_rows(board)) >= 2
    assert (root / "leaderboards/terminal-bench-2-1.svg").read_text().startswith("<svg")


def test_reconcile_downloads_what_each_spec_asks_for(reconciled: tuple[Path, float]) -> None:
    root, _ = reconciled
    run_dirs = sorted(p for p in (root / ".osmosis/benchmarks").iterdir() if p.name != ".reconciler")
    assert len(run_dirs) == 3
    for run_dir in run_dirs:
        assert {p.name for p in run_dir.iterdir()} == {"summary.csv", "results.csv"}  # the platform's layout only
    ledgers = root / ".osmosis/benchmarks/.reconciler"
    assert sorted(p.name for p in ledgers.iterdir()) == sorted(f"{d.name}.json" for d in run_dirs)


def test_the_leaderboard_recomputed_from_downloaded_results_agrees_with_the_platform(
    reconciled: tuple[Path, float],
) -> None:
    root, _ = reconciled
    platform_board = asyncio.run(leaderboard_of(root, "terminal-bench-2-1"))
    assert len(platform_board) >= 2
    for entry in platform_board:
        results = root / ".osmosis/benchmarks" / entry["run"]["name"] / "results.csv"
        outcomes: dict[str, list[bool]] = {}
        with results.open(newline="") as fh:
            for row in csv.DictReader(fh):
                if (row["harness"], row["model"]) == (entry["harness"], entry["model"]):
                    outcomes.setdefault(row["task_name"], []).append(row["outcome"] == "passed")
        recomputed = scoring.pass_at_1(outcomes)
        assert recomputed.value == pytest.approx(entry["pass_at_1"]["value"])
        assert recomputed.ci_low == pytest.approx(entry["pass_at_1"]["ci_low"])
        assert recomputed.ci_high == pytest.approx(entry["pass_at_1"]["ci_high"])


def test_render_check_passes_when_current_and_fails_when_a_file_would_change(reconciled: tuple[Path, float]) -> None:
    root, _ = reconciled
    assert cli(root, "render", "--check").returncode == 0
    board = root / "leaderboards/terminal-bench-2-1.md"
    original = board.read_text()
    board.write_text(original.replace("Ranked by", "Ranked (by hand) by"))
    try:
        done = cli(root, "render", "--check")
        assert done.returncode == 1 and "would change" in done.stdout
        assert board.read_text() != original  # --check wrote nothing
    finally:
        board.write_text(original)


def test_a_repository_template_overrides_the_packaged_one(reconciled: tuple[Path, float]) -> None:
    root, _ = reconciled
    (root / "templates").mkdir(exist_ok=True)
    (root / "templates/leaderboard.md.j2").write_text("{{ rows | length }} entrants\n")
    try:
        assert cli(root, "render").returncode == 0
        assert (root / "leaderboards/terminal-bench-2-1.md").read_text().endswith("entrants\n")
    finally:
        (root / "templates/leaderboard.md.j2").unlink()
        assert cli(root, "render").returncode == 0


async def leaderboard_of(root: Path, ref: str) -> list[dict[str, Any]]:
    from reconciler.wiring import connect

    async with connect("local", root=root, token=None, workspace=None, git_identity=None) as client:
        detail = await client.get_benchmark(ref)
    return [dict(e) for e in detail.leaderboard]


def test_a_second_reconcile_commit_makes_no_commit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    first = cli(root, "reconcile", "--wait", "--commit")
    assert first.returncode == 0, first.stdout + first.stderr
    after_first = git(root, "rev-parse", "HEAD")
    message = git(root, "log", "-1", "--format=%s%n%b")
    assert message.startswith("reconciler: update leaderboards")
    committed = git(root, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert set(committed) == {
        ".reconciler/state.json",
        "leaderboards/hle.md",
        "leaderboards/terminal-bench-2-1.md",
        "leaderboards/terminal-bench-2-1.svg",
    }
    second = cli(root, "reconcile", "--commit")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "nothing to commit" in second.stdout
    assert git(root, "rev-parse", "HEAD") == after_first


def test_commit_leaves_unrelated_staged_changes_alone(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    (root / "notes.md").write_text("work in progress\n")
    git(root, "add", "notes.md")
    assert cli(root, "reconcile", "--wait", "--commit").returncode == 0
    assert "notes.md" not in git(root, "show", "--name-only", "--format=", "HEAD")
    assert git(root, "diff", "--cached", "--name-only") == "notes.md"


def test_a_rejected_push_is_retried_after_rebasing(tmp_path: Path) -> None:
    # someone else pushes first, so our push is rejected as non-fast-forward
    remote, ours = clone_behind_origin(make_repo(tmp_path / "seed"), tmp_path, their_subject="unrelated")
    done = cli(ours, "reconcile", "--wait", "--commit", "--push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"pushed (attempt 2): {git(remote, 'rev-parse', 'main')[:10]}" in done.stdout  # the rebased commit
    log = git(remote, "log", "--format=%s", "main").splitlines()
    assert log[0].startswith("reconciler: update leaderboards") and "unrelated" in log


def test_the_retry_after_a_rejected_push_renders_but_never_applies_what_the_rebase_brought(tmp_path: Path) -> None:
    # their push merged a new spec: its own job applies it (and credits its commit); ours only re-renders
    seed = make_repo(tmp_path / "seed")
    extra = (seed / "specs/runs/tb-smoke.toml").read_text().replace('id = "tb-smoke"', 'id = "tb-extra"')
    extra = extra.replace("openai/gpt-5.2", "openai/gpt-5-mini")
    _, ours = clone_behind_origin(
        seed, tmp_path, their_subject="add tb-extra", their_files={"specs/runs/tb-extra.toml": extra}
    )
    done = cli(ours, "reconcile", "--commit", "--push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pushed (attempt 2)" in done.stdout
    runs = json.loads(cli(ours, "runs", "--format", "json").stdout)["runs"]
    assert runs and not [r for r in runs if "tb-extra" in str(r.get("owner"))]
    plan = json.loads(cli(ours, "plan", "--format", "json").stdout)
    assert [a["spec_id"] for a in plan["actions"] if a["kind"] == "submit"] == ["tb-extra"]


def _merge_in_progress(root: Path) -> None:
    (root / "NOTES.md").write_text("base\n")
    git(root, "add", "NOTES.md")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "notes")
    git(root, "checkout", "-qb", "other")
    (root / "NOTES.md").write_text("theirs\n")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "theirs")
    git(root, "checkout", "-q", "main")
    (root / "NOTES.md").write_text("ours\n")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "ours")
    merge = subprocess.run(["git", "-C", str(root), "merge", "-q", "other"], capture_output=True, text=True)
    assert merge.returncode != 0  # conflicted: the merge is in progress


@pytest.mark.parametrize(
    ("setup", "args", "says"),
    [
        (_merge_in_progress, ("--commit",), "a merge is in progress"),
        (lambda root: git(root, "checkout", "-q", "--detach"), ("--commit", "--push"), "HEAD is detached"),
    ],
)
def test_reconcile_refuses_a_checkout_it_could_not_commit_to_before_submitting_anything(
    tmp_path: Path, setup: Any, args: tuple[str, ...], says: str
) -> None:
    root = make_repo(tmp_path / "repo")
    setup(root)
    status_before = git(root, "status", "--porcelain")
    done = cli(root, "reconcile", *args)
    assert done.returncode == 1
    assert says in done.stderr and "nothing was applied" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert git(root, "status", "--porcelain") == status_before
    assert not (root / ".reconciler/state.json").exists()  # no run was submitted


def _board_in_readme(root: Path) -> Path:
    """hle's leaderboard in a marker block of README.md, committed."""
    readme = root / "README.md"
    readme.write_text("# Evals\n\n<!-- reconciler:leaderboard hle -->\n<!-- /reconciler:leaderboard hle -->\n")
    spec = root / "specs/benchmarks/hle.toml"
    spec.write_text(spec.read_text().replace('output = "leaderboards/hle.md"', 'output = "README.md"\nname = "hle"'))
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "board in README")
    return readme


def test_commit_never_takes_a_users_uncommitted_edit_beside_a_leaderboard_block(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    readme = _board_in_readme(root)
    readme.write_text(readme.read_text() + "WIP: my unfinished paragraph\n")
    done = cli(root, "reconcile", "--wait", "--commit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not committed: README.md, whose board has a file with edits besides reconciler's leaderboard" in done.stderr
    assert "README.md" not in git(root, "log", "-1", "--format=%B")  # the message names what it commits
    assert "WIP" not in git(root, "show", "HEAD:README.md")
    assert "README.md" not in git(root, "show", "--name-only", "--format=", "HEAD").splitlines()
    assert readme.read_text().endswith("WIP: my unfinished paragraph\n")  # still there, for the user to commit


def test_commit_takes_a_leaderboard_block_when_only_it_changed(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo")
    _board_in_readme(root)
    done = cli(root, "reconcile", "--wait", "--commit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "README.md" in git(root, "show", "--name-only", "--format=", "HEAD").splitlines()


def test_a_retry_whose_rebase_conflicts_on_the_state_file_keeps_both_jobs_records(tmp_path: Path) -> None:
    # the other job pushed its own state file first: the rebase conflicts on it and resets to theirs
    theirs = {"version": 1, "specs": {"runs/theirs": {"run_id": "r-9", "run_name": "their-run-9", "fingerprint": "f"}}}
    remote, ours = clone_behind_origin(
        make_repo(tmp_path / "seed"),
        tmp_path,
        their_subject="their job's state",
        their_files={".reconciler/state.json": json.dumps(theirs) + "\n"},
    )
    done = cli(ours, "reconcile", "--commit", "--push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pushed (attempt 2)" in done.stdout
    pushed = json.loads(git(remote, "show", "main:.reconciler/state.json"))["specs"]
    submitted = {line.split()[2].rstrip(":") for line in done.stdout.splitlines() if line.startswith("ok   submit")}
    assert submitted and submitted <= set(pushed), (submitted, sorted(pushed))
    assert pushed["runs/theirs"]["run_id"] == "r-9"
    assert f"pushed (attempt 2): {git(remote, 'rev-parse', 'main')[:10]}" in done.stdout  # the commit pushed


def test_a_commit_whose_push_failed_is_pushed_by_the_next_reconcile(tmp_path: Path) -> None:
    remote, ours = cloned(make_repo(tmp_path / "seed"), tmp_path)
    git(ours, "remote", "set-url", "origin", str(tmp_path / "nonexistent"))
    failed = cli(ours, "reconcile", "--wait", "--commit", "--push")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    left = git(ours, "rev-parse", "HEAD")
    git(ours, "remote", "set-url", "origin", str(remote))
    again = cli(ours, "reconcile", "--commit", "--push")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing to commit" in again.stdout and f"pushed (attempt 1): {left[:10]}" in again.stdout
    assert git(remote, "rev-parse", "main") == left


def test_an_unpushed_commit_of_reconcilers_for_a_board_whose_spec_was_since_removed_is_pushed(
    tmp_path: Path,
) -> None:
    seed = make_repo(tmp_path / "seed")
    remote, ours = cloned(seed, tmp_path)
    assert cli(ours, "reconcile", "--commit").returncode == 0  # its push never happened
    assert "leaderboards/hle.md" in git(ours, "show", "--name-only", "--format=", "HEAD")
    git(seed, "rm", "-q", "specs/benchmarks/hle.toml")  # merged meanwhile: this run renders no hle board
    git(seed, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "drop the hle board")
    git(seed, "push", "-q", "origin", "main")
    git(ours, "pull", "-q", "--rebase", "origin", "main")
    done = cli(ours, "reconcile", "--commit", "--push")
    assert done.returncode == 0, done.stdout + done.stderr
    assert git(remote, "rev-parse", "main") == git(ours, "rev-parse", "HEAD")
    assert git(remote, "log", "-1", "--format=%s", "main", "--", "leaderboards/hle.md").startswith("reconciler: ")


def test_a_push_that_would_send_a_users_commit_is_refused_before_any_run_is_submitted(tmp_path: Path) -> None:
    remote, ours = cloned(make_repo(tmp_path / "seed"), tmp_path)
    (ours / "NOTES.md").write_text("my unpushed work\n")
    git(ours, "add", "NOTES.md")
    git(ours, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "my notes")
    mine = git(ours, "rev-parse", "HEAD")
    done = cli(ours, "reconcile", "--commit", "--push")
    assert done.returncode == 1, done.stdout + done.stderr
    assert json.loads(cli(ours, "runs", "--format", "json").stdout)["runs"] == []  # nothing submitted
    assert (
        f"main has 1 commit(s) not on origin that reconciler did not make ({mine[:10]} my notes); nothing was applied"
        in done.stderr
    )
    assert git(ours, "rev-parse", "HEAD") == mine  # nothing committed
    assert git(remote, "rev-parse", "main") == git(ours, "rev-parse", "HEAD^")  # nothing pushed


def test_commit_in_a_project_inside_a_repository_says_where_the_repository_is(tmp_path: Path) -> None:
    make_repo(tmp_path / "mono" / "evals")
    (tmp_path / "mono" / "evals" / ".git").rename(tmp_path / "mono" / ".git")  # the repository is one level up
    done = cli(tmp_path / "mono" / "evals", "reconcile", "--commit")
    assert done.returncode == 1 and "is a folder of the git repository at" in done.stderr, done.stderr
    assert "is not a git repository" not in done.stderr


def test_a_leaderboard_block_in_a_crlf_file_is_committed(tmp_path: Path) -> None:
    """git show keeps a file's stored CRLF; reading it as text gives LF, as the renderer writes."""
    root = make_repo(tmp_path / "repo")
    readme = _board_in_readme(root)
    readme.write_bytes(readme.read_bytes().replace(b"\n", b"\r\n"))
    git(
        root,
        "-c",
        "core.autocrlf=false",
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-qam",
        "CRLF",
    )
    done = cli(root, "reconcile", "--wait", "--commit")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not committed: README.md" not in done.stderr
    assert "README.md" in git(root, "show", "--name-only", "--format=", "HEAD").splitlines()
