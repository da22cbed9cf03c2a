"""Malformed and oversized requests get a 4xx in the contract's error shape, never a 500.

The contract (section 1): errors are JSON `{message, code, field?}`; lists page by `limit`
and `offset`. Every case runs against the app in-process and against `platform serve`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from reconciler.localplatform import create_app
from reconciler.localplatform.bodylimit import MAX_BODY_BYTES
from reconciler.localplatform.catalog import BY_KEY
from reconciler.localplatform.inprocess import InProcessTransport
from tests.served_platform import served

TOKEN = "hostile-token"
RUNS = "/api/cli/benchmark-runs"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "X-Osmosis-Workspace": "hostile"}


@pytest.fixture(scope="module")
def inprocess(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    app = create_app(tmp_path_factory.mktemp("inprocess") / "db.sqlite3", token=TOKEN)
    transport = InProcessTransport(app)
    with httpx.Client(base_url="http://testserver", headers=HEADERS, transport=transport, timeout=60) as client:
        yield client
    transport.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with (
        served(tmp_path_factory.mktemp("server"), "--token", TOKEN) as (url, _),
        httpx.Client(base_url=url, headers=HEADERS, timeout=60) as client,
    ):
        yield client


@pytest.fixture(params=["inprocess", "server"])
def api(request: pytest.FixtureRequest) -> httpx.Client:
    client: httpx.Client = request.getfixturevalue(request.param)
    return client


@dataclass(frozen=True)
class Bad:
    name: str
    method: str
    path: str
    status: int
    code: str
    says: str
    field: str | None = None
    body: bytes | None = None


HUGE = str(2**63)
CASES = [
    Bad(
        "array-100k-deep", "POST", RUNS, 400, "VALIDATION", "nests deeper than 32", body=b"[" * 100_000 + b"]" * 100_000
    ),
    Bad(
        "object-100k-deep",
        "POST",
        RUNS,
        400,
        "VALIDATION",
        "nests deeper than 32",
        body=b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    ),
    Bad("not-utf8", "POST", RUNS, 400, "VALIDATION", "not UTF-8", body=b'{"a": "\xff"}'),
    Bad("runs-offset-2**63", "GET", f"{RUNS}?offset={HUGE}", 400, "VALIDATION", "must be at most 1000000000", "offset"),
    Bad(
        "benchmarks-offset-2**63",
        "GET",
        f"/api/cli/benchmarks?offset={HUGE}",
        400,
        "VALIDATION",
        "must be at most 1000000000",
        "offset",
    ),
    Bad(
        "secrets-offset-2**63",
        "GET",
        f"/api/cli/environment-secrets?offset={HUGE}",
        400,
        "VALIDATION",
        "must be at most 1000000000",
        "offset",
    ),
    Bad(
        "body-over-the-limit",
        "POST",
        RUNS,
        413,
        "PAYLOAD_TOO_LARGE",
        f"larger than {MAX_BODY_BYTES} bytes",
        body=b" " * (MAX_BODY_BYTES + 1),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bad_request_is_a_4xx_with_message_code_and_field(api: httpx.Client, case: Bad) -> None:
    response = api.request(case.method, case.path, content=case.body)
    assert response.status_code == case.status, response.text
    body = response.json()
    assert body["code"] == case.code
    assert case.says in body["message"]
    assert body.get("field") == case.field


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    for start in range(0, total, size):
        yield b" " * min(size, total - start)


def test_a_streamed_body_without_length_is_cut_off_at_the_limit(api: httpx.Client) -> None:
    # no Content-Length: the bound must hold while the bytes arrive, not only on the declared size
    response = api.post(RUNS, content=_chunks(4 * MAX_BODY_BYTES))
    assert response.status_code == 413
    assert response.json()["code"] == "PAYLOAD_TOO_LARGE"


def test_a_body_just_under_the_limit_is_read_and_judged_on_its_content(api: httpx.Client) -> None:
    padding = " " * (MAX_BODY_BYTES - 100)
    response = api.post(RUNS, content=f'{{"agents": []}}{padding}'.encode())
    assert response.status_code == 400
    assert response.json()["code"] != "PAYLOAD_TOO_LARGE"


def test_the_platform_still_answers_after_hostile_requests(api: httpx.Client) -> None:
    api.post(RUNS, content=b"[" * 100_000)
    assert api.get(RUNS).status_code == 200


def test_the_runs_page_refuses_an_offset_sqlite_cannot_hold(api: httpx.Client) -> None:
    assert api.get(RUNS).status_code == 200  # the workspace exists once the API has seen it
    page = f"/benchmarks/runs?offset={HUGE}&workspace=hostile&token={TOKEN}"
    response = api.get(page, follow_redirects=True)
    assert response.status_code == 400
    assert "offset must be at most 1000000000" in response.text


HIDDEN = "[\u202a-\u202e\u2066-\u2069\u200e\u200f\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"


def test_run_pages_show_bidi_and_control_characters_in_names_as_escapes(api: httpx.Client) -> None:
    model = "openai/gpt\u202e5.2-\u2066x\u2069\x1b[31m"
    body = {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "agents": [{"model": {"type": "provider", "model": model, "api_key_secret": "OPENAI_API_KEY"}, "env": {}}],
        "tasks_config": {"task_names": [BY_KEY["terminal-bench-2-1"].tasks[0].name]},
    }
    created = api.post(RUNS, json=body)
    assert created.status_code == 201, created.text
    page = api.get(f"/benchmarks/runs/{created.json()['id']}?workspace=hostile&token={TOKEN}", follow_redirects=True)
    assert page.status_code == 200
    assert not re.search(HIDDEN, page.text)
    assert "openai/gpt\\u202e5.2-\\u2066x\\u2069\\x1b[31m" in page.text
