"""The local platform's web pages against its own API, in-process with an injected clock.

One module-wide platform holds a seeded workspace with a finished (ranked, two attempts per
task), a running, a stopped and a failed run. Every figure a page shows is checked against the
API's answer at the same clock reading: pages carry the API's raw values in `data-*`
attributes, and the visible text must be those values formatted.
"""

from __future__ import annotations

import csv
import html
import io
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest

from reconciler.localplatform import create_app
from reconciler.localplatform.catalog import BY_KEY
from reconciler.localplatform.inprocess import InProcessTransport
from reconciler.localplatform.pages_frame import SESSION_COOKIE, WORKSPACE_COOKIE

TOKEN = "pages-token"
API = "/api/cli"
WS = "pages"
TB = BY_KEY["terminal-bench-2-1"]
FINISH = {"LOCALPLATFORM_FORCE_STATUS": "finished"}
RANK_BYS = ("pass_at_1", "pass_at_k", "cost_per_task", "time_per_task", "tokens_per_task")


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


# --- a small HTML reader -------------------------------------------------------------------

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    parts: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(self.content.split())

    @property
    def content(self) -> str:
        """The text exactly as written (entities decoded)."""
        return "".join(self.parts)


class Document(HTMLParser):
    """Every element with its attributes and its whole text content, in document order."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self._open: list[Element] = []
        self.feed(source)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.elements.append(element)
        if tag not in _VOID:
            self._open.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append(Element(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i].tag == tag:
                del self._open[i:]
                return

    def handle_data(self, data: str) -> None:
        for element in self._open:
            element.parts.append(data)

    def find(self, tag: str | None = None, **attrs: str | None) -> list[Element]:
        """Elements with this tag and these attributes (`data_run_id` = `data-run-id`; None: present)."""
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [
            e
            for e in self.elements
            if (tag is None or e.tag == tag)
            and all(k in e.attrs and (v is None or e.attrs[k] == v) for k, v in wanted.items())
        ]

    def one(self, tag: str | None = None, **attrs: str | None) -> Element:
        found = self.find(tag, **attrs)
        assert len(found) == 1, (tag, attrs, len(found))
        return found[0]


def pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def raw(value: object) -> str:
    return "" if value is None else str(value)


# --- the seeded platform -------------------------------------------------------------------


def agent(model: str = "openai/gpt-5.2", key: str = "OPENAI_API_KEY", **extra: Any) -> dict[str, Any]:
    return {"model": {"type": "provider", "model": model, "api_key_secret": key}, "env": {}, **extra}


def body(**parts: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "agents": [agent()],
        "env_config": FINISH,
    }
    out.update(parts)
    return out


@dataclass
class Seeded:
    clock: Clock
    transport: InProcessTransport
    api: httpx.Client
    pages: httpx.Client
    runs: dict[str, str]  # status -> run id

    def page(self, url: str, **params: Any) -> Document:
        response = self.pages.get(url, params=params)
        assert response.status_code == 200, (url, response.status_code, response.text[:500])
        assert response.headers["content-type"].startswith("text/html")
        return Document(response.text)

    def get(self, path: str, **params: Any) -> Any:
        response = self.api.get(f"{API}/{path}", params=params)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    clock = Clock()
    transport = InProcessTransport(
        create_app(tmp_path_factory.mktemp("pages") / "db.sqlite3", token=TOKEN, seed=5, clock=clock)
    )
    auth = {"Authorization": f"Bearer {TOKEN}"}
    api = httpx.Client(base_url="http://testserver", transport=transport, headers={**auth, "X-Osmosis-Workspace": WS})
    pages = httpx.Client(base_url="http://testserver", transport=transport, headers=auth)

    def submit(payload: dict[str, Any]) -> str:
        response = api.post(f"{API}/benchmark-runs", json=payload)
        assert response.status_code == 201, response.text
        run_id: str = response.json()["id"]
        return run_id

    finished = submit(
        body(
            agents=[agent(harness="codex"), agent("anthropic/claude-sonnet-4.5", "ANTHROPIC_API_KEY")],
            execution_config={"attempts_per_task": 2, "max_concurrent_attempts": 64},
        )
    )
    clock.now += 10_000  # far past its end at the default speed
    failed = submit(
        body(tasks_config={"categories": ["security"]}, env_config={"LOCALPLATFORM_FORCE_STATUS": "failed"})
    )
    stopped = submit(body(tasks_config={"categories": ["games"]}, execution_config={"max_concurrent_attempts": 1}))
    running = submit(
        body(
            agents=[agent(), agent("openai/gpt-5-mini")],
            execution_config={"attempts_per_task": 2, "max_concurrent_attempts": 2},
        )
    )
    clock.now += 3
    assert api.post(f"{API}/benchmark-runs/{stopped}/stop", json={}).status_code == 200
    clock.now += 20
    runs = {"finished": finished, "failed": failed, "stopped": stopped, "running": running}
    seeded = Seeded(clock, transport, api, pages, runs)
    for status, run_id in runs.items():
        assert seeded.get(f"benchmark-runs/{run_id}")["benchmark_run"]["status"] == status
    yield seeded
    api.close()
    pages.close()
    transport.close()


def platform_urls(seeded: Seeded) -> set[str]:
    """Every `platform_url` the API answers with for the seeded workspace."""
    urls: set[str] = set()
    for entry in seeded.get("benchmarks")["benchmarks"]:
        urls.add(entry["platform_url"])
        detail = seeded.get(f"benchmarks/{entry['id']}")
        urls.add(detail["benchmark"]["platform_url"])
        urls.update(row["run"]["platform_url"] for row in detail["leaderboard"])
    for item in seeded.get("benchmark-runs")["benchmark_runs"]:
        urls.add(item["platform_url"])
        urls.add(seeded.get(f"benchmark-runs/{item['id']}")["benchmark_run"]["platform_url"])
    urls.add(seeded.get("environment-secrets")["platform_url"])
    return urls


# --- every page, and auth ------------------------------------------------------------------


def test_every_platform_url_the_api_returns_answers_200_with_a_page(seeded: Seeded) -> None:
    urls = platform_urls(seeded)
    assert len(urls) >= 5 + 4 + 1
    for url in sorted(urls):
        response = seeded.pages.get(url)
        assert response.status_code == 200, url
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        assert response.text.startswith("<!doctype html>")
        doc = Document(response.text)
        assert doc.one(data_workspace=WS).text == WS  # says which workspace it shows


@pytest.mark.parametrize("status", ["finished", "running", "stopped", "failed"])
@pytest.mark.parametrize("tab", ["overview", "results", "config", "logs"])
def test_every_tab_of_every_run_renders(seeded: Seeded, status: str, tab: str) -> None:
    doc = seeded.page(f"/benchmarks/runs/{seeded.runs[status]}", tab=tab)
    assert doc.one(data_status=status, data_run_id=seeded.runs[status])
    labels = {"overview": "Overview", "results": "Task Results", "config": "Configuration", "logs": "Logs"}
    assert [a.text for a in doc.find("a", aria_current="page")] == ["Runs", labels[tab]]  # main nav, then the tab


def test_pages_need_the_token(seeded: Seeded) -> None:
    bare = httpx.Client(base_url="http://testserver", transport=seeded.transport)
    wrong = httpx.Client(
        base_url="http://testserver", transport=seeded.transport, headers={"Authorization": "Bearer x"}
    )
    run_url = f"/benchmarks/runs/{seeded.runs['finished']}"
    for client in (bare, wrong):
        for path in ("/benchmarks", run_url, "/secrets", f"/benchmarks/{TB.key}"):
            response = client.get(path)
            assert response.status_code == 401, path
            assert response.headers["content-type"].startswith("text/html")
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert "?token=" in response.text and TOKEN not in response.text
    assert bare.get(f"{run_url}?token=wrong").status_code == 401
    assert SESSION_COOKIE not in bare.cookies
    bare.close()
    wrong.close()


def test_a_token_link_sets_an_httponly_cookie_then_redirects_to_the_clean_url(seeded: Seeded) -> None:
    browser = httpx.Client(base_url="http://testserver", transport=seeded.transport)
    run_url = f"/benchmarks/runs/{seeded.runs['finished']}"
    response = browser.get(run_url, params={"tab": "logs", "token": TOKEN})
    assert response.status_code == 303
    assert response.headers["location"] == f"{run_url}?tab=logs"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{SESSION_COOKIE}=") and "HttpOnly" in cookie and "SameSite=lax" in cookie
    assert TOKEN not in cookie  # the cookie is an HMAC of the token, not the token
    followed = browser.get(response.headers["location"])
    assert followed.status_code == 200 and "Lifecycle events" in followed.text
    # the cookie opens pages, never the API
    assert browser.get(f"{API}/benchmarks", headers={"X-Osmosis-Workspace": WS}).status_code == 401
    browser.close()


def test_the_stylesheet_and_icon_are_served_without_a_token(seeded: Seeded) -> None:
    bare = httpx.Client(base_url="http://testserver", transport=seeded.transport)
    page = seeded.pages.get("/benchmarks").text
    for href in re.findall(r'href="(/static/[^"]+)"', page):
        response = bare.get(html.unescape(href))
        assert response.status_code == 200
        assert response.headers["content-type"].split(";")[0] in ("text/css", "image/svg+xml")
    assert bare.get("/static/nope.css").status_code == 404
    assert bare.get("/static/..%2Fpages.py").status_code == 404
    bare.close()


def test_pages_are_html_with_a_strict_policy_and_no_scripts_or_external_resources(seeded: Seeded) -> None:
    paths = ["/benchmarks", "/benchmarks/runs", "/secrets", f"/benchmarks/{TB.key}"]
    paths += [f"/benchmarks/runs/{rid}?tab={tab}" for rid in seeded.runs.values() for tab in ("overview", "results")]
    for path in paths:
        response = seeded.pages.get(path)
        policy = response.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy
        assert response.headers["cache-control"] == "no-store"
        doc = Document(response.text)
        assert not doc.find("script")
        for element in doc.elements:
            for name in ("src", "srcset", "data", "poster"):
                assert not element.attrs.get(name, "/").startswith(("http:", "https:", "//")), (path, element)
            if element.tag == "link":
                assert element.attrs["href"].startswith("/static/")


def test_the_same_moment_renders_the_same_bytes(seeded: Seeded) -> None:
    for path in ("/benchmarks", f"/benchmarks/{TB.key}", f"/benchmarks/runs/{seeded.runs['running']}?tab=results"):
        assert seeded.pages.get(path).content == seeded.pages.get(path).content


# --- the Benchmarks table ------------------------------------------------------------------


def test_benchmarks_table_shows_what_the_api_lists(seeded: Seeded) -> None:
    doc = seeded.page("/benchmarks")
    headers = [th.text for th in doc.find("th", scope="col")]
    assert headers[:5] == ["Name", "Last Run", "Tasks", "Added", "Added By"]
    entries = seeded.get("benchmarks")["benchmarks"]
    assert len(doc.find("tr", data_benchmark_id=None)) == len(entries) == 5
    for entry in entries:
        row = doc.one("tr", data_benchmark_id=entry["id"])
        assert row.attrs["data-sync-status"] == entry["sync_status"]
        assert row.attrs["data-last-run-status"] == raw(entry["last_run_status"])
        assert entry["name"] in row.text and entry["creator_name"] in row.text
        if entry["sync_status"] == "ready":
            assert row.attrs["data-task-count"] == str(entry["task_count"])
        if entry["sync_status"] == "failed":
            assert "unavailable" in row.text and entry["sync_error"] in row.text
        if entry["sync_status"] == "syncing":
            assert f"{entry['synced_task_count']} of {entry['task_count']} synced" in row.text
        if entry["last_run_name"]:
            assert entry["last_run_name"] in row.text and "ago" in row.text
    tb = next(e for e in entries if e["source_ref"] == TB.key)
    assert tb["last_run_status"] == "running" and tb["last_run_name"] in doc.one(data_benchmark_id=tb["id"]).text


# --- the benchmark page --------------------------------------------------------------------


@pytest.mark.parametrize("rank_by", RANK_BYS)
def test_leaderboard_matches_the_api_for_every_ranking(seeded: Seeded, rank_by: str) -> None:
    api = seeded.get(f"benchmarks/{TB.key}", rank_by=rank_by)
    board = api["leaderboard"]
    assert len(board) == 2  # the finished full run's two agents; filtered, stopped and running runs never rank
    doc = seeded.page(f"/benchmarks/{api['benchmark']['id']}", rank_by=rank_by)
    rows = doc.find("tr", data_rank=None)
    assert len(rows) == len(board)
    for row, entry in zip(rows, board, strict=True):
        assert row.attrs["data-rank"] == str(entry["rank"])
        assert row.attrs["data-tied"] == ("true" if entry["tied"] else "false")
        assert row.attrs["data-run-id"] == entry["run"]["id"]
        assert (row.attrs["data-harness"], row.attrs["data-model"]) == (entry["harness"], entry["model"])
        assert row.attrs["data-pass-at-1"] == raw(entry["pass_at_1"]["value"])
        assert pct(entry["pass_at_1"]["value"]) in row.text
        low, high = entry["pass_at_1"]["ci_low"], entry["pass_at_1"]["ci_high"]
        assert f"[{low * 100:.1f}–{high * 100:.1f}]" in row.text
        deepest = entry["pass_at_k"][-1]
        assert row.attrs["data-k"] == str(deepest["k"]) and row.attrs["data-pass-at-k"] == raw(deepest["value"])
        k_low, k_high = deepest["ci_low"], deepest["ci_high"]
        assert f"{pct(deepest['value'])}[{k_low * 100:.1f}–{k_high * 100:.1f}]" in row.text.replace(" ", "")
        assert f"${entry['cost_per_task']:.4f}" in row.text or f"${entry['cost_per_task']:,.2f}" in row.text
        if entry["tied"]:
            assert "=" in row.text and doc.find("li", id=None)
    sorted_headers = [th for th in doc.find("th") if th.attrs.get("aria-sort") not in (None, "none")]
    labels = {"pass_at_1": "Pass@1", "pass_at_k": "Pass@2", "cost_per_task": "Cost / task"}
    assert len(sorted_headers) == 1 and sorted_headers[0].text.startswith(labels.get(rank_by, rank_by[:4].title()))
    links = {a.attrs["href"] for a in doc.find("a") if "rank_by=" in a.attrs.get("href", "")}
    assert {f"rank_by={r}" for r in RANK_BYS} <= {href.split("?")[-1] for href in links}


def test_ties_are_marked_and_explained_with_the_test_behind_them(seeded: Seeded) -> None:
    board = seeded.get(f"benchmarks/{TB.key}")["leaderboard"]
    doc = seeded.page(f"/benchmarks/{TB.key}")
    notes = doc.find("ol", aria_label="Ties explained")
    if any(e["tied"] for e in board):
        assert notes and "McNemar" in notes[0].text and "α = 0.05" in notes[0].text
        for i, entry in enumerate(board, start=1):
            if entry["tied"]:
                assert doc.one("li", id=f"tie-{i}")
    else:
        assert not notes
    assert "competition ranks" in doc.one("section", aria_labelledby="leaderboard").text


def test_benchmark_page_header_and_runs_table_match_the_api(seeded: Seeded) -> None:
    detail = seeded.get(f"benchmarks/{TB.key}")["benchmark"]
    doc = seeded.page(f"/benchmarks/{detail['id']}")
    head = doc.one(data_benchmark_id=detail["id"], class_="page-head bench-head")
    assert detail["source_ref"] in head.text and detail["version"] in head.text
    assert doc.one("span", data_task_count=str(detail["task_count"])).text == f"{detail['task_count']} tasks"
    listed = seeded.get("benchmark-runs", benchmark=detail["id"])["benchmark_runs"]
    rows = doc.find("tr", data_run_id=None, data_ingested=None)
    assert [r.attrs["data-run-id"] for r in rows] == [item["id"] for item in listed]
    for row, item in zip(rows, listed, strict=True):
        assert row.attrs["data-status"] == item["status"]
        assert (row.attrs["data-ingested"], row.attrs["data-expected"]) == (
            str(item["ingested_results"]),
            str(item["expected_results"]),
        )
        assert row.attrs["data-best-pass-at-1"] == raw(item["best_pass_at_1"])
        assert pct(item["best_pass_at_1"]) in row.text and item["name"] in row.text


@pytest.mark.parametrize("key", ["harbor/aider-polyglot@2", "harbor/terminal-bench-pro@1.0", "hle"])
def test_unready_and_unranked_benchmarks_say_why(seeded: Seeded, key: str) -> None:
    detail = seeded.get(f"benchmarks/{key.replace('/', '%2F')}")["benchmark"]
    page = seeded.pages.get(f"/benchmarks/{detail['id']}").text
    if detail["sync_status"] == "failed":
        assert "Task list sync failed" in page and html.escape(detail["sync_error"]) in page
    elif detail["sync_status"] == "syncing":
        assert f"{detail['synced_task_count']} of {detail['task_count']} tasks synced" in page
    else:
        assert "No ranked entrants yet" in page and "parity" in page


def test_a_benchmark_opens_by_key_name_or_id_like_the_api(seeded: Seeded) -> None:
    detail = seeded.get(f"benchmarks/{TB.key}")["benchmark"]
    for ref in (TB.key, TB.name, detail["id"]):
        assert seeded.page(f"/benchmarks/{ref}").one(data_benchmark_id=detail["id"], class_="page-head bench-head")


# --- the run page --------------------------------------------------------------------------


@pytest.mark.parametrize("status", ["finished", "running", "stopped", "failed"])
def test_run_sidebar_and_agent_results_match_the_api(seeded: Seeded, status: str) -> None:
    run_id = seeded.runs[status]
    detail = seeded.get(f"benchmark-runs/{run_id}")
    doc = seeded.page(f"/benchmarks/runs/{run_id}")
    run, totals = detail["benchmark_run"], detail["totals"]
    assert doc.one("dd", data_field="status").text.startswith(status)
    progress = doc.one("dd", data_field="progress")
    assert (progress.attrs["data-ingested"], progress.attrs["data-expected"]) == (
        str(detail["progress"]["ingested"]),
        str(detail["progress"]["expected"]),
    )
    assert f"{detail['progress']['ingested']:,} / {detail['progress']['expected']:,} results" in progress.text
    cost = doc.one("dd", data_field="cost")
    assert cost.attrs["data-cost"] == str(totals["total_cost_usd"])
    money = totals["total_cost_usd"]
    assert (f"${money:.4f}" if money < 1 else f"${money:,.2f}") in cost.text
    tokens = doc.one("dd", data_field="tokens")
    assert tokens.attrs["data-tokens"] == str(totals["total_input_tokens"] + totals["total_output_tokens"])
    assert f"{totals['total_input_tokens']:,} in" in tokens.text
    assert doc.one("dd", data_field="version").attrs["data-version"] == detail["configuration"]["resolved_version"]
    metrics = {m["agent_index"]: m for m in detail["agent_metrics"]}
    for agent in detail["agents"]:
        side = doc.one("li", data_agent_index=str(agent["agent_index"]))
        assert agent["model"] in side.text and agent["status"] in side.text
        row = doc.one("tr", data_agent_index=str(agent["agent_index"]))
        assert row.attrs["data-status"] == agent["status"]
        m = metrics.get(agent["agent_index"])
        assert row.attrs["data-pass-at-1"] == raw(m["pass_at_1"]["value"] if m else None)
        assert row.attrs["data-n-tasks"] == raw(m["n_tasks"] if m else None)
        if m:
            assert pct(m["pass_at_1"]["value"]) in row.text
    if status == "failed":
        last = seeded.get(f"benchmark-runs/{run_id}/logs", limit=1)["logs"][-1]
        assert last["details"]["reason"] in doc.one("dd", data_field="status").text
    if status == "stopped":
        assert f"{totals['cancelled']} unfinished attempt(s) cancelled" in doc.one("dd", data_field="status").text
    if status == "running":
        assert doc.find("meta", http_equiv="refresh") and "so far" in doc.one("dd", data_field="duration").text
    else:
        assert not doc.find("meta", http_equiv="refresh")
    assert run["name"] in doc.one("h1").text


def test_overview_draws_the_pass_at_k_curve_only_once_attempts_allow(seeded: Seeded) -> None:
    detail = seeded.get(f"benchmark-runs/{seeded.runs['finished']}")
    doc = seeded.page(f"/benchmarks/runs/{seeded.runs['finished']}")
    svg = doc.one("svg", class_="passk")
    assert svg.attrs["role"] == "img"
    for m in detail["agent_metrics"]:
        for point in m["pass_at_k"]:
            assert f"pass@{point['k']} = {pct(point['value'])}" in svg.text
    single = seeded.page(f"/benchmarks/runs/{seeded.runs['failed']}")
    assert not single.find("svg", class_="passk")
    assert "a pass@k curve needs two or more" in " ".join(p.text for p in single.find("p"))


def test_overview_breaks_pass_at_1_down_by_category(seeded: Seeded) -> None:
    run_id = seeded.runs["finished"]
    doc = seeded.page(f"/benchmarks/runs/{run_id}")
    groups = {e.attrs["data-group"]: e for e in doc.find("tr", data_group=None)}
    assert {name for name, _ in TB.categories} <= set(groups)
    # the per-category pass@1 of agent 0, recomputed from results.csv the API serves
    rows = list(csv.DictReader(io.StringIO(download(seeded, run_id, "results.csv"))))
    by_task: dict[str, list[bool]] = {}
    for r in rows:
        if r["agent_index"] == "0" and r["category"] == "security":
            by_task.setdefault(r["task_name"], []).append(r["outcome"] == "passed")
    expected = sum(sum(v) / len(v) for v in by_task.values()) / len(by_task)
    cell = next(e for e in _cells(doc, groups["security"]) if "data-value" in e.attrs)
    assert float(cell.attrs["data-value"]) == pytest.approx(expected, abs=1e-12)


def _cells(doc: Document, row: Element) -> list[Element]:
    start = doc.elements.index(row)
    out = []
    for element in doc.elements[start + 1 :]:
        if element.tag == "tr":
            break
        if element.tag == "td":
            out.append(element)
    return out


def download(seeded: Seeded, run_id: str, path: str) -> str:
    urls = seeded.api.post(f"{API}/benchmark-runs/{run_id}/outputs/download-urls", json={"items": [{"path": path}]})
    response = seeded.api.get(urls.json()["items"][0]["url"])
    assert response.status_code == 200
    return response.text


def test_task_results_filter_by_agent_outcome_and_search(seeded: Seeded) -> None:
    run_id = seeded.runs["finished"]
    totals = seeded.get(f"benchmark-runs/{run_id}")["totals"]
    url = f"/benchmarks/runs/{run_id}"
    everything = seeded.page(url, tab="results")
    produced = sum(totals[k] for k in ("passed", "failed", "errored", "cancelled"))
    assert everything.one("p", data_matched=None).attrs["data-matched"] == str(produced)
    assert len(everything.find("tr", data_result_id=None)) == 50  # one page
    passed = seeded.page(url, tab="results", outcome="passed")
    assert passed.one("p", data_matched=None).attrs["data-matched"] == str(totals["passed"])
    summary = {r["agent_index"]: r for r in csv.DictReader(io.StringIO(download(seeded, run_id, "summary.csv")))}
    for index in ("0", "1"):
        sliced = seeded.pages.get(url, params=[("tab", "results"), ("agent", index), ("outcome", "failed")])
        doc = Document(sliced.text)
        assert doc.one("p", data_matched=None).attrs["data-matched"] == summary[index]["failed"]
        rows = doc.find("tr", data_result_id=None)
        assert rows and all(r.attrs["data-agent-index"] == index and r.attrs["data-outcome"] == "failed" for r in rows)
    both = seeded.pages.get(url, params=[("tab", "results"), ("agent", "0"), ("agent", "1")])
    assert Document(both.text).one("p", data_matched=None).attrs["data-matched"] == str(produced)
    task = TB.tasks[3].name
    found = seeded.page(url, tab="results", q=task.split("/")[1].upper())
    rows = found.find("tr", data_result_id=None)
    assert len(rows) == 2 * 2 and all(task in r.text for r in rows)  # two agents × two attempts
    later = seeded.page(url, tab="results", offset=50)
    assert later.find("tr", data_result_id=None)[0].attrs != everything.find("tr", data_result_id=None)[0].attrs


def test_a_result_opens_with_the_same_artifacts_the_downloads_serve(seeded: Seeded) -> None:
    run_id = seeded.runs["finished"]
    doc = seeded.page(f"/benchmarks/runs/{run_id}", tab="results")
    result_id = doc.find("tr", data_result_id=None)[0].attrs["data-result-id"]
    opened = seeded.page(f"/benchmarks/runs/{run_id}", tab="results", result=result_id)
    shown = [pre.content for pre in opened.find("pre")]
    assert download(seeded, run_id, f"artifacts/{result_id}/trajectory.json") in shown
    assert download(seeded, run_id, f"artifacts/{result_id}/verifier/stdout.txt") in shown
    missing = seeded.pages.get(f"/benchmarks/runs/{run_id}", params={"tab": "results", "result": "rnope"})
    assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")


def test_configuration_is_the_resolved_config_as_toml(seeded: Seeded) -> None:
    run_id = seeded.runs["finished"]
    configuration = seeded.get(f"benchmark-runs/{run_id}")["configuration"]
    doc = seeded.page(f"/benchmarks/runs/{run_id}", tab="config")
    toml_text = doc.one("pre", data_version=configuration["resolved_version"]).content
    parsed = tomllib.loads(toml_text)
    assert parsed["experiment"]["benchmark"] == configuration["source_ref"]
    assert f"pinned to version {configuration['resolved_version']}" in toml_text
    assert configuration["resolved_digest"] in toml_text
    stored = configuration["config"]
    assert [a["model"] for a in parsed["agents"]] == [a["model"] for a in stored["agents"]]
    assert parsed["agents"][0]["harness"] == "codex"
    assert parsed["agents"][1]["harness"] == "terminus-2"  # filled in from the benchmark, marked as a default
    assert parsed["execution"]["attempts_per_task"] == 2 and parsed["env"] == stored["env_config"]
    assert "# default" in toml_text
    raw_toml = seeded.pages.get(f"/benchmarks/runs/{run_id}", params={"tab": "config", "format": "toml"})
    assert raw_toml.headers["content-type"].startswith("text/plain") and raw_toml.text == toml_text


def test_logs_page_like_the_logs_endpoint(seeded: Seeded) -> None:
    run_id = seeded.runs["stopped"]
    for params in ({}, {"limit": "5"}, {"limit": "5", "direction": "newer"}, {"limit": "3", "cursor": "c4"}):
        api = seeded.get(f"benchmark-runs/{run_id}/logs", **params)
        doc = seeded.page(f"/benchmarks/runs/{run_id}", tab="logs", **params)
        rows = doc.find("tr", data_step=None)
        assert [(r.attrs["data-step"], r.attrs["data-level"]) for r in rows] == [
            (e["step"], e["level"]) for e in api["logs"]
        ]
        assert all(e["message"] in r.text for r, e in zip(rows, api["logs"], strict=True))
    newest = seeded.page(f"/benchmarks/runs/{run_id}", tab="logs", limit="5")
    older = [a.attrs["href"] for a in newest.find("a", rel="prev")]
    assert older and "cursor=c" in older[0] and "direction=older" in older[0]
    assert seeded.pages.get(f"/benchmarks/runs/{run_id}", params={"tab": "logs", "limit": "500"}).status_code == 400


# --- workspaces, modes, errors, escaping ---------------------------------------------------


def test_workspace_is_chosen_by_query_cookie_or_the_run_it_holds(seeded: Seeded) -> None:
    other = httpx.Client(
        base_url="http://testserver",
        transport=seeded.transport,
        headers={"Authorization": f"Bearer {TOKEN}", "X-Osmosis-Git": "Acme/Bench"},
    )
    assert other.get(f"{API}/benchmarks").status_code == 200  # the API creates the git workspace
    browser = httpx.Client(
        base_url="http://testserver", transport=seeded.transport, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    first = Document(browser.get("/benchmarks").text)
    assert first.one(data_workspace=None).attrs["data-workspace"] == WS  # the first in the store
    assert {o.text for o in first.find("option")} == {WS, "acme/bench (git)"}
    switched = browser.get("/benchmarks", params={"workspace": "git:acme/bench"})
    assert Document(switched.text).one(data_workspace=None).attrs["data-workspace"] == "acme/bench"
    assert WORKSPACE_COOKIE in switched.headers["set-cookie"] and "HttpOnly" in switched.headers["set-cookie"]
    remembered = Document(browser.get("/benchmarks/runs").text)
    assert remembered.one(data_workspace=None).attrs["data-workspace"] == "acme/bench"
    assert "No runs yet" in remembered.one("main").text
    # a run's page shows the run's workspace whatever the cookie says
    run_page = Document(browser.get(f"/benchmarks/runs/{seeded.runs['finished']}").text)
    assert run_page.one(data_workspace=None).attrs["data-workspace"] == WS
    assert "workspace=pages" in run_page.one("a", class_="brand").attrs["href"]
    unknown = browser.get("/benchmarks", params={"workspace": "nope"})
    assert unknown.status_code == 404 and "acme/bench (git)" in unknown.text
    not_here = browser.get(f"/benchmarks/runs/{seeded.runs['finished']}", params={"workspace": "git:acme/bench"})
    assert not_here.status_code == 404 and "Benchmark run not found" in not_here.text
    other.close()
    browser.close()


def test_errors_are_pages_with_the_api_status_and_message(seeded: Seeded) -> None:
    cases = [
        (f"/benchmarks/{TB.key}?rank_by=vibes", 400, "rank_by must be one of"),
        ("/benchmarks/no-such-benchmark", 404, "Benchmark not found: no-such-benchmark"),
        ("/benchmarks/runs/no-such-run", 404, "Benchmark run not found: no-such-run"),
        (f"/benchmarks/runs/{seeded.runs['finished']}?tab=nope", 400, "tab must be one of"),
        (f"/benchmarks/{TB.key}?runs_offset=-1", 400, "runs_offset must be 0 or more"),
    ]
    for path, status, message in cases:
        response = seeded.pages.get(path)
        assert response.status_code == status, path
        assert response.headers["content-type"].startswith("text/html")
        assert html.escape(message, quote=True) in response.text or message in response.text


def test_a_workspace_without_benchmarks_says_so(seeded: Seeded) -> None:
    disabled = {"Authorization": f"Bearer {TOKEN}", "X-Osmosis-Workspace": "no-benchmarks"}
    assert seeded.pages.get(f"{API}/environment-secrets", headers=disabled).status_code == 200
    response = seeded.pages.get("/benchmarks", params={"workspace": "no-benchmarks"})
    assert response.status_code == 403 and "Benchmarks is not available for your account" in response.text
    assert seeded.pages.get("/secrets", params={"workspace": "no-benchmarks"}).status_code == 200


def test_without_a_token_pages_say_they_are_local_only(tmp_path: Path) -> None:
    transport = InProcessTransport(create_app(tmp_path / "db.sqlite3", token=None, clock=Clock()))
    client = httpx.Client(base_url="http://testserver", transport=transport)
    empty = client.get("/benchmarks")
    assert empty.status_code == 200 and "Local-only mode" in empty.text and "no workspace yet" in empty.text
    client.get(f"{API}/benchmarks", headers={"X-Osmosis-Workspace": "solo"})
    page = client.get("/benchmarks")
    assert page.status_code == 200 and "Local-only mode" in page.text and 'data-workspace="solo"' in page.text
    assert client.get("/").headers["location"] == "/benchmarks"
    client.close()
    transport.close()


def test_everything_is_escaped(seeded: Seeded) -> None:
    hostile = '<script>alert("x")</script>&'
    client = httpx.Client(
        base_url="http://testserver",
        transport=seeded.transport,
        headers={"Authorization": f"Bearer {TOKEN}", "X-Osmosis-Workspace": hostile},
    )
    payload = body(
        tasks_config={"task_names": [TB.tasks[0].name]},
        agents=[agent("acme/<img src=x onerror=alert(1)>"), agent(env={"NOTE": hostile})],
        env_config={**FINISH, "EXTRA": hostile},
    )
    created = client.post(f"{API}/benchmark-runs", json=payload)
    assert created.status_code == 201, created.text
    run_id = created.json()["id"]
    seeded.clock.now += 5_000
    pages = [
        seeded.pages.get("/benchmarks", params={"workspace": hostile}),
        seeded.pages.get(f"/benchmarks/runs/{run_id}"),
        seeded.pages.get(f"/benchmarks/runs/{run_id}", params={"tab": "config"}),
        seeded.pages.get(f"/benchmarks/runs/{run_id}", params={"tab": "results", "q": hostile}),
        seeded.pages.get("/benchmarks", params={"workspace": hostile + "nope"}),
    ]
    for response in pages:
        assert "<script" not in response.text and "<img src=x" not in response.text
        assert "&lt;script&gt;" in response.text or "&lt;img" in response.text
    client.close()
