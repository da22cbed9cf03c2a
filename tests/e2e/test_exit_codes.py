"""Exit codes, as scripts and the shipped workflows read them: the CLI as a subprocess, on the embedded platform.

0 ok / in sync, 1 error, 2 changes pending (with `plan --detailed-exitcode`), 3 blocked (that plan, apply and
reconcile), 64 usage.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.local_cli import cli

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "codes"\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def block_smoke(root: Path) -> None:
    """tb-smoke needs a secret record the workspace does not have: its submit is blocked."""
    spec = root / "specs/runs/tb-smoke.toml"
    spec.write_text(spec.read_text().replace('api_key_secret = "OPENAI_API_KEY"', 'api_key_secret = "NO_SUCH_KEY"'))


@pytest.mark.parametrize(
    "args",
    [
        ("plan", "--no-such-option"),
        ("plan", "--format", "xml"),
        ("plan", "--detailed-exitcode", "--target", "typo"),
        ("no-such-command",),
        ("reconcile", "--push"),
    ],
    ids=["unknown-option", "bad-value", "unknown-target", "unknown-command", "push-without-commit"],
)
def test_a_usage_error_exits_64_never_the_changes_pending_code(root: Path, args: tuple[str, ...]) -> None:
    done = cli(root, *args)
    assert done.returncode == 64, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_pending_changes_exit_2_with_detailed_exitcode(root: Path) -> None:
    done = cli(root, "plan", "--detailed-exitcode", "--target", "tb-smoke")
    assert done.returncode == 2, done.stdout + done.stderr


def test_a_plan_whose_only_action_is_blocked_exits_3_and_says_which_spec(root: Path) -> None:
    block_smoke(root)
    done = cli(root, "plan", "--detailed-exitcode", "--target", "tb-smoke")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Blocked (1): tb-smoke" in done.stdout and "No changes" not in done.stdout


def test_blocked_wins_over_pending_changes(root: Path) -> None:
    block_smoke(root)
    done = cli(root, "plan", "--detailed-exitcode")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "submit" in done.stdout and "Blocked (1): tb-smoke" in done.stdout


def test_the_markdown_plan_of_a_blocked_spec_never_says_no_changes(root: Path) -> None:
    block_smoke(root)
    done = cli(root, "plan", "--format", "markdown", "--target", "tb-smoke")
    assert done.returncode == 0, done.stderr
    assert "No changes" not in done.stdout and "**Blocked (1):** `tb-smoke`." in done.stdout


def test_reconcile_names_the_blocked_spec_and_exits_3(root: Path) -> None:
    block_smoke(root)
    done = cli(root, "reconcile", "--target", "tb-smoke")
    assert "blocked  tb-smoke: secret records missing: NO_SUCH_KEY" in done.stdout, done.stdout + done.stderr
    assert done.returncode == 3 and "1 spec(s) blocked, not applied: tb-smoke" in done.stderr


def test_apply_carries_out_everything_else_then_exits_3_for_a_blocked_spec(root: Path) -> None:
    block_smoke(root)
    done = cli(root, "apply", "--auto-approve", "--target", "tb-smoke", "--target", "tb-compare")
    assert done.returncode == 3, done.stdout + done.stderr
    assert "1 spec(s) blocked, not applied: tb-smoke" in done.stderr and "Traceback" not in done.stderr
    status = {r["spec_id"]: r["run_id"] for r in json.loads(cli(root, "status", "--format", "json").stdout)["rows"]}
    assert status["tb-compare"] is not None and status["tb-smoke"] is None


@pytest.mark.parametrize("args", [("--help",), ("plan", "--help")])
def test_the_help_documents_every_exit_code(root: Path, args: tuple[str, ...]) -> None:
    text = " ".join(cli(root, *args).stdout.split())
    for phrase in ("0 ok", "1 error", "2 changes pending", "3 blocked", "64 usage error", "130 interrupted"):
        assert phrase in text


@pytest.mark.parametrize(
    "args",
    [
        ("apply", "--auto-approve", "--lock-timeout", "nan"),
        ("apply", "--auto-approve", "--lock-timeout", "-1"),
        ("reconcile", "--lock-timeout", "nan"),
        ("reconcile", "--wait", "--timeout", "nan"),
        ("wait", "--timeout", "-5"),
    ],
)
def test_a_duration_that_is_not_a_number_of_seconds_is_a_usage_error_before_anything_runs(
    root: Path, args: tuple[str, ...]
) -> None:
    done = cli(root, *args)
    assert done.returncode == 64, done.stdout + done.stderr
    assert "is not a number of seconds" in done.stderr and "Traceback" not in done.stderr
    assert not (root / ".reconciler").exists() and not (root / ".osmosis").exists()


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[1]", "not a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"plan_file_version": 1, "policy": {"targets": 5}, "plan": {}}', "policy.targets: Input should be"),
        ('{"plan_file_version": 1, "policy": {}}', "plan is missing or not an object"),
        ("{\n  oops", "line 2 column 3"),
    ],
)
def test_a_plan_file_that_is_not_a_saved_plan_is_a_usage_error_naming_what_is_wrong(
    root: Path, tmp_path: Path, content: str, says: str
) -> None:
    saved = tmp_path / "plan.json"
    saved.write_text(content)
    done = cli(root, "apply", "--auto-approve", str(saved))
    assert done.returncode == 64, done.stdout + done.stderr
    assert f"{saved} is not a plan saved by `reconciler plan --out`: {says}" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert not (root / ".reconciler/state.json").exists()
