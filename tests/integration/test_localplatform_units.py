"""The local platform's own guarantees: determinism, concurrency, expiry, leaderboards, faults, store."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.localplatform import Faults, create_app
from reconciler.localplatform.catalog import BY_KEY
from reconciler.localplatform.inprocess import InProcessTransport
from reconciler.localplatform.simulator import AgentPlan, SimInput, build_schedule

API = "/api/cli"
TB = BY_KEY["terminal-bench-2-1"]
EASY = [t.name for t in TB.tasks if t.difficulty == "easy"][:3]
FINISH = {"LOCALPLATFORM_FORCE_STATUS": "finished"}


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


class Local:
    """One in-process platform with a manual clock."""

    def __init__(
        self,
        db: Path,
        *,
        seed: int = 3,
        token: str | None = None,
        faults: Faults | None = None,
        stop_cleanup: float = 0.0,
    ) -> None:
        self.clock = Clock()
        app = create_app(db, token=token, seed=seed, clock=self.clock, faults=faults, stop_cleanup=stop_cleanup)
        self.transport = InProcessTransport(app)
        self.client = httpx.Client(
            base_url="http://testserver", transport=self.transport, headers={"X-Osmosis-Workspace": "units"}
        )

    def close(self) -> None:
        self.client.close()
        self.transport.close()

    def submit(self, body: dict[str, Any]) -> str:
        response = self.client.post(f"{API}/benchmark-runs", json=body)
        assert response.status_code == 201, response.text
        run_id: str = response.json()["id"]
        return run_id

    def detail(self, run_id: str) -> dict[str, Any]:
        body: dict[str, Any] = self.client.get(f"{API}/benchmark-runs/{run_id}").json()
        return body

    def finish(self, run_id: str) -> dict[str, Any]:
        self.clock.now += 10_000  # far beyond any small run at the default speed
        detail = self.detail(run_id)
        assert detail["benchmark_run"]["status"] == "finished"
        return detail

    def file(self, run_id: str, path: str) -> bytes:
        urls = self.client.post(
            f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": [{"path": path}]}
        )
        response = self.client.get(urls.json()["items"][0]["url"])
        assert response.status_code == 200
        return response.content


@pytest.fixture
def local(tmp_path: Path) -> Iterator[Local]:
    platform = Local(tmp_path / "db.sqlite3")
    yield platform
    platform.close()


def agent(model: str = "openai/gpt-5.2", key: str = "OPENAI_API_KEY", **extra: Any) -> dict[str, Any]:
    return {"model": {"type": "provider", "model": model, "api_key_secret": key}, "env": {}, **extra}


def body(
    benchmark: str = "terminal-bench-2-1", agents: list[dict[str, Any]] | None = None, **parts: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "experiment_config": {"benchmark": benchmark},
        "agents": agents or [agent()],
        "env_config": FINISH,
    }
    out.update(parts)
    return out


def test_same_seed_and_submits_give_byte_identical_results(tmp_path: Path) -> None:
    answers = []
    for name in ("a", "b"):
        platform = Local(tmp_path / f"{name}.sqlite3", seed=11)
        try:
            run_id = platform.submit(body(agents=[agent(), agent("anthropic/claude-sonnet-4.5", "ANTHROPIC_API_KEY")]))
            platform.clock.now += 5.0  # mid-run: a snapshot
            mid = platform.client.get(f"{API}/benchmark-runs/{run_id}").content
            platform.finish(run_id)
            answers.append((mid, platform.file(run_id, "results.csv"), platform.file(run_id, "summary.csv")))
        finally:
            platform.close()
    assert answers[0] == answers[1]
    assert answers[0][1].count(b"\n") == 1 + 2 * len(TB.tasks)


def test_a_runs_outcome_is_the_same_from_whichever_commit_it_was_submitted(tmp_path: Path) -> None:
    # the submitting commit changes with every commit of a repository; outcomes keyed on it made
    # the README's job finish or fail by chance
    files = []
    for commit in ("a" * 40, "b" * 40):
        platform = Local(tmp_path / f"{commit[0]}.sqlite3", seed=11)
        try:
            run_id = platform.submit(body(env_config={**FINISH, "RECONCILER_COMMIT": commit}))
            platform.finish(run_id)
            files.append(platform.file(run_id, "results.csv"))
        finally:
            platform.close()
    assert files[0] == files[1]


def test_another_seed_gives_other_outcomes(tmp_path: Path) -> None:
    files = []
    for seed in (1, 2):
        platform = Local(tmp_path / f"{seed}.sqlite3", seed=seed)
        try:
            run_id = platform.submit(body())
            platform.finish(run_id)
            files.append(platform.file(run_id, "results.csv"))
        finally:
            platform.close()
    assert files[0] != files[1]


@pytest.mark.parametrize("concurrency", [1, 3, 7])
def test_schedule_never_overlaps_more_than_max_concurrent_attempts(concurrency: int) -> None:
    inp = SimInput(
        seed=5,
        run_id="run",
        content="c",
        tasks=TB.tasks[:30],
        agents=(AgentPlan("openai/gpt-5.2", "codex", "finished"), AgentPlan("x/unknown", None, "finished")),
        attempts=2,
        max_concurrent=concurrency,
        force="finished",
    )
    slots = build_schedule(inp).slots
    moments = sorted({s.start for s in slots if s.start is not None})
    overlap = [sum(1 for s in slots if s.start is not None and s.start <= t < s.end) for t in moments]
    assert max(overlap) == concurrency
    assert len(slots) == 30 * 2 * 2


def test_results_csv_respects_max_concurrent_attempts(local: Local) -> None:
    run_id = local.submit(
        body(execution_config={"max_concurrent_attempts": 2}, tasks_config={"categories": ["security"]})
    )
    local.finish(run_id)
    rows = [line.split(",") for line in local.file(run_id, "results.csv").decode().splitlines()[1:]]
    spans = [(r[14], r[15]) for r in rows]
    for start, _ in spans:
        assert sum(1 for s, e in spans if s <= start < e) <= 2


def test_download_url_expires_after_15_minutes(local: Local) -> None:
    run_id = local.submit(body(tasks_config={"task_names": EASY}))
    local.finish(run_id)
    url = local.client.post(
        f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": [{"path": "summary.csv"}]}
    ).json()["items"][0]["url"]
    local.clock.now += 899
    assert local.client.get(url).status_code == 200
    local.clock.now += 2
    expired = local.client.get(url)
    assert (expired.status_code, expired.json()["code"]) == (403, "URL_EXPIRED")


def test_snapshot_url_keeps_the_size_its_manifest_announced(local: Local) -> None:
    run_id = local.submit(body(execution_config={"max_concurrent_attempts": 1}))
    local.clock.now += 2.0
    manifest = local.client.get(f"{API}/benchmark-runs/{run_id}/outputs/manifest", params={"types": "results"}).json()
    urls = local.client.post(
        f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": manifest["files"]}
    ).json()
    local.clock.now += 5.0  # more results land meanwhile
    assert len(local.client.get(urls["items"][0]["url"]).content) == manifest["files"][0]["size"]


def test_leaderboard_ranks_both_agents_of_a_finished_full_run(local: Local) -> None:
    run_id = local.submit(body(agents=[agent(harness="codex"), agent("openai/gpt-5-mini")]))
    local.finish(run_id)
    board = local.client.get(f"{API}/benchmarks/terminal-bench-2-1").json()["leaderboard"]
    assert len(board) == 2
    assert board[0]["rank"] == 1 and all(isinstance(e["rank"], int) for e in board)
    assert {(e["harness"], e["model"]) for e in board} == {
        ("codex", "openai/gpt-5.2"),
        ("terminus-2", "openai/gpt-5-mini"),
    }
    assert all(e["task_set"] == "full" and e["run"]["id"] == run_id for e in board)
    assert board[0]["pass_at_1"]["n"] == len(TB.tasks)


def test_filtered_runs_are_never_ranked_but_parity_runs_are(local: Local) -> None:
    local.finish(local.submit(body(tasks_config={"task_names": EASY})))
    assert local.client.get(f"{API}/benchmarks/terminal-bench-2-1").json()["leaderboard"] == []
    hle = body(
        "hle", tasks_config={"task_set": "parity"}, execution_config={"judge_api_key_secret": "HLE_JUDGE_API_KEY"}
    )
    local.finish(local.submit(hle))
    board = local.client.get(f"{API}/benchmarks/hle").json()["leaderboard"]
    assert [e["task_set"] for e in board] == ["parity"]


def test_more_attempts_give_a_pass_at_k_curve_and_cluster_interval(local: Local) -> None:
    run_id = local.submit(body(tasks_config={"task_names": EASY}, execution_config={"attempts_per_task": 3}))
    metrics = local.finish(run_id)["agent_metrics"][0]
    assert [p["k"] for p in metrics["pass_at_k"]] == [1, 2, 3]
    assert metrics["pass_at_1"]["method"] == "cluster-normal"


def test_in_process_mode_without_token_skips_auth(local: Local) -> None:
    assert local.client.get(f"{API}/benchmarks", headers={"Authorization": "Bearer anything"}).status_code == 200


def test_error_rate_answers_503_json(tmp_path: Path) -> None:
    platform = Local(tmp_path / "db.sqlite3", faults=Faults(error_rate=1.0))
    try:
        response = platform.client.get(f"{API}/benchmarks")
        assert (response.status_code, response.json()["code"]) == (503, "SERVICE_UNAVAILABLE")
        assert response.headers["X-Osmosis-Version-Status"] == "current"
    finally:
        platform.close()


def test_truncated_download_is_shorter_with_a_matching_length(tmp_path: Path) -> None:
    platform = Local(tmp_path / "db.sqlite3", faults=Faults(truncate_rate=1.0))
    try:
        run_id = platform.submit(body(tasks_config={"task_names": EASY}))
        platform.finish(run_id)
        manifest = platform.client.get(f"{API}/benchmark-runs/{run_id}/outputs/manifest").json()
        urls = platform.client.post(
            f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": manifest["files"]}
        ).json()
        response = platform.client.get(urls["items"][1]["url"])
        assert response.status_code == 200
        assert 0 < len(response.content) < manifest["files"][1]["size"]
        assert int(response.headers["Content-Length"]) == len(response.content)
    finally:
        platform.close()


def test_consecutive_processes_over_one_file_see_one_world(tmp_path: Path) -> None:
    first = Local(tmp_path / "db.sqlite3")
    run_id = first.submit(body(tasks_config={"task_names": EASY}))
    submitted_at = first.clock.now
    first.close()
    second = Local(tmp_path / "db.sqlite3")
    try:
        second.clock.now = submitted_at + 10_000
        listed = second.client.get(f"{API}/benchmark-runs").json()["benchmark_runs"]
        assert [(r["id"], r["status"]) for r in listed] == [(run_id, "finished")]
        assert second.submit(body()) != run_id  # the run counter carried over
        assert second.client.get(f"{API}/benchmark-runs").json()["benchmark_runs"][0]["name"].endswith("-2")
    finally:
        second.close()


def test_concurrent_submits_from_two_apps_get_unique_names(tmp_path: Path) -> None:
    platforms = [Local(tmp_path / "db.sqlite3"), Local(tmp_path / "db.sqlite3")]
    names: list[str] = []
    lock = threading.Lock()

    def work(platform: Local) -> None:
        for _ in range(8):
            response = platform.client.post(f"{API}/benchmark-runs", json=body(tasks_config={"task_names": EASY[:1]}))
            with lock:
                names.append(response.json()["name"])

    threads = [threading.Thread(target=work, args=(p,)) for p in platforms]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for platform in platforms:
        platform.close()
    assert len(set(names)) == 16
    assert sorted(int(n.rsplit("-", 1)[1]) for n in names) == list(range(1, 17))


def test_a_newer_schema_version_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite3"
    Local(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    conn.close()
    with pytest.raises(RuntimeError, match="schema version 99"):
        create_app(db)


def test_platform_command_is_listed_and_has_serve() -> None:
    from reconciler.cli import root

    runner = CliRunner()
    assert "platform" in runner.invoke(root, ["--help"]).output
    result = runner.invoke(root, ["platform", "serve", "--help"])
    assert result.exit_code == 0 and "--truncate-rate" in result.output


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_serve_prints_its_url_and_exits_0_on_a_signal(tmp_path: Path, sig: signal.Signals) -> None:
    cmd = [
        sys.executable,
        "-m",
        "reconciler.cli",
        "platform",
        "serve",
        "--port",
        "0",
        "--db",
        str(tmp_path / "p.sqlite3"),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("serving on http://127.0.0.1:") and " token=" in line
        url = line.split()[2]
        assert httpx.get(f"{url}{API}/benchmarks").status_code == 401  # a random token was required
        proc.send_signal(sig)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def test_a_run_listing_counts_runs_another_process_submitted_since(tmp_path: Path) -> None:
    """The run count is remembered between list pages; a submit through another connection to
    the same database file (another `platform serve`, a local plan) still shows at once."""
    here, there = Local(tmp_path / "db.sqlite3"), Local(tmp_path / "db.sqlite3")
    try:
        here.submit(body())
        assert here.client.get(f"{API}/benchmark-runs").json()["total_count"] == 1
        there.submit(body())
        listed = here.client.get(f"{API}/benchmark-runs").json()
        assert listed["total_count"] == 2 and len(listed["benchmark_runs"]) == 2
        here.submit(body())
        assert here.client.get(f"{API}/benchmark-runs", params={"offset": 2}).json()["total_count"] == 3
    finally:
        here.close()
        there.close()


def test_run_pages_follow_one_another_without_gaps_or_repeats(local: Local) -> None:
    ids = [local.submit(body()) for _ in range(7)]
    pages = [local.client.get(f"{API}/benchmark-runs", params={"limit": 3, "offset": o}).json() for o in (0, 3, 6, 9)]
    listed = [r["id"] for page in pages for r in page["benchmark_runs"]]
    assert listed == ids[::-1]
    assert [p["next_offset"] for p in pages] == [3, 6, None, None]


@pytest.mark.parametrize(
    "execution",
    [{"timeout_multiplier": float("inf")}, {"timeout_multiplier": float("nan")}, {"max_retries": 10**20}],
    ids=["infinity", "nan", "past-64-bits"],
)
def test_a_submit_with_a_number_no_answer_could_carry_is_refused_and_the_list_still_reads(
    local: Local, execution: dict[str, Any]
) -> None:
    """Kept, such a run would make every later listing fail: it is refused at the door."""
    raw = json.dumps(body(execution_config=execution)).encode()  # Python writes inf as `Infinity`
    answer = local.client.post(f"{API}/benchmark-runs", content=raw, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["code"] == "VALIDATION"
    listing = local.client.get(f"{API}/benchmark-runs")
    assert listing.status_code == 200 and listing.json()["total_count"] == 0


def test_a_page_of_ended_runs_shows_a_submit_made_after_it_was_read(tmp_path: Path) -> None:
    """A page whose runs have all ended is remembered whole; any write, here or through another
    connection to the same file, shows on the next read of it."""
    here, there = Local(tmp_path / "db.sqlite3"), Local(tmp_path / "db.sqlite3")
    try:
        first = here.submit(body())
        here.finish(first)
        there.clock.now = here.clock.now
        before = here.client.get(f"{API}/benchmark-runs").json()
        assert here.client.get(f"{API}/benchmark-runs").json() == before  # read again, unchanged
        second = here.submit(body())
        assert [r["id"] for r in here.client.get(f"{API}/benchmark-runs").json()["benchmark_runs"]] == [second, first]
        here.finish(second)
        here.client.get(f"{API}/benchmark-runs")  # remembered again, now with both ended
        third = there.submit(body())
        listed = here.client.get(f"{API}/benchmark-runs").json()
        assert [r["id"] for r in listed["benchmark_runs"]] == [third, second, first]
        assert listed["total_count"] == 3
    finally:
        here.close()
        there.close()


def test_a_page_read_while_a_run_is_going_shows_it_finished_once_the_clock_passes_its_end(local: Local) -> None:
    """Nothing is written when a run ends, so a page is remembered only once every run on it has."""
    going = local.submit(body())
    assert local.client.get(f"{API}/benchmark-runs").json()["benchmark_runs"][0]["status"] != "finished"
    local.clock.now += 10_000
    assert local.client.get(f"{API}/benchmark-runs").json()["benchmark_runs"][0]["status"] == "finished"
    assert local.detail(going)["benchmark_run"]["status"] == "finished"


# the platform runs 600 simulated seconds a second: the runs queue and start in the first half
# second, and 25 s cover them to their end
MOMENTS = st.one_of(st.floats(min_value=0, max_value=0.5), st.floats(min_value=0, max_value=25))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(moments=st.lists(MOMENTS, min_size=1, max_size=10), stop_at=st.integers(-1, 9))
def test_a_listed_run_always_reads_as_its_own_detail_at_the_same_clock(
    tmp_path: Path, moments: list[float], stop_at: int
) -> None:
    """Pages are answered again while no run on them can have changed (RunView.unchanged); at any
    clock reading, forwards or back, each item is still what the run's detail shows at once."""
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        local = Local(Path(folder) / "db.sqlite3")
        try:
            start = local.clock.now
            tasks: dict[str, Any] = {"task_names": EASY}
            ids = [
                local.submit(body(env_config={}, tasks_config=tasks)),
                local.submit(body(env_config={}, agents=[agent(), agent("anthropic/claude-x", "ANTHROPIC_API_KEY")])),
                local.submit(body(env_config={}, execution_config={"attempts_per_task": 2}, tasks_config=tasks)),
            ]
            for n, moment in enumerate(moments):
                local.clock.now = start + moment
                if n == stop_at:
                    local.client.post(f"{API}/benchmark-runs/{ids[1]}/stop")
                for _ in range(2):  # rendered, then answered again
                    listed = local.client.get(f"{API}/benchmark-runs").json()["benchmark_runs"]
                    assert listed == [local.detail(item["id"])["benchmark_run"] for item in listed]
        finally:
            local.close()


def test_a_stopped_run_shows_stopped_only_once_its_sandboxes_are_cleaned_up(tmp_path: Path) -> None:
    # platform docs: "The run moves to `stopped` once the platform finishes cleaning up its sandboxes."
    local = Local(tmp_path / "db.sqlite3", stop_cleanup=600.0)  # 600 simulated seconds, one clock second
    try:
        run_id = local.submit({"experiment_config": {"benchmark": "terminal-bench-2-1"}, "agents": [_agent()]})

        def status() -> str:
            found: str = local.client.get(f"{API}/benchmark-runs/{run_id}").json()["benchmark_run"]["status"]
            return found

        def stop() -> int:
            return local.client.post(f"{API}/benchmark-runs/{run_id}/stop", json={}).status_code

        local.clock.now += 0.5
        before = status()
        assert before in ("pending", "queued", "running")
        assert (stop(), status()) == (200, before)  # asked, still cleaning up
        assert stop() == 200  # asked again meanwhile: accepted, nothing changes
        local.clock.now += 1.0
        assert status() == "stopped"
        assert stop() == 409
    finally:
        local.close()


def _agent() -> dict[str, Any]:
    return {"model": {"type": "provider", "model": "openai/gpt-5.2", "api_key_secret": "OPENAI_API_KEY"}, "env": {}}


def test_a_concurrency_far_above_the_runs_attempts_is_served_like_one_that_fits(tmp_path: Path) -> None:
    # the simulator keeps no more lanes than the run has attempts: 2**62 is not a list of that size
    local = Local(tmp_path / "db.sqlite3")
    try:
        body = {
            "experiment_config": {"benchmark": "terminal-bench-2-1"},
            "agents": [_agent()],
            "tasks_config": {"task_names": EASY[:1]},
            "execution_config": {"max_concurrent_attempts": 2**62},
        }
        run_id = local.submit(body)
        assert local.client.get(f"{API}/benchmark-runs/{run_id}").status_code == 200
    finally:
        local.close()
