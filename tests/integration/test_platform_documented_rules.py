"""The local platform follows the Benchmarks page: statuses, billing at submit, links that open."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.commands.platform import serve as serve_command
from reconciler.localplatform import create_app
from reconciler.localplatform.defaults import DEFAULT_PUBLIC_URL
from reconciler.localplatform.inprocess import InProcessTransport
from reconciler.render.leaderboard import parse_rows, render_markdown
from tests.local_cli import cli

API = "/api/cli"
FINISH = {"LOCALPLATFORM_FORCE_STATUS": "finished"}
FAIL = {"LOCALPLATFORM_FORCE_STATUS": "failed"}
TASKS = {"task_names": ["terminal-bench/git-multibranch"]}


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


class Local:
    def __init__(self, db: Path, **options: Any) -> None:
        self.clock = Clock()
        self.transport = InProcessTransport(create_app(db, token=None, clock=self.clock, **options))

    def client(self, workspace: str) -> httpx.Client:
        return httpx.Client(
            base_url="http://local.test", transport=self.transport, headers={"X-Osmosis-Workspace": workspace}
        )


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Local]:
    platform = Local(tmp_path / "db.sqlite3")
    yield platform
    platform.transport.close()


def agent(model: str, key: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"model": {"type": "provider", "model": model, "api_key_secret": key}, "env": env or {}}


def full_run(*agents: dict[str, Any]) -> dict[str, Any]:
    return {"experiment_config": {"benchmark": "terminal-bench-2-1"}, "agents": list(agents), "env_config": FINISH}


# --- statuses ---------------------------------------------------------------------------------


def test_a_run_whose_agent_failed_ends_failed_and_the_agent_never_ranks(local: Local) -> None:
    # "finished: Every expected result landed. Scores are final." and "failed: The run stopped on
    # an error." An agent reaches the leaderboard when "its run finished, and the agent itself finished".
    with local.client("statuses") as client:
        body = full_run(
            agent("openai/gpt-5.2", "OPENAI_API_KEY"), agent("anthropic/claude-sonnet-4.5", "ANTHROPIC_API_KEY", FAIL)
        )
        created = client.post(f"{API}/benchmark-runs", json=body)
        assert created.status_code == 201, created.text
        local.clock.now += 100_000
        detail = client.get(f"{API}/benchmark-runs/{created.json()['id']}").json()
        run = detail["benchmark_run"]
        assert run["status"] == "failed"
        assert run["ingested_results"] < run["expected_results"]
        assert [a["status"] for a in detail["agents"]] == ["finished", "failed"]
        logs = client.get(f"{API}/benchmark-runs/{run['id']}/logs").text
        assert "agent 1 (anthropic/claude-sonnet-4.5) failed" in logs
        assert client.get(f"{API}/benchmarks/terminal-bench-2-1").json()["leaderboard"] == []


def test_a_run_whose_agents_all_finished_is_finished_and_ranks_every_agent(local: Local) -> None:
    with local.client("statuses") as client:
        body = full_run(
            agent("openai/gpt-5.2", "OPENAI_API_KEY"), agent("anthropic/claude-sonnet-4.5", "ANTHROPIC_API_KEY")
        )
        created = client.post(f"{API}/benchmark-runs", json=body)
        local.clock.now += 100_000
        run = client.get(f"{API}/benchmark-runs/{created.json()['id']}").json()["benchmark_run"]
        assert (run["status"], run["ingested_results"]) == ("finished", run["expected_results"])
        board = client.get(f"{API}/benchmarks/terminal-bench-2-1").json()["leaderboard"]
        assert sorted(e["model"] for e in board) == ["anthropic/claude-sonnet-4.5", "openai/gpt-5.2"]


# --- billing ----------------------------------------------------------------------------------


@pytest.mark.parametrize("workspace", ["no-billing", "acme/no-billing"])
def test_a_workspace_without_valid_billing_is_told_at_submit(local: Local, workspace: str) -> None:
    # "Submission is where billing is checked, so a workspace without valid billing is told at
    # submit rather than being locked out of the form."
    with local.client(workspace) as client:
        assert client.get(f"{API}/benchmarks/terminal-bench-2-1").status_code == 200  # it still reads
        body = full_run(agent("openai/gpt-5.2", "OPENAI_API_KEY")) | {"tasks_config": TASKS}
        refused = client.post(f"{API}/benchmark-runs", json=body)
        assert refused.status_code == 403
        assert refused.json()["code"] == "BILLING_REQUIRED"
        assert "no valid billing" in refused.json()["message"]
        assert client.get(f"{API}/benchmark-runs").json()["benchmark_runs"] == []


def test_apply_reports_the_billing_refusal_and_exits_non_zero(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "specs" / "runs").mkdir(parents=True)
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "no-billing"\n')
    (root / "specs" / "runs" / "smoke.toml").write_text(
        '[experiment]\nbenchmark = "terminal-bench-2-1"\n[tasks]\ntask_names = ["terminal-bench/git-multibranch"]\n'
        '[[agents]]\n[agents.model]\ntype = "provider"\nmodel = "openai/gpt-5.2"\napi_key_secret = "OPENAI_API_KEY"\n'
        '[reconcile]\nid = "smoke"\n'
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    done = cli(root, "apply", "--auto-approve")
    assert done.returncode != 0
    assert "smoke: Workspace 'no-billing' has no valid billing" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


# --- links ------------------------------------------------------------------------------------


def test_platform_urls_name_the_address_platform_serve_listens_on_by_default(local: Local) -> None:
    host = next(p.default for p in serve_command.params if p.name == "host")
    port = next(p.default for p in serve_command.params if p.name == "port")
    assert f"http://{host}:{port}" == DEFAULT_PUBLIC_URL
    with local.client("links") as client:
        created = client.post(f"{API}/benchmark-runs", json=full_run(agent("openai/gpt-5.2", "OPENAI_API_KEY")))
        assert created.json()["platform_url"] == f"{DEFAULT_PUBLIC_URL}/benchmarks/runs/{created.json()['id']}"
        local.clock.now += 100_000
        board = client.get(f"{API}/benchmarks/terminal-bench-2-1").json()["leaderboard"]
        assert [e["run"]["platform_url"] for e in board] == [created.json()["platform_url"]]


def test_a_configured_public_url_is_the_base_of_every_platform_url(tmp_path: Path) -> None:
    platform = Local(tmp_path / "db.sqlite3", public_url="http://bench.example:9000/")
    with platform.client("links") as client:
        created = client.post(f"{API}/benchmark-runs", json=full_run(agent("openai/gpt-5.2", "OPENAI_API_KEY")))
        assert created.json()["platform_url"].startswith("http://bench.example:9000/benchmarks/runs/")
        detail = client.get(f"{API}/benchmarks/terminal-bench-2-1").json()["benchmark"]
        assert detail["platform_url"].startswith("http://bench.example:9000/benchmarks/")
    platform.transport.close()


def test_a_local_leaderboard_says_how_to_open_its_links() -> None:
    rows = parse_rows([{"rank": 1, "model": "m", "pass_at_1": {"value": 0.5}, "run": {"id": "r"}}])
    local = render_markdown(
        title="T", benchmark_key="k", spec_path="s", rows=rows, rank_by="pass_at_1", scope="workspace", local=True
    )
    remote = render_markdown(
        title="T", benchmark_key="k", spec_path="s", rows=rows, rank_by="pass_at_1", scope="workspace"
    )
    assert "`reconciler platform serve`" in local and "http://127.0.0.1:8765" in local
    assert "reconciler platform serve" not in remote
