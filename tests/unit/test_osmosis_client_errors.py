"""Every platform failure becomes one typed error with the platform's own words, never a secret."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from reconciler.errors import ReconcilerError
from reconciler.osmosis import errors as e
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Response, TransportError
from tests.fake_transport import FakeTransport, Sent, reply

BASE = "https://platform.test"
TOKEN = "osm_live_7f3a9c2e1b"


def run(handler: Any, action: Callable[[OsmosisClient], Awaitable[Any]] | None = None) -> Any:
    async def main() -> Any:
        async with OsmosisClient(
            BASE, token=TOKEN, workspace="team", transport=FakeTransport(handler), retry=RetryPolicy.disabled()
        ) as client:
            return await (action or (lambda c: c.get_run("r1")))(client)

    return asyncio.run(main())


def failure(status: int, body: Any = None, *, text: str | None = None, headers: dict[str, str] | None = None) -> Any:
    def handler(request: Sent) -> Response:
        if text is not None:
            return reply(status, text=text, headers=headers)
        return reply(status, json=body, headers=headers)

    return handler


def caught(handler: Any, action: Callable[[OsmosisClient], Awaitable[Any]] | None = None) -> e.PlatformError:
    with pytest.raises(e.PlatformError) as info:
        run(handler, action)
    return info.value


@pytest.mark.parametrize(
    ("status", "cls"),
    [
        (400, e.ValidationRejected),
        (403, e.Forbidden),
        (404, e.NotFound),
        (409, e.Conflict),
        (422, e.PlatformError),
        (429, e.RateLimited),
        (500, e.ServerError),
        (502, e.ServerError),
    ],
)
def test_each_status_maps_to_its_error_class_with_the_platform_message(status: int, cls: type[Exception]) -> None:
    error = caught(failure(status, {"message": "Something specific", "code": "SOME_CODE"}))
    assert type(error) is cls
    assert error.message == "Something specific"
    assert (error.status, error.code) == (status, "SOME_CODE")


def test_every_platform_error_is_a_reconciler_error() -> None:
    assert issubclass(e.PlatformError, ReconcilerError)


def test_the_request_and_field_are_kept_on_the_error() -> None:
    error = caught(failure(400, {"message": "bad", "field": "agents"}))
    assert (error.method, error.path, error.field) == ("GET", "/api/cli/benchmark-runs/r1", "agents")


def test_issues_are_listed_under_the_message() -> None:
    body = {
        "message": "Invalid benchmark config",
        "issues": [
            {"key": "agents.0.harness", "message": "Unknown harness"},
            {"key": "execution.attemps", "message": "Unrecognized key", "key_correction": "attempts_per_task"},
            "a bare string",
        ],
    }
    error = caught(failure(400, body))
    assert error.message == (
        "Invalid benchmark config\n"
        "  - agents.0.harness: Unknown harness\n"
        "  - execution.attemps: Unrecognized key (did you mean 'attempts_per_task'?)\n"
        "  - a bare string"
    )
    assert error.issues[0] == e.Issue("agents.0.harness", "Unknown harness")


def test_the_error_key_is_used_when_there_is_no_message() -> None:
    assert caught(failure(400, {"error": "Bad request body"})).message == "Bad request body"


def test_a_body_that_is_not_json_is_quoted_in_the_message() -> None:
    error = caught(failure(502, text="<html>Bad Gateway</html>" + "x" * 500))
    assert error.message.startswith("API error: HTTP 502. Response: <html>Bad Gateway</html>")
    assert len(error.message) < 260


@pytest.mark.parametrize(
    ("code", "words"),
    [("TOKEN_EXPIRED", "has expired"), ("TOKEN_REVOKED", "has been revoked"), ("UNAUTHORIZED", "invalid or expired")],
)
def test_401_explains_the_token_problem_by_code(code: str, words: str) -> None:
    error = caught(failure(401, {"message": "nope", "code": code}))
    assert isinstance(error, e.Unauthorized)
    assert words in error.message
    assert "OSMOSIS_TOKEN" in (error.hint or "")


def test_403_benchmarks_not_enabled_has_its_own_class() -> None:
    body = {"message": "Benchmarks is not available for your account", "code": "BENCHMARKS_NOT_ENABLED"}
    error = caught(failure(403, body))
    assert isinstance(error, e.BenchmarksNotEnabled)
    assert isinstance(error, e.Forbidden)
    assert error.message == "Benchmarks is not available for your account"


def test_409_benchmark_not_ready_has_its_own_class() -> None:
    error = caught(failure(409, {"message": "Benchmark is syncing", "code": "BENCHMARK_NOT_READY"}))
    assert isinstance(error, e.BenchmarkNotReady)
    assert isinstance(error, e.Conflict)


def test_a_scope_code_gets_a_scope_hint() -> None:
    error = caught(failure(400, {"message": "scope header missing", "code": "GIT_SCOPE_HEADER_REQUIRED"}))
    assert "--workspace" in (error.hint or "")


def test_missing_secrets_are_named_with_a_hint_to_create_each() -> None:
    body = {"message": "Secret(s) not found: OPENAI_API_KEY, HF_TOKEN", "platform_url": "https://platform.test/s"}
    error = caught(failure(404, body))
    assert isinstance(error, e.SecretsNotFound)
    assert error.names == ("OPENAI_API_KEY", "HF_TOKEN")
    assert "osmosis secret set OPENAI_API_KEY" in (error.hint or "")
    assert "osmosis secret set HF_TOKEN" in (error.hint or "")
    assert "https://platform.test/s" in (error.hint or "")


def test_missing_secrets_are_found_in_details_error_too() -> None:
    body = {"message": "Submit failed", "details": {"error": "Secret(s) not found: JUDGE_KEY."}}
    error = caught(failure(404, body))
    assert isinstance(error, e.SecretsNotFound)
    assert error.names == ("JUDGE_KEY",)


def test_a_plain_404_is_not_found() -> None:
    error = caught(failure(404, {"message": "Benchmark run not found"}))
    assert type(error) is e.NotFound


def test_426_uses_the_platform_message_when_its_status_is_valid() -> None:
    error = caught(failure(426, {"status": "unsupported", "message": "Too old."}))
    assert isinstance(error, e.UpgradeRequired)
    assert error.message == "Too old."


def test_426_without_a_valid_body_says_the_version_is_unsupported() -> None:
    error = caught(failure(426, text="gone"))
    assert "no longer supported" in error.message


def test_429_carries_the_retry_after_seconds() -> None:
    error = caught(failure(429, {"message": "slow down"}, headers={"Retry-After": "12"}))
    assert isinstance(error, e.RateLimited)
    assert error.retry_after == 12.0


def test_a_network_failure_is_unreachable_with_no_status() -> None:
    def handler(request: Sent) -> Response:
        raise TransportError("not_sent", "Name or service not known")

    error = caught(handler)
    assert isinstance(error, e.PlatformUnreachable)
    assert error.status is None
    assert "https://platform.test" in error.message


def test_a_success_that_is_not_json_is_a_protocol_error() -> None:
    error = caught(failure(200, text="<html>login</html>"))
    assert isinstance(error, e.ProtocolError)
    assert "Invalid JSON" in error.message


def test_a_success_that_is_not_an_object_is_a_protocol_error() -> None:
    assert isinstance(caught(failure(200, [1, 2])), e.ProtocolError)


def test_a_missing_required_key_is_a_protocol_error() -> None:
    error = caught(failure(200, {"configuration": {}}))
    assert isinstance(error, e.ProtocolError)
    assert "benchmark_run" in error.message


def test_a_benchmark_answer_without_its_benchmark_is_a_protocol_error() -> None:
    error = caught(failure(200, {"leaderboard": []}), lambda c: c.get_benchmark("tb"))
    assert isinstance(error, e.ProtocolError)


def test_a_bad_manifest_item_is_a_protocol_error() -> None:
    body = {"files": [{"path": "summary.csv", "size": True}]}
    error = caught(failure(200, body), lambda c: c.get_manifest("r1", ["summary"]))
    assert isinstance(error, e.ProtocolError)
    assert "manifest.files[0].size" in error.message


ECHOES = [
    (400, {"message": f"bad token {TOKEN}", "issues": [{"key": "auth", "message": TOKEN}]}),
    (401, {"message": f"token {TOKEN} expired", "code": "TOKEN_EXPIRED"}),
    (403, {"error": f"forbidden for {TOKEN}"}),
    (404, {"message": f"Secret(s) not found: {TOKEN}"}),
    (429, {"message": TOKEN}),
    (500, {"message": f"crash while handling {TOKEN}"}),
]


@pytest.mark.parametrize(("status", "body"), ECHOES)
def test_the_token_never_appears_in_any_error(status: int, body: dict[str, Any]) -> None:
    error = caught(failure(status, body))
    for text in (str(error), repr(error), error.render(), repr(error.issues), repr(vars(error))):
        assert TOKEN not in text


def test_the_token_never_appears_in_a_network_error() -> None:
    def handler(request: Sent) -> Response:
        raise TransportError("not_sent", f"proxy refused {TOKEN}")

    error = caught(handler)
    assert TOKEN not in str(error) + repr(error) + error.render()


def test_provided_secret_values_are_redacted_from_submit_errors() -> None:
    payload = {"experiment_config": {"benchmark": "tb"}, "secrets": {"required": ["K"], "provided": {"K": "v4lue-xyz"}}}
    error = caught(failure(400, {"message": "bad value v4lue-xyz"}), lambda c: c.submit_run(payload))
    assert "v4lue-xyz" not in error.render()
    assert "[REDACTED]" in error.message


def test_a_secret_value_is_redacted_from_set_secret_errors() -> None:
    error = caught(
        failure(400, {"message": "cannot store s3cr3t-val"}), lambda c: c.set_secret("K", "s3cr3t-val", "user")
    )
    assert "s3cr3t-val" not in error.render()
