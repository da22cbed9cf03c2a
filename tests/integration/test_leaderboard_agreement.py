"""One leaderboard everywhere: the API, the platform's pages and the rendered Markdown agree with
a leaderboard recomputed from the downloaded `results.csv` files, entrant by entrant.

The example is multi-attempt and multi-agent on HLE: a full run with 3 attempts and two agents,
a parity run with 2 attempts and one agent, and a full run with 1 attempt and one agent, so the
list mixes task sets and attempt counts. The recomputation (`tests/leaderboard_oracle.py`) does
not use `reconciler.core.scoring`.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest

from reconciler.core.run_results import parse_results
from reconciler.localplatform import create_app
from reconciler.localplatform.inprocess import InProcessTransport
from reconciler.render.leaderboard import order_rows, parse_rows, render_markdown
from tests.leaderboard_oracle import OracleEntrant, entrants_from_results, leaderboard, per_task

API = "/api/cli"
WS = "agreement"
FINISH = {"LOCALPLATFORM_FORCE_STATUS": "finished"}
RANK_BYS = ["pass_at_1", "pass_at_k", "cost_per_task", "time_per_task", "tokens_per_task"]
PLACES = {"pass_at_1": 9, "pass_at_k": 9, "cost_per_task": 6, "time_per_task": 3, "tokens_per_task": 1}  # API rounding
# (models with their key record, task set, attempts per task)
RUNS = [
    ([("openai/gpt-5.2", "OPENAI_API_KEY"), ("anthropic/claude-sonnet-4.5", "ANTHROPIC_API_KEY")], "full", 3),
    ([("openai/gpt-5-mini", "OPENAI_API_KEY")], "parity", 2),
    ([("anthropic/claude-haiku-4.5", "ANTHROPIC_API_KEY")], "full", 1),
]


class Clock:
    def __init__(self) -> None:
        self.now = 1_900_000_000.0

    def __call__(self) -> float:
        return self.now


class Example:
    def __init__(
        self, client: httpx.Client, entrants: list[OracleEntrant], summaries: list[bytes], results: list[bytes]
    ) -> None:
        self.client, self.entrants, self.summaries, self.results = client, entrants, summaries, results

    def api(self, rank_by: str) -> list[dict[str, Any]]:
        response = self.client.get(f"{API}/benchmarks/hle", params={"rank_by": rank_by})
        assert response.status_code == 200, response.text
        board: list[dict[str, Any]] = response.json()["leaderboard"]
        return board


def _body(models: list[tuple[str, str]], task_set: str, attempts: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "experiment_config": {"benchmark": "hle"},
        "agents": [{"model": {"type": "provider", "model": m, "api_key_secret": key}, "env": {}} for m, key in models],
        "execution_config": {"attempts_per_task": attempts, "judge_api_key_secret": "HLE_JUDGE_API_KEY"},
        "env_config": FINISH,
    }
    if task_set == "parity":
        body["tasks_config"] = {"task_set": "parity"}
    return body


def _download(client: httpx.Client, run_id: str, path: str) -> bytes:
    urls = client.post(f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": [{"path": path}]})
    response = client.get(urls.json()["items"][0]["url"])
    assert response.status_code == 200
    return response.content


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Example]:
    clock = Clock()
    app = create_app(tmp_path_factory.mktemp("agreement") / "db.sqlite3", token=None, seed=7, clock=clock)
    transport = InProcessTransport(app)
    client = httpx.Client(base_url="http://testserver", transport=transport, headers={"X-Osmosis-Workspace": WS})
    submitted = []
    for models, task_set, attempts in RUNS:
        response = client.post(f"{API}/benchmark-runs", json=_body(models, task_set, attempts))
        assert response.status_code == 201, response.text
        submitted.append((response.json()["id"], task_set))
    clock.now += 100_000  # far beyond these runs at the default speed
    entrants: list[OracleEntrant] = []
    summaries: list[bytes] = []
    results: list[bytes] = []
    for run_id, task_set in submitted:
        assert client.get(f"{API}/benchmark-runs/{run_id}").json()["benchmark_run"]["status"] == "finished"
        results.append(_download(client, run_id, "results.csv"))
        entrants += entrants_from_results(results[-1], run_id=run_id, task_set=task_set)
        summaries.append(_download(client, run_id, "summary.csv"))
    yield Example(client, entrants, summaries, results)
    client.close()
    transport.close()


def _close(a: float | None, b: float | None, places: int) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, abs_tol=10 ** (-places) * 0.51)


def _value(entry: dict[str, Any], rank_by: str, k: int) -> float | None:
    if rank_by == "pass_at_1":
        found: float | None = entry["pass_at_1"]["value"]
        return found
    if rank_by == "pass_at_k":
        return next((p["value"] for p in entry["pass_at_k"] if p["k"] == k), None)
    return entry["mean_duration_seconds" if rank_by == "time_per_task" else rank_by]  # type: ignore[no-any-return]


def test_the_example_mixes_task_sets_and_attempt_counts(example: Example) -> None:
    assert sorted((e.task_set, e.deepest_k) for e in example.entrants) == [
        ("full", 1),
        ("full", 3),
        ("full", 3),
        ("parity", 2),
    ]


@pytest.mark.parametrize("rank_by", RANK_BYS)
def test_the_api_matches_the_recomputed_leaderboard(example: Example, rank_by: str) -> None:
    oracle = leaderboard(example.entrants, rank_by)
    board = example.api(rank_by)
    k = max(e.deepest_k for e in example.entrants)
    assert [(e["harness"] or "", e["model"]) for e in board] == [(r.harness, r.model) for r in oracle]
    for entry, row in zip(board, oracle, strict=True):
        assert (entry["rank"], entry["tied"]) == (row.rank, row.tied), entry["model"]
        assert _close(_value(entry, rank_by, k), row.value, PLACES[rank_by])


def test_per_task_figures_all_sum_every_attempt_of_a_task(example: Example) -> None:
    # "Cost / task", "Time / task" and "Tokens / task" mean the same thing: all of a task's
    # attempts summed, averaged over tasks (the leaderboard's footnote says so).
    board = {(e["harness"] or "", e["model"]): e for e in example.api("pass_at_1")}
    for entrant in example.entrants:
        entry = board[(entrant.harness, entrant.model)]
        expected = per_task(entrant)
        assert _close(entry["cost_per_task"], expected["cost_per_task"], 6)
        assert _close(entry["mean_duration_seconds"], expected["mean_duration_seconds"], 3)
        assert _close(entry["tokens_per_task"], expected["tokens_per_task"], 1)


def test_the_results_comment_reads_the_same_per_task_figures_as_the_leaderboard(example: Example) -> None:
    # the pull-request results comment parses results.csv itself (reconciler.core.run_results)
    board = {(e["harness"] or "", e["model"]): e for e in example.api("pass_at_1")}
    agents = [agent for text in example.results for agent in parse_results(text.decode())]
    assert len(agents) == len(board)
    for agent in agents:
        entry = board[(agent.harness or "", agent.model)]
        assert _close(agent.cost_per_task, entry["cost_per_task"], 6)
        assert _close(agent.mean_duration_seconds, entry["mean_duration_seconds"], 3)
        assert _close(agent.tokens_per_task, entry["tokens_per_task"], 1)


def test_summary_csv_carries_the_pass_at_k_interval_the_api_reports(example: Example) -> None:
    # "Both are reported with a 95% confidence interval": wherever pass@1's is, pass@k's is too
    board = {(e["harness"] or "", e["model"]): e for e in example.api("pass_at_1")}
    rows = [row for summary in example.summaries for row in csv.DictReader(io.StringIO(summary.decode()))]
    assert len(rows) == len(example.entrants)
    for row in rows:
        deepest = board[(row["harness"], row["model"])]["pass_at_k"][-1]
        assert int(row["k"]) == deepest["k"]
        for column, key in (("pass_at_k_ci_low", "ci_low"), ("pass_at_k_ci_high", "ci_high")):
            assert _close(float(row[column]), deepest[key], 6)


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "tr" and "data-rank" in found:
            self.rows.append(found)


@pytest.mark.parametrize("rank_by", RANK_BYS)
def test_the_benchmark_page_matches_the_recomputed_leaderboard(example: Example, rank_by: str) -> None:
    oracle = leaderboard(example.entrants, rank_by)
    page = example.client.get("/benchmarks/hle", params={"rank_by": rank_by, "workspace": WS})
    assert page.status_code == 200
    parser = _Rows()
    parser.feed(page.text)
    assert len(parser.rows) == len(oracle)
    k = max(e.deepest_k for e in example.entrants)
    for attrs, row in zip(parser.rows, oracle, strict=True):
        assert (attrs["data-harness"], attrs["data-model"]) == (row.harness, row.model)
        assert (int(attrs["data-rank"]), attrs["data-tied"] == "true") == (row.rank, row.tied)
        assert attrs["data-k"] == str(k)
        key = {
            "pass_at_1": "data-pass-at-1",
            "pass_at_k": "data-pass-at-k",
            "cost_per_task": "data-cost-per-task",
            "time_per_task": "data-time-per-task",
            "tokens_per_task": "data-tokens-per-task",
        }[rank_by]
        shown = float(attrs[key]) if attrs[key] else None
        assert _close(shown, row.value, PLACES[rank_by])


def test_the_page_explains_a_rank_1_that_is_not_a_tie(example: Example) -> None:
    # the example's parity entrant sits between the best and a full-run entrant tied with it
    board = example.api("pass_at_1")
    (position,) = [i for i, e in enumerate(board) if e["rank"] == 1 and not e["tied"]]
    page = example.client.get("/benchmarks/hle", params={"workspace": WS}).text
    note = re.search(rf'<li id="tie-{position + 1}"[^>]*>(.*?)</li>', page, re.S)
    assert note is not None and "Rank 1 without a tie" in note.group(1)


MARKDOWN_ROW = re.compile(r"^\| (?P<rank>\d+)(?P<tied>\\\*)? \| (?P<agent>[^|]+) \|")


@pytest.mark.parametrize("rank_by", RANK_BYS)
def test_the_rendered_markdown_matches_the_recomputed_leaderboard(example: Example, rank_by: str) -> None:
    # the renderer reads the default (pass@1) leaderboard, as reconciler's client does, and
    # ranks it by the spec's metric itself
    rows = order_rows(parse_rows(example.api("pass_at_1")), rank_by)  # type: ignore[arg-type]
    text = render_markdown(
        title="HLE leaderboard",
        benchmark_key="hle",
        spec_path="specs/benchmarks/hle.toml",
        rows=rows,
        rank_by=rank_by,  # type: ignore[arg-type]
        scope="workspace",
    )
    found = [m.groupdict() for line in text.splitlines() if (m := MARKDOWN_ROW.match(line))]
    oracle = leaderboard(example.entrants, rank_by)
    assert [(int(f["rank"]), f["tied"] is not None) for f in found] == [(r.rank, r.tied) for r in oracle]
    assert [f["agent"].strip() for f in found] == [f"{r.model} ({r.harness or 'default harness'})" for r in oracle]
    if rank_by == "pass_at_k":
        assert f"pass@{max(e.deepest_k for e in example.entrants)} (95% CI)" in text


def test_the_pass_at_k_column_shows_only_its_k(example: Example) -> None:
    # "A column names one k": an entrant with fewer attempts per task has an empty cell there.
    rows = order_rows(parse_rows(example.api("pass_at_1")), "pass_at_k")
    text = render_markdown(
        title="HLE", benchmark_key="hle", spec_path="s.toml", rows=rows, rank_by="pass_at_k", scope="workspace"
    )
    lines = {line.split(" | ")[1]: line.split(" | ") for line in text.splitlines() if MARKDOWN_ROW.match(line)}
    for entrant in example.entrants:
        cells = lines[f"{entrant.model} ({entrant.harness or 'default harness'})"]
        pass_at_k_cell = cells[3]
        if entrant.deepest_k == 3:
            assert pass_at_k_cell.endswith("%)")  # a value with its interval
        else:
            assert pass_at_k_cell == "–"
