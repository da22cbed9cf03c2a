"""The Osmosis client's requests: headers, scope, paths, parameters, bodies, URLs, presigned fetches."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler import __version__
from reconciler.errors import ConfigError
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.errors import PlatformUnreachable, ProtocolError
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Response, TransportError
from reconciler.osmosis.urls import normalize_base_url
from tests.fake_transport import FakeTransport, Sent, reply

BASE = "https://platform.test"
TOKEN = "osm_live_7f3a9c2e1b"
Handler = Callable[[Sent], Response]


def run(handler: Handler, action: Callable[[OsmosisClient], Awaitable[Any]], **options: Any) -> Any:
    """`action(client)` against a client whose every request goes to `handler`."""
    options.setdefault("token", TOKEN)
    if "git_identity" not in options:
        options.setdefault("workspace", "team")
    options.setdefault("retry", RetryPolicy.disabled())

    async def main() -> Any:
        async with OsmosisClient(BASE, transport=FakeTransport(handler), **options) as client:
            return await action(client)

    return asyncio.run(main())


def recorder(answer: dict[str, Any] | None = None, status: int = 200) -> tuple[list[Sent], Handler]:
    seen: list[Sent] = []

    def handler(request: Sent) -> Response:
        seen.append(request)
        return reply(status, json=answer if answer is not None else {})

    return seen, handler


RUN_DETAIL = {"benchmark_run": {"id": "r1", "name": "bright-otter", "status": "running"}}


# --- headers and scope ---


def test_every_call_carries_bearer_token_content_type_and_user_agent() -> None:
    seen, handler = recorder({"benchmarks": []})
    run(handler, lambda c: c.list_benchmarks())
    headers = seen[0].headers
    assert headers["authorization"] == f"Bearer {TOKEN}"
    assert headers["content-type"] == "application/json"
    assert headers["user-agent"] == f"reconciler/{__version__}"
    assert "x-osmosis-cli-version" not in headers


def test_workspace_scope_sends_only_the_workspace_header() -> None:
    seen, handler = recorder({"benchmarks": []})
    run(handler, lambda c: c.list_benchmarks(), workspace=" team ")
    assert seen[0].headers["x-osmosis-workspace"] == "team"
    assert "x-osmosis-git" not in seen[0].headers


def test_git_scope_is_lowercased_and_sent_alone() -> None:
    seen, handler = recorder({"benchmarks": []})
    run(handler, lambda c: c.list_benchmarks(), git_identity="Acme/Evals")
    assert seen[0].headers["x-osmosis-git"] == "acme/evals"
    assert "x-osmosis-workspace" not in seen[0].headers


def test_no_scope_is_a_config_error_before_any_request() -> None:
    with pytest.raises(ConfigError, match="no Osmosis workspace scope"):
        OsmosisClient(BASE, token=TOKEN)


def test_both_scopes_are_a_config_error() -> None:
    with pytest.raises(ConfigError, match="exactly one scope"):
        OsmosisClient(BASE, token=TOKEN, workspace="team", git_identity="acme/evals")


def test_git_identity_must_be_owner_slash_repo() -> None:
    with pytest.raises(ConfigError, match="owner/repo"):
        OsmosisClient(BASE, token=TOKEN, git_identity="acme")


def test_no_token_sends_no_authorization_header() -> None:
    seen, handler = recorder({"benchmarks": []})
    run(handler, lambda c: c.list_benchmarks(), token=None)
    assert "authorization" not in seen[0].headers


def test_token_with_a_line_break_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as caught:
        OsmosisClient(BASE, token="osm_live\nsecret", workspace="team")
    assert "secret" not in caught.value.render()


def test_client_repr_shows_base_url_and_scope_but_never_the_token() -> None:
    client = OsmosisClient(BASE, token=TOKEN, git_identity="acme/evals")
    text = repr(client) + str(client) + repr(vars(client))
    assert "https://platform.test" in repr(client)
    assert "acme/evals" in repr(client)
    assert TOKEN not in text
    asyncio.run(client.aclose())


# --- paths, parameters and bodies ---


def test_path_segments_are_percent_encoded_with_no_safe_characters() -> None:
    seen, handler = recorder(RUN_DETAIL)
    run(handler, lambda c: c.get_run("a/b c"))
    assert seen[0].raw_path == b"/api/cli/benchmark-runs/a%2Fb%20c"


@pytest.mark.parametrize(("asked", "sent"), [(0, "1"), (-5, "1"), (20, "20"), (50, "50"), (500, "50")])
def test_list_limit_is_clamped_to_1_through_50(asked: int, sent: str) -> None:
    seen, handler = recorder({"benchmark_runs": []})
    run(handler, lambda c: c.list_runs_page(limit=asked))
    assert seen[0].params["limit"] == sent


@pytest.mark.parametrize(("asked", "sent"), [(0, "1"), (120, "120"), (1000, "200")])
def test_log_limit_is_clamped_to_1_through_200(asked: int, sent: str) -> None:
    seen, handler = recorder({"logs": [], "next_cursor": None})
    run(handler, lambda c: c.get_logs("r1", limit=asked))
    assert seen[0].params["limit"] == sent


def test_logs_send_direction_and_cursor() -> None:
    seen, handler = recorder({"logs": [{"message": "hi", "details": None}], "next_cursor": "c2"})
    page = run(handler, lambda c: c.get_logs("r1", direction="newer", cursor="c1"))
    assert seen[0].params["direction"] == "newer"
    assert seen[0].params["cursor"] == "c1"
    assert page.next_cursor == "c2"
    assert page.logs[0].message == "hi"


def test_an_empty_204_answer_reads_as_an_empty_object() -> None:
    page = run(lambda request: reply(204), lambda c: c.get_logs("r1"))
    assert page.logs == ()
    assert page.next_cursor is None


def test_stop_posts_an_empty_json_object_to_the_run_id() -> None:
    seen, handler = recorder(status=204)
    run(handler, lambda c: c.stop_run("run-1"))
    assert seen[0].method == "POST"
    assert seen[0].path == "/api/cli/benchmark-runs/run-1/stop"
    assert json.loads(seen[0].content) == {}


def test_submit_posts_the_payload_and_reads_the_created_run() -> None:
    created = {
        "id": "r9",
        "name": "bright-otter",
        "status": "pending",
        "created_at": "2026-01-01T00:00:00Z",
        "workflow_id": "benchmark-run/r9",
        "task_count": 89,
        "platform_url": None,
    }
    seen, handler = recorder(created, status=201)
    payload = {"experiment_config": {"benchmark": "tb"}, "agents": [{"model": {"type": "hosted"}, "env": {}}]}
    result = run(handler, lambda c: c.submit_run(payload))
    assert json.loads(seen[0].content) == payload
    assert (result.id, result.name, result.task_count) == ("r9", "bright-otter", 89)


def test_manifest_types_are_sent_comma_separated_in_the_given_order() -> None:
    seen, handler = recorder({"files": [], "totals": {}})
    run(handler, lambda c: c.get_manifest("r1", ["results", "summary"]))
    assert seen[0].path == "/api/cli/benchmark-runs/r1/outputs/manifest"
    assert seen[0].params["types"] == "results,summary"


@pytest.mark.parametrize("size", [0, 501])
def test_a_download_url_batch_outside_1_through_500_is_refused(size: int) -> None:
    seen, handler = recorder({"items": []})
    with pytest.raises(ValueError, match=r"1\.\.500"):
        run(handler, lambda c: c.get_download_urls("r1", [("summary.csv", None)] * size))
    assert seen == []


def test_download_url_request_sends_tokens_only_where_the_manifest_had_one() -> None:
    seen, handler = recorder({"items": []})
    run(handler, lambda c: c.get_download_urls("r1", [("summary.csv", "t1"), ("results.csv", None)]))
    assert json.loads(seen[0].content) == {"items": [{"path": "summary.csv", "token": "t1"}, {"path": "results.csv"}]}


def test_list_secrets_sends_the_scope() -> None:
    seen, handler = recorder({"environment_secrets": [{"id": "s1", "name": "OPENAI_API_KEY", "scope": "user"}]})
    records = run(handler, lambda c: c.list_secrets("workspace"))
    assert seen[0].params["scope"] == "workspace"
    assert records[0].name == "OPENAI_API_KEY"


def test_set_secret_posts_name_value_and_scope() -> None:
    seen, handler = recorder({"id": "s1", "name": "HF_TOKEN"})
    run(handler, lambda c: c.set_secret("HF_TOKEN", "hf_value", "workspace"))
    assert seen[0].method == "POST"
    assert json.loads(seen[0].content) == {"name": "HF_TOKEN", "value": "hf_value", "scope": "workspace"}


def test_delete_secret_sends_a_json_body_with_the_delete() -> None:
    seen, handler = recorder(status=204)
    run(handler, lambda c: c.delete_secret("HF_TOKEN", "user"))
    assert seen[0].method == "DELETE"
    assert json.loads(seen[0].content) == {"name": "HF_TOKEN", "scope": "user"}


def test_benchmark_detail_keeps_the_leaderboard_verbatim_and_typed() -> None:
    entry = {"rank": 1, "tied": False, "model": "m", "harness": "codex", "pass_at_1": {"value": 0.5}, "extra": 1}
    answer = {
        "benchmark": {
            "id": "b1",
            "name": "Terminal-Bench",
            "source_type": "osmosis_managed",
            "source_ref": "tb",
            "task_count": 2,
            "category_count": 1,
            "runner_family": "harbor",
            "supports_harness": True,
            "requires_harness": False,
            "requires_judge_model": False,
            "pass_threshold": 1,
        },
        "leaderboard": [entry, "not an object"],
    }
    _, handler = recorder(answer)
    detail = run(handler, lambda c: c.get_benchmark("tb"))
    assert detail.leaderboard == (entry,)
    assert detail.leaderboard_entries()[0].pass_at_1.value == 0.5
    assert detail.key == "tb"


# --- version negotiation ---


def test_a_deprecation_is_reported_once_per_client() -> None:
    warnings: list[str] = []

    def handler(request: Sent) -> Response:
        headers = {"X-Osmosis-Version-Status": "deprecated", "X-Osmosis-Version-Message": "Upgrade soon."}
        return reply(200, json={"benchmarks": []}, headers=headers)

    async def twice(client: OsmosisClient) -> None:
        await client.list_benchmarks()
        await client.list_benchmarks()

    run(handler, twice, on_warning=warnings.append)
    assert warnings == ["Upgrade soon."]


def test_a_deprecation_is_reported_even_after_an_upgrade_notice() -> None:
    warnings: list[str] = []
    statuses = iter(["upgrade_available", "deprecated", "deprecated"])

    def handler(request: Sent) -> Response:
        return reply(200, json={"benchmarks": []}, headers={"X-Osmosis-Version-Status": next(statuses)})

    async def thrice(client: OsmosisClient) -> None:
        for _ in range(3):
            await client.list_benchmarks()

    run(handler, thrice, on_warning=warnings.append)
    assert len(warnings) == 2 and "deprecated" in warnings[1]


def test_a_current_version_reports_nothing() -> None:
    warnings: list[str] = []

    def handler(request: Sent) -> Response:
        return reply(200, json={"benchmarks": []}, headers={"X-Osmosis-Version-Status": "current"})

    run(handler, lambda c: c.list_benchmarks(), on_warning=warnings.append)
    assert warnings == []


# --- base URL ---


@pytest.mark.parametrize(
    ("given", "normalised"),
    [
        ("https://platform.osmosis.ai/", "https://platform.osmosis.ai"),
        ("  HTTPS://Platform.Osmosis.AI:443//  ", "https://platform.osmosis.ai"),
        ("https://platform.osmosis.ai:8443/prefix/", "https://platform.osmosis.ai:8443/prefix"),
        ("https://platform.osmosis.ai/?q=1#frag", "https://platform.osmosis.ai"),
        ("platform.osmosis.ai", "https://platform.osmosis.ai"),
        ("localhost:8080", "http://localhost:8080"),
        ("127.0.0.1:9000", "http://127.0.0.1:9000"),
        ("http://LOCALHOST:80", "http://localhost"),
        ("http://[::1]:8000/", "http://[::1]:8000"),
    ],
)
def test_base_url_normalisation(given: str, normalised: str) -> None:
    assert normalize_base_url(given) == normalised


@pytest.mark.parametrize("given", ["", "ftp://platform.osmosis.ai", "https://", "https://host:notaport"])
def test_an_unusable_base_url_is_a_config_error(given: str) -> None:
    with pytest.raises(ConfigError, match="Invalid platform URL"):
        normalize_base_url(given)


def test_a_url_with_credentials_is_refused_without_echoing_them() -> None:
    with pytest.raises(ConfigError) as caught:
        normalize_base_url("https://user:hunter2@platform.osmosis.ai")
    assert "hunter2" not in caught.value.render()


def test_an_insecure_remote_url_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OSMOSIS_ALLOW_INSECURE_PLATFORM_URL", raising=False)
    with pytest.raises(ConfigError, match="Refusing non-HTTPS") as caught:
        OsmosisClient("http://platform.example.com", token=TOKEN, workspace="team")
    assert "OSMOSIS_ALLOW_INSECURE_PLATFORM_URL=1" in (caught.value.hint or "")


def test_an_insecure_remote_url_is_accepted_with_the_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMOSIS_ALLOW_INSECURE_PLATFORM_URL", "1")
    client = OsmosisClient("http://platform.example.com", token=TOKEN, workspace="team")
    assert client.base_url == "http://platform.example.com"
    asyncio.run(client.aclose())


def test_a_loopback_http_url_needs_no_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OSMOSIS_ALLOW_INSECURE_PLATFORM_URL", raising=False)
    client = OsmosisClient("http://127.0.0.1:8123", token=TOKEN, workspace="team")
    assert client.base_url == "http://127.0.0.1:8123"
    asyncio.run(client.aclose())


# --- presigned fetches ---


def test_presigned_fetches_carry_no_credentials_and_no_scope() -> None:
    seen: list[Sent] = []

    def handler(request: Sent) -> Response:
        seen.append(request)
        return reply(200, content=b"a,b\n")

    async def fetch(client: OsmosisClient) -> bytes:
        async with client.open_presigned("https://bucket.test/x?sig=abc", headers={"Range": "bytes=0-"}) as response:
            return b"".join([chunk async for chunk in response.chunks()])

    assert run(handler, fetch) == b"a,b\n"
    assert "authorization" not in seen[0].headers
    assert "x-osmosis-workspace" not in seen[0].headers
    assert seen[0].headers["range"] == "bytes=0-"


def test_presigned_fetches_refuse_an_authorization_header() -> None:
    async def fetch(client: OsmosisClient) -> None:
        async with client.open_presigned("https://bucket.test/x", headers={"authorization": "Bearer x"}):
            pass

    with pytest.raises(ValueError, match="no Authorization"):
        run(recorder()[1], fetch)


def test_presigned_fetches_refuse_plain_http_to_another_host() -> None:
    async def fetch(client: OsmosisClient) -> None:
        async with client.open_presigned("http://bucket.test/x"):
            pass

    with pytest.raises(ProtocolError, match="only https"):
        run(recorder()[1], fetch)


def test_a_failed_presigned_fetch_never_shows_the_signed_url() -> None:
    def handler(request: Sent) -> Response:
        raise TransportError("timeout", "timed out")

    async def fetch(client: OsmosisClient) -> None:
        async with client.open_presigned("https://bucket.test/x?X-Amz-Signature=deadbeef"):
            pass

    with pytest.raises(PlatformUnreachable) as caught:
        run(handler, fetch)
    assert "deadbeef" not in caught.value.render()
    assert "<redacted URL>" in caught.value.message


def test_a_presigned_origin_allowed_once_allows_no_other_origin() -> None:
    async def fetch(client: OsmosisClient) -> None:
        async with client.open_presigned("https://bucket.test/x"):
            pass
        async with client.open_presigned("http://bucket.test/x"):
            pass

    with pytest.raises(ProtocolError, match="only https"):
        run(recorder()[1], fetch)


_HOP_URLS = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(["https", "http", "HTTP", "ftp", ""]),
        st.sampled_from(["://", ":/", ":", ":///", "//"]),
        st.sampled_from(
            [
                "bucket.test",
                "127.0.0.1",
                "[::1]",
                "localhost",
                "platform.test",
                "u:p@bucket.test",
                "bucket.test:99999",
                "[bad",
                "",
            ]
        ),
        st.sampled_from(["", "/x", "?q=/y", "#f/z", "/x/y/z", "\t/x", ":80/x"]),
    ),
)


def _hop_verdict(check: Callable[[str], None], url: str) -> str | None:
    try:
        check(url)
    except ProtocolError as exc:
        return exc.message
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(_HOP_URLS, min_size=1, max_size=8))
def test_remembered_presigned_hop_verdicts_are_those_of_the_whole_url(urls: list[str]) -> None:
    """The client remembers allowed origins (a download checks thousands of URLs of one); every
    URL still gets the verdict its own scheme, host and port give it."""
    client = OsmosisClient(BASE, token=TOKEN, workspace="team", transport=FakeTransport(recorder()[1]))
    try:
        for url in urls:
            assert _hop_verdict(client._check_presigned_hop, url) == _hop_verdict(client._check_hop_origin, url)
    finally:
        asyncio.run(client.aclose())
