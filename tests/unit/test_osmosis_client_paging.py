"""The Osmosis client walks offset pages: next_offset until null or an empty page."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.errors import ProtocolError, ServerError
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Response
from tests.fake_transport import FakeTransport, Sent, reply

BASE = "https://platform.test"


def run(handler: Any, action: Callable[[OsmosisClient], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with OsmosisClient(
            BASE, token="t", workspace="team", transport=FakeTransport(handler), retry=RetryPolicy.disabled()
        ) as client:
            return await action(client)

    return asyncio.run(main())


class Server:
    """A list endpoint over `count` runs with honest offset paging."""

    def __init__(self, count: int, *, key: str = "benchmark_runs", with_total: bool = True) -> None:
        self.items: list[dict[str, Any]] = [{"id": f"r{n}", "name": f"run-{n}"} for n in range(count)]
        self.key = key
        self.with_total = with_total
        self.offsets: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0

    async def __call__(self, request: Sent) -> Response:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0)  # let concurrent page requests overlap
        self.in_flight -= 1
        offset, limit = int(request.params["offset"]), int(request.params["limit"])
        self.offsets.append(offset)
        page = self.items[offset : offset + limit]
        end = offset + len(page)
        body: dict[str, Any] = {
            self.key: page,
            "has_more": end < len(self.items),
            "next_offset": end if end < len(self.items) else None,
        }
        if self.with_total:
            body["total_count"] = len(self.items)
        return reply(200, json=body)


def ids(items: list[Any]) -> list[str]:
    return [item.id for item in items]


def test_list_runs_follows_next_offset_past_50_one_page_at_a_time_without_a_total() -> None:
    server = Server(120, with_total=False)
    runs = run(server, lambda c: c.list_runs())
    assert ids(runs) == [f"r{n}" for n in range(120)]
    assert server.offsets == [0, 50, 100]


def test_list_runs_fetches_the_remaining_pages_side_by_side_once_the_total_is_known() -> None:
    server = Server(420)
    runs = run(server, lambda c: c.list_runs())
    assert ids(runs) == [f"r{n}" for n in range(420)]
    assert sorted(server.offsets) == list(range(0, 420, 50))
    assert 1 < server.most_in_flight <= OsmosisClient.page_concurrency


def test_listings_read_at_once_share_one_bound_on_pages_in_flight() -> None:
    """The early reads list every benchmark together: their pages stay within one client's bound
    (each listing's first page, which tells how many there are, comes before it)."""
    server = Server(5000)

    async def four_listings(client: OsmosisClient) -> list[Any]:
        return await asyncio.gather(*(client.list_runs(benchmark_id=f"b{n}") for n in range(4)))

    listings = run(server, four_listings)
    assert [len(found) for found in listings] == [5000] * 4
    assert 1 < server.most_in_flight <= OsmosisClient.page_concurrency + 4


def test_paging_stops_when_next_offset_is_null() -> None:
    def handler(request: Sent) -> Response:
        return reply(200, json={"benchmark_runs": [{"id": "a"}], "has_more": True, "next_offset": None})

    assert ids(run(handler, lambda c: c.list_runs())) == ["a"]


def test_paging_stops_on_an_empty_page_even_when_next_offset_is_set() -> None:
    offsets: list[str] = []

    def handler(request: Sent) -> Response:
        offsets.append(request.params["offset"])
        items = [{"id": f"r{n}"} for n in range(50)] if request.params["offset"] == "0" else []
        return reply(200, json={"benchmark_runs": items, "next_offset": 50})

    assert len(run(handler, lambda c: c.list_runs())) == 50
    assert offsets == ["0", "50"]


def test_paging_that_does_not_advance_is_a_protocol_error() -> None:
    def handler(request: Sent) -> Response:
        return reply(200, json={"benchmark_runs": [{"id": "a"}], "next_offset": 0})

    with pytest.raises(ProtocolError, match="does not advance"):
        run(handler, lambda c: c.list_runs())


def test_a_run_seen_on_two_pages_is_kept_once() -> None:
    pages = {"0": (["a", "b"], 2), "2": (["b", "c"], None)}

    def handler(request: Sent) -> Response:
        names, nxt = pages[request.params["offset"]]
        return reply(200, json={"benchmark_runs": [{"id": n} for n in names], "next_offset": nxt})

    assert ids(run(handler, lambda c: c.list_runs())) == ["a", "b", "c"]


def test_a_list_that_grows_while_paging_is_read_to_its_new_end() -> None:
    server = Server(110)

    async def handler(request: Sent) -> Response:
        response = await server(request)
        if request.params["offset"] == "0":  # 60 more runs land after the first page
            server.items.extend({"id": f"r{n}"} for n in range(110, 170))
        return response

    runs = run(handler, lambda c: c.list_runs())
    assert ids(runs) == [f"r{n}" for n in range(170)]
    assert sorted(server.offsets) == [0, 50, 100, 150]


def test_a_failing_page_raises_its_own_error_not_an_exception_group() -> None:
    server = Server(200)

    async def handler(request: Sent) -> Response:
        if request.params["offset"] == "100":
            return reply(500, json={"message": "boom"})
        return await server(request)

    with pytest.raises(ServerError, match="boom"):
        run(handler, lambda c: c.list_runs())


def test_list_runs_page_passes_the_paging_fields_through() -> None:
    server = Server(120)
    page = run(server, lambda c: c.list_runs_page(offset=50, limit=50))
    assert ids(list(page.items)) == [f"r{n}" for n in range(50, 100)]
    assert (page.total_count, page.has_more, page.next_offset) == (120, True, 100)


def test_the_benchmark_filter_is_sent_as_the_benchmark_id() -> None:
    seen: list[Sent] = []

    def handler(request: Sent) -> Response:
        seen.append(request)
        return reply(200, json={"benchmark_runs": []})

    run(handler, lambda c: c.list_runs(benchmark_id="b-42"))
    assert seen[0].params["benchmark"] == "b-42"


def test_missing_paging_fields_take_their_defaults() -> None:
    def handler(request: Sent) -> Response:
        return reply(200, json={})

    page = run(handler, lambda c: c.list_runs_page())
    assert (page.items, page.total_count, page.has_more, page.next_offset) == ((), 0, False, None)


def test_list_benchmarks_walks_every_page() -> None:
    server = Server(0, key="benchmarks", with_total=False)
    server.items = [
        {
            "id": f"b{n}",
            "name": f"B{n}",
            "source_type": "t",
            "source_ref": f"b{n}",
            "task_count": 1,
            "category_count": 1,
        }
        for n in range(75)
    ]
    benchmarks = run(server, lambda c: c.list_benchmarks())
    assert len(benchmarks) == 75
    assert server.offsets == [0, 50]


def test_list_secrets_walks_every_page() -> None:
    server = Server(60, key="environment_secrets")
    secrets = run(server, lambda c: c.list_secrets())
    assert len(secrets) == 60


def test_scan_runs_models_only_the_items_kept_and_counts_the_rest_by_id() -> None:
    server = Server(130)
    scan = run(server, lambda c: c.scan_runs(keep=lambda raw: raw["name"] in {"run-3", "run-77", "run-129"}))
    assert [item.id for item in scan.items] == ["r3", "r77", "r129"]
    assert scan.others == {f"r{n}" for n in range(130)} - {"r3", "r77", "r129"}


def test_scan_runs_pages_through_passed_over_items_like_kept_ones() -> None:
    server = Server(120, with_total=False)
    scan = run(server, lambda c: c.scan_runs(keep=lambda raw: False))
    assert scan.items == ()
    assert len(scan.others) == 120
    assert server.offsets == [0, 50, 100]


def test_scan_runs_still_reports_an_item_without_an_id_as_a_malformed_answer() -> None:
    def handler(request: Sent) -> Response:
        return reply(200, json={"benchmark_runs": [{"name": "x"}], "next_offset": None})

    with pytest.raises(ProtocolError, match=r"benchmark_runs\[0\]\.id"):
        run(handler, lambda c: c.scan_runs(keep=lambda raw: False))
