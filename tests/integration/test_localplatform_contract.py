"""The local platform against the contract, twice: in-process and as `reconciler platform serve`.

Every test runs against both targets. In-process, time is an injected clock the test moves;
the subprocess runs on the wall clock at a high `--speed`, and tests poll with bounded loops.
Each test works in its own workspace (named after the test), so they never see each other's runs.
"""

from __future__ import annotations

import csv
import io
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.localplatform import Faults, create_app
from reconciler.localplatform.catalog import BY_KEY
from reconciler.localplatform.inprocess import InProcessTransport
from reconciler.localplatform.outputs import RESULTS_COLUMNS, SUMMARY_COLUMNS
from tests.served_platform import served

TOKEN = "contract-token"
SEED = 7
SERVER_SPEED = 200.0
TB = BY_KEY["terminal-bench-2-1"]
EASY = [t.name for t in TB.tasks if t.difficulty == "easy"][:2]
API = "/api/cli"


class ManualClock:
    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Target:
    name: str
    base_url: str
    speed: float
    transport: InProcessTransport | None = None
    clock: ManualClock | None = None
    clients: list[httpx.Client] = field(default_factory=list)
    shared: dict[str, str] = field(default_factory=dict)

    def client(self, workspace: str | None, *, token: str | None = TOKEN, **headers: str) -> httpx.Client:
        sent = dict(headers)
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if workspace is not None:
            sent["X-Osmosis-Workspace"] = workspace
        client = httpx.Client(base_url=self.base_url, headers=sent, transport=self.transport, timeout=30)
        self.clients.append(client)
        return client

    def bare(self) -> httpx.Client:
        """A client with no auth and no scope header, as presigned downloads are fetched."""
        return self.client(None, token=None)

    def tick(self, sim_seconds: float) -> None:
        if self.clock is not None:
            self.clock.advance(sim_seconds / self.speed)
        else:
            time.sleep(min(sim_seconds / self.speed, 0.1))

    def close(self) -> None:
        for client in self.clients:
            client.close()


@pytest.fixture(scope="module")
def inprocess(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    clock = ManualClock()
    app = create_app(
        tmp_path_factory.mktemp("inprocess") / "db.sqlite3",
        token=TOKEN,
        seed=SEED,
        clock=clock,
        public_url="http://testserver",
    )
    target = Target("inprocess", "http://testserver", 600.0, InProcessTransport(app), clock)
    yield target
    target.close()
    assert target.transport is not None
    target.transport.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    workdir = tmp_path_factory.mktemp("server")
    with served(workdir, "--token", TOKEN, "--seed", str(SEED), "--speed", str(SERVER_SPEED)) as (url, token):
        assert token == TOKEN
        target = Target("server", url, SERVER_SPEED)
        yield target
        target.close()


@pytest.fixture(params=["inprocess", "server"])
def target(request: pytest.FixtureRequest) -> Target:
    found: Target = request.getfixturevalue(request.param)
    return found


@pytest.fixture
def workspace(request: pytest.FixtureRequest) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", request.node.name)


@pytest.fixture
def api(target: Target, workspace: str) -> httpx.Client:
    return target.client(workspace)


# --- payloads -----------------------------------------------------------------------------


def agent(
    model: str = "openai/gpt-5.2", key: str = "OPENAI_API_KEY", harness: str | None = None, **extra: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {"model": {"type": "provider", "model": model, "api_key_secret": key}, "env": {}}
    if harness is not None:
        out["harness"] = harness
    out.update(extra)
    return out


def payload(
    benchmark: str = "terminal-bench-2-1", agents: list[dict[str, Any]] | None = None, **parts: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"experiment_config": {"benchmark": benchmark}, "agents": agents or [agent()]}
    body.update(parts)
    return body


def small(**parts: Any) -> dict[str, Any]:
    """Two easy Terminal-Bench tasks, one agent, forced to finish: done in a few simulated minutes."""
    parts.setdefault("tasks_config", {"task_names": EASY})
    parts.setdefault("env_config", {"LOCALPLATFORM_FORCE_STATUS": "finished"})
    return payload(**parts)


def submit(api: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post(f"{API}/benchmark-runs", json=body)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def wait_for(
    target: Target, api: httpx.Client, run_id: str, done: Callable[[dict[str, Any]], bool], step: float = 20
) -> dict[str, Any]:
    """Run detail once `done(detail)`; moves the clock (in-process) or polls (server), bounded."""
    for _ in range(400):
        detail: dict[str, Any] = api.get(f"{API}/benchmark-runs/{run_id}").json()
        if done(detail):
            return detail
        target.tick(step)
    raise AssertionError(f"run {run_id} never reached the expected state: {detail['benchmark_run']}")


def status_in(*statuses: str) -> Callable[[dict[str, Any]], bool]:
    return lambda detail: detail["benchmark_run"]["status"] in statuses


@pytest.fixture
def finished(target: Target) -> tuple[httpx.Client, str]:
    """(client, run id) of one small finished run per target, shared by the read-only tests."""
    client = target.client("shared-finished")
    if "finished" not in target.shared:
        created = submit(client, small())
        wait_for(target, client, created["id"], status_in("finished"))
        target.shared["finished"] = created["id"]
    return client, target.shared["finished"]


# --- transport, auth, scope ---------------------------------------------------------------


def test_every_response_carries_the_version_header(target: Target, api: httpx.Client) -> None:
    for response in (
        api.get(f"{API}/benchmarks"),
        api.get(f"{API}/nope"),
        target.client("x", token="bad").get(f"{API}/benchmarks"),
    ):
        assert response.headers["X-Osmosis-Version-Status"] == "current"


def test_wrong_token_is_401_unauthorized(target: Target) -> None:
    response = target.client("ws", token="not-the-token").get(f"{API}/benchmarks")
    assert response.status_code == 401
    assert response.json()["code"] == "UNAUTHORIZED"


def test_missing_token_is_401(target: Target) -> None:
    assert target.client("ws", token=None).get(f"{API}/benchmark-runs").status_code == 401


def test_no_scope_header_is_400_git_scope_header_required(target: Target) -> None:
    response = target.client(None).get(f"{API}/benchmarks")
    assert (response.status_code, response.json()["code"]) == (400, "GIT_SCOPE_HEADER_REQUIRED")


def test_both_scope_headers_is_400_conflict(target: Target) -> None:
    response = target.client("ws", **{"X-Osmosis-Git": "acme/bench"}).get(f"{API}/benchmarks")
    assert (response.status_code, response.json()["code"]) == (400, "WORKSPACE_SCOPE_HEADER_CONFLICT")


def test_git_identity_scopes_a_workspace_of_its_own(target: Target) -> None:
    client = target.client(None, **{"X-Osmosis-Git": "Acme/Bench-Repo"})
    assert client.get(f"{API}/benchmarks").json()["total_count"] == 5
    assert client.get(f"{API}/benchmark-runs").json()["total_count"] == 0


def test_benchmarks_disabled_workspace_is_403(target: Target) -> None:
    client = target.client("no-benchmarks")
    for response in (client.get(f"{API}/benchmarks"), client.post(f"{API}/benchmark-runs", json=small())):
        assert response.status_code == 403
        body = response.json()
        assert body == {"message": "Benchmarks is not available for your account", "code": "BENCHMARKS_NOT_ENABLED"}
    assert client.get(f"{API}/environment-secrets").status_code == 200


def test_unknown_route_is_404_json(api: httpx.Client) -> None:
    response = api.get(f"{API}/does-not-exist")
    assert response.status_code == 404
    assert response.json()["code"] == "NOT_FOUND"


def test_limit_above_50_is_400(api: httpx.Client) -> None:
    for path in ("benchmarks", "benchmark-runs", "environment-secrets"):
        response = api.get(f"{API}/{path}", params={"limit": 51})
        assert response.status_code == 400
        assert (response.json()["code"], response.json()["field"]) == ("VALIDATION", "limit")


# --- benchmarks ----------------------------------------------------------------------------


def test_benchmark_list_has_the_seeded_catalog(api: httpx.Client) -> None:
    body = api.get(f"{API}/benchmarks").json()
    by_key = {b["source_ref"]: b for b in body["benchmarks"]}
    assert (body["total_count"], body["has_more"], body["next_offset"]) == (5, False, None)
    assert by_key["terminal-bench-2-1"]["name"] == "Terminal-Bench 2.1"
    assert by_key["terminal-bench-2-1"]["task_count"] >= 80
    assert by_key["hle"]["task_sets"] == [
        {
            "name": "parity",
            "task_count": 40,
            "recommended": True,
            "description": by_key["hle"]["task_sets"][0]["description"],
        }
    ]
    syncing = by_key["harbor/terminal-bench-pro@1.0"]
    assert syncing["sync_status"] == "syncing" and syncing["synced_task_count"] < syncing["task_count"]
    assert by_key["harbor/aider-polyglot@2"]["sync_status"] == "failed"
    assert by_key["harbor/aider-polyglot@2"]["sync_error"]


def test_benchmark_list_pages_by_offset(api: httpx.Client) -> None:
    first = api.get(f"{API}/benchmarks", params={"limit": 2}).json()
    assert (len(first["benchmarks"]), first["has_more"], first["next_offset"]) == (2, True, 2)
    last = api.get(f"{API}/benchmarks", params={"limit": 2, "offset": 4}).json()
    assert (len(last["benchmarks"]), last["has_more"], last["next_offset"]) == (1, False, None)


@pytest.mark.parametrize("ref", ["terminal-bench-2-1", "Terminal-Bench 2.1"])
def test_benchmark_detail_by_key_or_name(api: httpx.Client, ref: str) -> None:
    body = api.get(f"{API}/benchmarks/{httpx.URL(ref).raw_path.decode()}").json()
    bench = body["benchmark"]
    assert bench["source_ref"] == "terminal-bench-2-1"
    assert bench["default_harness"] == "terminus-2"
    assert (bench["supports_harness"], bench["requires_harness"], bench["requires_judge_model"]) == (True, False, False)
    assert "terminal-bench/git-multibranch" in {t["name"] for t in bench["tasks"]}
    assert {t["difficulty"] for t in bench["tasks"]} == {"easy", "medium", "hard", None}
    assert len(bench["categories"]) >= 6
    assert body["leaderboard"] == []


def test_benchmark_detail_by_id_and_percent_encoded_key(api: httpx.Client) -> None:
    listed = {b["source_ref"]: b["id"] for b in api.get(f"{API}/benchmarks").json()["benchmarks"]}
    assert api.get(f"{API}/benchmarks/{listed['hle']}").json()["benchmark"]["source_ref"] == "hle"
    failed = api.get(f"{API}/benchmarks/harbor%2Faider-polyglot%402").json()["benchmark"]
    assert failed["unavailable_tasks"]["reason"] == failed["sync_error"]


def test_hle_detail_reports_judge_and_required_secrets(api: httpx.Client) -> None:
    bench = api.get(f"{API}/benchmarks/hle").json()["benchmark"]
    assert bench["required_secret_names"] == ["HF_TOKEN"]
    assert (bench["requires_judge_api_key"], bench["judge_model_default"], bench["supports_harness"]) == (
        True,
        "openai/gpt-5.2",
        False,
    )


def test_unknown_benchmark_is_404(api: httpx.Client) -> None:
    response = api.get(f"{API}/benchmarks/no-such-bench")
    assert (response.status_code, response.json()["code"]) == (404, "BENCHMARK_NOT_FOUND")


# --- submit --------------------------------------------------------------------------------


def test_submit_answers_201_with_the_run(target: Target, api: httpx.Client) -> None:
    created = submit(api, small())
    assert set(created) >= {"id", "name", "status", "created_at", "workflow_id", "task_count", "platform_url"}
    assert created["status"] == "pending" and created["task_count"] == 2
    assert re.fullmatch(r"[a-z]+-[a-z]+-1", created["name"])
    assert created["platform_url"] == f"{target.base_url}/benchmarks/runs/{created['id']}"


def test_submit_on_a_syncing_benchmark_is_409(api: httpx.Client) -> None:
    response = api.post(
        f"{API}/benchmark-runs", json=payload("harbor/terminal-bench-pro@1.0", [agent(harness="codex")])
    )
    assert (response.status_code, response.json()["code"]) == (409, "BENCHMARK_NOT_READY")


def test_submit_on_an_unknown_benchmark_is_404(api: httpx.Client) -> None:
    response = api.post(f"{API}/benchmark-runs", json=payload("nope"))
    assert response.status_code == 404


def test_submit_names_every_missing_secret_record(target: Target, api: httpx.Client) -> None:
    assert (
        api.request("DELETE", f"{API}/environment-secrets", json={"name": "HF_TOKEN", "scope": "user"}).status_code
        == 200
    )
    body = payload(
        "hle",
        [agent(key="MISSING_MODEL_KEY")],
        tasks_config={"task_set": "parity"},
        execution_config={"judge_api_key_secret": "MISSING_JUDGE_KEY", "verifier_secrets": ["OPENAI_API_KEY"]},
        secrets={"required": ["RUN_ONLY", "PROVIDED_HERE"], "provided": {"PROVIDED_HERE": "value"}},
    )
    response = api.post(f"{API}/benchmark-runs", json=body)
    assert response.status_code == 404
    error = response.json()
    assert error["message"] == "Secret(s) not found: MISSING_MODEL_KEY, MISSING_JUDGE_KEY, RUN_ONLY, HF_TOKEN"
    assert error["details"]["platform_url"].startswith(target.base_url)


def test_submit_with_unknown_key_is_400_with_dotted_issue(api: httpx.Client) -> None:
    body = small()
    body["agents"][0]["modle"] = "typo"
    response = api.post(f"{API}/benchmark-runs", json=body)
    assert response.status_code == 400
    error = response.json()
    assert (error["message"], error["code"]) == ("Invalid benchmark config", "VALIDATION")
    assert {"key": "agents[0].modle", "code": "UNKNOWN_KEY"}.items() <= error["issues"][0].items()


@pytest.mark.parametrize("table", ["experiment", "tasks", "env"])
def test_submit_refuses_a_toml_table_name_in_place_of_its_wire_key(api: httpx.Client, table: str) -> None:
    # contract 4: the body's keys are experiment_config, agents, tasks_config, execution_config,
    # env_config and secrets; a client that sent `env` would lose its env on the real platform
    body = small()
    body[table] = body.pop(f"{table}_config", None) or {"A": "b"}
    response = api.post(f"{API}/benchmark-runs", json=body)
    assert response.status_code == 400, response.text
    refused = [i for i in response.json()["issues"] if i["key"] == table and i["code"] == "UNKNOWN_KEY"]
    assert len(refused) == 1 and "env_config" in refused[0]["message"]


def test_a_refused_credential_value_carries_the_secret_set_hint(api: httpx.Client) -> None:
    body = payload(agents=[agent(key="sk-proj-abcdef0123456789abcdef")])
    [issue] = api.post(f"{API}/benchmark-runs", json=body).json()["issues"]
    assert issue["code"] == "CREDENTIAL_VALUE" and "osmosis secret set" in issue["message"]
    assert "abcdef0123" not in issue["message"]


def test_submit_body_that_is_not_an_object_is_400(api: httpx.Client) -> None:
    assert api.post(f"{API}/benchmark-runs", json=["not", "an", "object"]).status_code == 400


def _rule_cases() -> list[tuple[str, dict[str, Any]]]:
    hle = {"tasks_config": {"task_set": "parity"}, "execution_config": {"judge_api_key_secret": "HLE_JUDGE_API_KEY"}}
    endpoint = {
        "model": {
            "type": "endpoint",
            "base_url": "https://llm.example/v1",
            "model": "m",
            "api_key_secret": "OPENAI_API_KEY",
            "extra_headers": {"authorization": "Bearer x"},
        },
        "env": {},
    }
    return [
        ("AGENT_COUNT", payload(agents=[agent() for _ in range(9)])),
        ("TASK_SET", payload(tasks_config={"task_set": "full"})),
        ("TASK_SET_UNKNOWN", payload(tasks_config={"task_set": "parity"})),
        ("TASK_SELECTION", payload(tasks_config={"task_names": ["  "]})),
        ("TASK_SELECTOR_COMBINED", payload(tasks_config={"task_names": EASY[:1], "categories": ["security"]})),
        ("SECRET_NAME", payload(agents=[agent(key="openai_key")])),
        ("CREDENTIAL_VALUE", payload(agents=[agent(key="sk-proj-abcdef0123456789abcdef")])),
        ("SECRET_LIST_SIZE", payload(secrets={"required": [f"S{i}" for i in range(17)], "provided": {}})),
        ("ENV_RESERVED", payload(env_config={"_OSMOSIS_DEBUG": "1"})),
        ("ENV_NAME", payload(env_config={"lower_case": "1"})),
        ("HF_TOKEN_RESERVED", payload(agents=[agent(env={"HF_TOKEN": "x"})])),
        ("MODEL_KEY_RESERVED", payload(agents=[agent(key="DAYTONA_API_KEY")])),
        ("HARNESS_UNKNOWN", payload(agents=[agent(harness="vim")])),
        ("HARNESS_SECRET", payload(agents=[agent(harness="codex", harness_api_key_secret="CURSOR_API_KEY")])),
        ("ENV_SHADOWS_SECRET", payload(agents=[agent(env={"OPENAI_API_KEY": "x"})])),
        ("ENDPOINT_AUTH_HEADER", payload(agents=[endpoint])),
        ("JUDGE_REQUIRED", payload("hle", tasks_config={"task_set": "parity"})),
        ("JUDGE_NOT_USED", payload(execution_config={"judge_api_key_secret": "OPENAI_API_KEY"})),
        ("HARNESS_NOT_SUPPORTED", payload("hle", [agent(harness="codex")], **hle)),
        ("HARNESS_REQUIRED", payload("harbor/swe-smith-mini@1")),
        ("TASK_NOT_FOUND", payload(tasks_config={"task_names": ["terminal-bench/no-such-task"]})),
    ]


RULE_CASES = _rule_cases()


def test_rule_cases_cover_every_error_rule() -> None:
    from reconciler.specs.rules import RULES

    codes = {code for code, _ in RULE_CASES}
    grouped = {
        "JUDGE": {"JUDGE_REQUIRED", "JUDGE_NOT_USED"},
        "HARNESS_SUPPORT": {"HARNESS_NOT_SUPPORTED", "HARNESS_REQUIRED"},
    }
    for rule in RULES:
        if rule.code in ("HLE_PARITY_RECOMMENDED", "HARNESS_NOT_DEFAULT"):  # warnings, never a rejection
            continue
        assert grouped.get(rule.code, {rule.code}) <= codes, rule.code


@pytest.mark.parametrize(("code", "body"), RULE_CASES, ids=[code for code, _ in RULE_CASES])
def test_submit_rejected_by_rule(api: httpx.Client, code: str, body: dict[str, Any]) -> None:
    response = api.post(f"{API}/benchmark-runs", json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["code"] == "VALIDATION"
    assert code in {issue["code"] for issue in error["issues"]}
    assert all(set(issue) >= {"key", "message"} for issue in error["issues"])


def test_hle_without_parity_is_accepted_with_a_warning(api: httpx.Client) -> None:
    body = payload("hle", execution_config={"judge_api_key_secret": "HLE_JUDGE_API_KEY"})
    created = submit(api, body)
    assert [w["code"] for w in created["warnings"]] == ["HLE_PARITY_RECOMMENDED"]
    assert created["task_count"] == 120


def test_a_non_default_harness_is_accepted_with_a_warning(api: httpx.Client) -> None:
    # "Terminal-Bench 2.1's is `terminus-2`, and a run on another harness is not comparable with those scores."
    created = submit(api, small(agents=[agent(harness="codex")]))
    assert [w["code"] for w in created["warnings"]] == ["HARNESS_NOT_DEFAULT"]


# --- runs ---------------------------------------------------------------------------------


def test_run_list_pages_past_50_newest_first(target: Target, api: httpx.Client) -> None:
    ids = [submit(api, small(tasks_config={"task_names": EASY[:1]}))["id"] for _ in range(60)]
    first = api.get(f"{API}/benchmark-runs", params={"limit": 50}).json()
    assert (first["total_count"], first["has_more"], first["next_offset"], len(first["benchmark_runs"])) == (
        60,
        True,
        50,
        50,
    )
    second = api.get(f"{API}/benchmark-runs", params={"limit": 50, "offset": first["next_offset"]}).json()
    assert (second["has_more"], second["next_offset"], len(second["benchmark_runs"])) == (False, None, 10)
    listed = [r["id"] for r in first["benchmark_runs"] + second["benchmark_runs"]]
    assert listed == ids[::-1]
    item = first["benchmark_runs"][0]
    assert set(item) >= {
        "id", "name", "status", "benchmark_name", "benchmark_id", "created_at", "started_at", "completed_at",
        "creator_name", "creator_email", "platform_url", "agent_count", "best_pass_at_1", "ingested_results",
        "expected_results",
    }  # fmt: skip
    assert (item["agent_count"], item["expected_results"]) == (1, 1)


def test_run_list_filters_by_benchmark_id(api: httpx.Client) -> None:
    submit(api, small())
    hle = api.get(f"{API}/benchmarks/hle").json()["benchmark"]["id"]
    tb = api.get(f"{API}/benchmarks/terminal-bench-2-1").json()["benchmark"]["id"]
    assert api.get(f"{API}/benchmark-runs", params={"benchmark": hle}).json()["total_count"] == 0
    assert api.get(f"{API}/benchmark-runs", params={"benchmark": tb}).json()["total_count"] == 1


def test_benchmark_list_reports_the_runs_on_each_benchmark(api: httpx.Client) -> None:
    created = submit(api, small())
    entries = {b["source_ref"]: b for b in api.get(f"{API}/benchmarks").json()["benchmarks"]}
    tb = entries["terminal-bench-2-1"]
    assert (tb["run_count"], tb["running_count"], tb["last_run_name"]) == (1, 1, created["name"])
    assert tb["last_run_status"] in ("pending", "queued", "running")
    assert (entries["hle"]["run_count"], entries["hle"]["last_run_at"]) == (0, None)


def test_unknown_run_is_404(api: httpx.Client) -> None:
    for path in ("no-such-run", "no-such-run/logs", "no-such-run/outputs/manifest"):
        response = api.get(f"{API}/benchmark-runs/{path}")
        assert (response.status_code, response.json()["code"]) == (404, "RUN_NOT_FOUND")


def test_run_detail_by_name_has_every_part(api: httpx.Client) -> None:
    body = small(env_config={"LOCALPLATFORM_FORCE_STATUS": "finished", "SHARED": "a"})
    body["agents"][0]["env"] = {"OWN": "b"}
    created = submit(api, body)
    detail = api.get(f"{API}/benchmark-runs/{created['name']}").json()
    assert set(detail) == {
        "benchmark_run",
        "configuration",
        "agents",
        "progress",
        "totals",
        "agent_metrics",
        "is_internal_user",
    }
    config = detail["configuration"]
    assert (config["source_ref"], config["resolved_version"], config["benchmark_name"]) == (
        "terminal-bench-2-1",
        "2.1.0",
        "Terminal-Bench 2.1",
    )
    assert config["resolved_secret_scopes"] == {"OPENAI_API_KEY": "workspace"}
    assert config["task_filters"] == {"task_names": EASY}
    agent0 = detail["agents"][0]
    assert agent0["environment_variables"] == {"LOCALPLATFORM_FORCE_STATUS": "finished", "SHARED": "a", "OWN": "b"}
    assert set(agent0["aggregates"]) == {"reported_cost_usd", "mean_duration_seconds", "tokens_per_task"}
    assert detail["progress"]["expected"] == 2 and 0 <= detail["progress"]["ingested"] <= 2


def test_provided_secret_values_never_come_back(api: httpx.Client) -> None:
    body = small(secrets={"required": ["RUN_TOKEN"], "provided": {"RUN_TOKEN": "very-secret-value"}})
    created = submit(api, body)
    assert "very-secret-value" not in api.get(f"{API}/benchmark-runs/{created['id']}").text


def _add(seen: set[str], status: str) -> str:
    """Record `status` and pass it on: a wait predicate that also collects every status it saw."""
    seen.add(status)
    return status


def test_full_lifecycle_to_finished_with_downloadable_outputs(target: Target, api: httpx.Client) -> None:
    created = submit(api, small())
    seen = {created["status"]}
    detail = wait_for(
        target,
        api,
        created["id"],
        lambda d: _add(seen, d["benchmark_run"]["status"]) == "finished",
    )
    assert seen >= {"pending", "finished"} and seen <= {"pending", "queued", "running", "finished"}
    run = detail["benchmark_run"]
    assert (run["ingested_results"], run["expected_results"], detail["progress"]) == (
        2,
        2,
        {"ingested": 2, "expected": 2},
    )
    assert run["started_at"] and run["completed_at"]
    assert detail["agent_metrics"][0]["n_tasks"] == 2
    assert detail["agents"][0]["status"] == "finished"

    manifest = api.get(f"{API}/benchmark-runs/{created['id']}/outputs/manifest", params={"types": "all"}).json()
    paths = [f["path"] for f in manifest["files"]]
    assert paths[:3] == ["summary.csv", "results.csv", "logs.txt"]
    assert all(re.fullmatch(r"artifacts/r[0-9a-f]+/.+", p) for p in paths[3:]) and len(paths) == 7
    urls = api.post(
        f"{API}/benchmark-runs/{created['id']}/outputs/download-urls", json={"items": manifest["files"]}
    ).json()
    assert urls["expires_in"] == 900
    bare = target.bare()
    sizes = {f["path"]: f["size"] for f in manifest["files"]}
    for item in urls["items"]:
        response = bare.get(item["url"])
        assert response.status_code == 200
        assert len(response.content) == sizes[item["path"]]
    results = bare.get(urls["items"][1]["url"]).text
    rows = list(csv.reader(io.StringIO(results)))
    assert tuple(rows[0]) == RESULTS_COLUMNS and len(rows) == 3
    summary = list(csv.reader(io.StringIO(bare.get(urls["items"][0]["url"]).text)))
    assert tuple(summary[0]) == SUMMARY_COLUMNS


def test_manifest_lists_only_requested_types(finished: tuple[httpx.Client, str]) -> None:
    api, run_id = finished
    manifest = api.get(f"{API}/benchmark-runs/{run_id}/outputs/manifest", params={"types": "summary,logs"}).json()
    assert [f["path"] for f in manifest["files"]] == ["summary.csv", "logs.txt"]
    assert manifest["totals"]["files"] == 2


def test_manifest_on_a_pending_run_is_409(api: httpx.Client) -> None:
    created = submit(api, small())
    response = api.get(f"{API}/benchmark-runs/{created['id']}/outputs/manifest")
    assert (response.status_code, response.json()["code"]) == (409, "OUTPUTS_NOT_READY")


def test_download_urls_batch_must_hold_1_to_500_items(api: httpx.Client) -> None:
    created = submit(api, small())
    for items in ([], [{"path": "summary.csv"}] * 501):
        response = api.post(f"{API}/benchmark-runs/{created['id']}/outputs/download-urls", json={"items": items})
        assert response.status_code == 400


def test_tampered_download_url_is_403(target: Target, finished: tuple[httpx.Client, str]) -> None:
    api, run_id = finished
    item = api.post(
        f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": [{"path": "summary.csv"}]}
    ).json()["items"][0]
    response = target.bare().get(item["url"].replace("summary.csv", "results.csv"))
    assert (response.status_code, response.json()["code"]) == (403, "URL_SIGNATURE_INVALID")


def test_range_request_returns_206_and_416_when_unsatisfiable(
    target: Target, finished: tuple[httpx.Client, str]
) -> None:
    api, run_id = finished
    item = api.post(
        f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": [{"path": "results.csv"}]}
    ).json()["items"][0]
    bare = target.bare()
    whole = bare.get(item["url"]).content
    part = bare.get(item["url"], headers={"Range": "bytes=10-29"})
    assert (part.status_code, part.content, part.headers["Content-Range"]) == (
        206,
        whole[10:30],
        f"bytes 10-29/{len(whole)}",
    )
    tail = bare.get(item["url"], headers={"Range": "bytes=-5"})
    assert tail.content == whole[-5:]
    beyond = bare.get(item["url"], headers={"Range": f"bytes={len(whole)}-"})
    assert (beyond.status_code, beyond.headers["Content-Range"]) == (416, f"bytes */{len(whole)}")


def test_logs_page_older_from_the_newest_oldest_first_within_a_page(finished: tuple[httpx.Client, str]) -> None:
    api, run_id = finished
    url = f"{API}/benchmark-runs/{run_id}/logs"
    everything = api.get(url, params={"limit": 200, "direction": "newer"}).json()
    assert everything["next_cursor"] is None
    entries = everything["logs"]
    assert entries[0]["step"] == "submit" and entries[-1]["step"] == "finish"
    assert set(entries[0]) == {"timestamp", "level", "step", "message", "details"}
    pages, cursor = [], None
    while True:
        page = api.get(url, params={"limit": 2, "direction": "older", **({"cursor": cursor} if cursor else {})}).json()
        pages.append(page["logs"])
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages[0] == entries[-2:]
    assert [e for page in reversed(pages) for e in page] == entries


def test_logs_limit_above_200_or_a_foreign_cursor_is_400(api: httpx.Client) -> None:
    created = submit(api, small())
    for params in ({"limit": 201}, {"limit": 0}, {"cursor": "not-ours"}, {"direction": "sideways"}):
        response = api.get(f"{API}/benchmark-runs/{created['id']}/logs", params=params)
        assert response.status_code == 400, params


def test_stop_keeps_produced_results_and_cancels_the_rest(target: Target, api: httpx.Client) -> None:
    easy = [t.name for t in TB.tasks if t.difficulty == "easy"][:8]
    body = small(tasks_config={"task_names": easy}, execution_config={"max_concurrent_attempts": 2})
    created = submit(api, body)
    before = wait_for(target, api, created["id"], lambda d: d["benchmark_run"]["ingested_results"] >= 1, step=40)
    stopped = api.post(f"{API}/benchmark-runs/{created['id']}/stop", json={})
    assert stopped.status_code == 200 and stopped.json()["status"] == "stopped"
    target.tick(5000)
    detail = api.get(f"{API}/benchmark-runs/{created['id']}").json()
    assert detail["benchmark_run"]["status"] == "stopped"
    ingested = detail["benchmark_run"]["ingested_results"]
    assert before["benchmark_run"]["ingested_results"] <= ingested < 8
    assert detail["totals"]["cancelled"] == 8 - ingested
    assert detail["agents"][0]["status"] == "stopped"
    logs = api.get(f"{API}/benchmark-runs/{created['id']}/logs", params={"limit": 1}).json()["logs"]
    assert logs[0]["step"] == "stop"


def test_stop_on_a_terminal_run_is_409(api: httpx.Client) -> None:
    created = submit(api, small())
    assert api.post(f"{API}/benchmark-runs/{created['id']}/stop", json={}).status_code == 200
    again = api.post(f"{API}/benchmark-runs/{created['id']}/stop", json={})
    assert (again.status_code, again.json()["code"]) == (409, "RUN_NOT_ACTIVE")


def test_forced_failure_ends_failed_with_an_error_log(target: Target, api: httpx.Client) -> None:
    created = submit(api, small(env_config={"LOCALPLATFORM_FORCE_STATUS": "failed"}))
    detail = wait_for(target, api, created["id"], status_in("finished", "failed"))
    assert detail["benchmark_run"]["status"] == "failed"
    last = api.get(f"{API}/benchmark-runs/{created['id']}/logs", params={"limit": 1}).json()["logs"][-1]
    assert (last["level"], last["step"]) == ("error", "finish")


# --- secrets --------------------------------------------------------------------------------


def test_seeded_secrets_in_both_scopes_without_values(api: httpx.Client) -> None:
    body = api.get(f"{API}/environment-secrets").json()
    names = {(s["scope"], s["name"]) for s in body["environment_secrets"]}
    assert names == {
        ("workspace", "OPENAI_API_KEY"),
        ("workspace", "ANTHROPIC_API_KEY"),
        ("user", "HLE_JUDGE_API_KEY"),
        ("user", "HF_TOKEN"),
    }
    assert "value" not in body["environment_secrets"][0]
    assert api.get(f"{API}/environment-secrets", params={"scope": "user"}).json()["total_count"] == 2


def test_secret_upsert_then_delete(api: httpx.Client) -> None:
    url = f"{API}/environment-secrets"
    created = api.post(url, json={"name": "MY_KEY", "value": "v1", "scope": "workspace"})
    assert created.status_code == 201 and "v1" not in created.text
    assert api.post(url, json={"name": "MY_KEY", "value": "v2", "scope": "workspace"}).status_code == 200
    assert api.get(url, params={"scope": "workspace"}).json()["total_count"] == 3
    assert api.request("DELETE", url, json={"name": "MY_KEY", "scope": "workspace"}).status_code == 200
    gone = api.request("DELETE", url, json={"name": "MY_KEY", "scope": "workspace"})
    assert (gone.status_code, gone.json()["code"]) == (404, "SECRET_NOT_FOUND")


def test_secret_with_a_bad_name_is_400(api: httpx.Client) -> None:
    response = api.post(f"{API}/environment-secrets", json={"name": "lower", "value": "v", "scope": "user"})
    assert (response.status_code, response.json()["field"]) == (400, "name")


# --- rate limiting ---------------------------------------------------------------------------


@pytest.fixture(params=["inprocess", "server"])
def rate_limited(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {TOKEN}", "X-Osmosis-Workspace": "limited"}
    if request.param == "inprocess":
        app = create_app(
            tmp_path / "db.sqlite3", token=TOKEN, clock=ManualClock(), faults=Faults(rate_limit_per_second=1)
        )
        transport = InProcessTransport(app)
        with httpx.Client(base_url="http://testserver", transport=transport, headers=headers) as client:
            yield client
        transport.close()
    else:
        with (
            served(tmp_path, "--token", TOKEN, "--rate-limit", "1") as (url, _),
            httpx.Client(base_url=url, headers=headers) as client,
        ):
            yield client


def test_rate_limited_request_is_429_with_retry_after(rate_limited: httpx.Client) -> None:
    assert rate_limited.get(f"{API}/benchmarks").status_code == 200
    response = rate_limited.get(f"{API}/benchmarks")
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) >= 1
    assert response.json()["code"] == "RATE_LIMITED"
