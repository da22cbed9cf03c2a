"""`reconciler secrets` and `secrets set` end to end against `reconciler platform serve`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.served_platform import ServedPlatform, serve_platform
from tests.e2e.workspace_repo import WorkspaceRepo

pytestmark = pytest.mark.slow

MISTRAL_SPEC = """\
[experiment]
benchmark = "terminal-bench-2-1"

[tasks]
task_names = ["terminal-bench/git-multibranch"]

[[agents]]
harness = "codex"

[agents.model]
type = "provider"
model = "mistral/large"
api_key_secret = "MISTRAL_API_KEY"

[reconcile]
id = "mistral-smoke"
"""


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedPlatform]:
    with serve_platform(tmp_path_factory.mktemp("platform")) as served:
        yield served


@pytest.fixture
def repo(tmp_path: Path, platform: ServedPlatform) -> WorkspaceRepo:
    repo = WorkspaceRepo(tmp_path / "repo", platform)
    (repo.root / "specs" / "runs" / "mistral-smoke.toml").write_text(MISTRAL_SPEC)
    return repo


def stored(repo: WorkspaceRepo) -> dict[str, set[str]]:
    with repo.platform.api(repo.workspace) as api:
        page = api.get("/api/cli/environment-secrets", params={"scope": "all", "limit": 50}).json()
    out: dict[str, set[str]] = {}
    for record in page["environment_secrets"]:
        out.setdefault(record["name"], set()).add(record["scope"])
    return out


def rows(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["spec_id"], r["name"]): r for r in doc["records"]}


def test_secrets_shows_each_specs_records_where_they_exist_and_what_is_missing(repo: WorkspaceRepo) -> None:
    """cli-benchmark-runs.md: "Also create every record named in the `benchmark info` response's
    `required_secret_names` [...] These are implicit benchmark requirements and are not repeated in the TOML."
    """
    doc = repo.json("secrets")
    found = rows(doc)
    assert doc["missing"] == ["MISTRAL_API_KEY"]
    assert found[("mistral-smoke", "MISTRAL_API_KEY")]["missing"] is True
    assert found[("tb-smoke", "OPENAI_API_KEY")]["workspace"] is True
    # the benchmark's implicit requirement, not written in the spec
    assert found[("hle-parity", "HF_TOKEN")]["referenced_by"] == "benchmark hle"
    assert found[("hle-parity", "HF_TOKEN")]["personal"] is True
    text = repo.cli("secrets", check=True).stdout
    assert "MISSING" in text and "reconciler secrets set NAME" in text


def test_the_plan_blocks_on_a_missing_record_and_names_the_command_that_creates_it(repo: WorkspaceRepo) -> None:
    plan = repo.json("plan", "--target", "mistral-smoke")
    (action,) = plan["actions"]
    assert action["kind"] == "blocked" and "`reconciler secrets set MISTRAL_API_KEY`" in action["reason"]


def test_secrets_set_reads_standard_input_and_prints_only_the_name(repo: WorkspaceRepo) -> None:
    done = repo.cli("secrets", "set", "MISTRAL_API_KEY", "--scope", "workspace", stdin="mk-very-secret-value\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "set MISTRAL_API_KEY (workspace)\n"
    assert "mk-very-secret-value" not in done.stdout + done.stderr
    assert stored(repo)["MISTRAL_API_KEY"] == {"workspace"}
    assert repo.json("secrets")["missing"] == []
    (action,) = repo.json("plan", "--target", "mistral-smoke")["actions"]
    assert action["kind"] == "submit"


def test_secrets_set_from_env_stores_a_personal_record_by_default(repo: WorkspaceRepo) -> None:
    """cli-benchmark-runs.md: "Personal scope is the default. Use `--scope workspace` for a credential shared
    with workspace members who can submit runs." The wire calls personal `user`."""
    done = repo.cli("secrets", "set", "MISTRAL_API_KEY", "--from-env", "MY_KEY", env={"MY_KEY": "mk-from-env"})
    assert done.returncode == 0, done.stderr
    assert done.stdout == "set MISTRAL_API_KEY (personal)\n"
    assert stored(repo)["MISTRAL_API_KEY"] == {"user"}


@pytest.mark.parametrize(
    ("args", "stdin", "expected"),
    [
        (("secrets", "set", "mistral-key"), "value", "not a secret record name"),
        (("secrets", "set", "MISTRAL_API_KEY"), "", "standard input is empty"),
        (("secrets", "set", "MISTRAL_API_KEY", "--from-env", "UNSET_VAR_FOR_TEST"), "", "$UNSET_VAR_FOR_TEST is empty"),
    ],
)
def test_secrets_set_refuses_bad_input_and_stores_nothing(
    repo: WorkspaceRepo, args: tuple[str, ...], stdin: str, expected: str
) -> None:
    done = repo.cli(*args, stdin=stdin)
    assert done.returncode == 64 and expected in done.stderr and "Traceback" not in done.stderr
    assert "MISTRAL_API_KEY" not in stored(repo) and "mistral-key" not in stored(repo)


def test_secrets_set_takes_no_value_argument(repo: WorkspaceRepo) -> None:
    done = repo.cli("secrets", "set", "MISTRAL_API_KEY", "mk-value-on-the-command-line", stdin="")
    assert done.returncode == 64 and "never from an argument" in done.stderr
    assert "mk-value-on-the-command-line" not in done.stdout + done.stderr
    assert "MISTRAL_API_KEY" not in stored(repo)
