"""Retries: bounded backoff for safe calls, Retry-After honoured, a submit never repeated blindly."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from reconciler.osmosis import errors as e
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.retry import RetryPolicy, parse_retry_after
from reconciler.osmosis.transport import FailureKind, Response, TransportError
from tests.fake_transport import FakeTransport, Sent, reply

BASE = "https://platform.test"
RUN = {"benchmark_run": {"id": "r1", "name": "bright-otter", "status": "running"}}
CREATED = {
    "id": "r1",
    "name": "bright-otter",
    "status": "pending",
    "created_at": "2026-01-01T00:00:00Z",
    "workflow_id": "benchmark-run/r1",
    "task_count": 3,
}
PAYLOAD = {"experiment_config": {"benchmark": "tb"}, "agents": []}
Answer = Response | FailureKind


class FakeTime:
    """A clock that moves only when the client sleeps (or a request says it took time)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def policy(self, **options: Any) -> RetryPolicy:
        options.setdefault("jitter", False)
        return RetryPolicy(sleep=self.sleep, clock=self.clock, **options)


class Script:
    """Answers requests in order; a failure kind is raised as a TransportError of that kind."""

    def __init__(self, *answers: Answer, request_seconds: float = 0.0, time: FakeTime | None = None) -> None:
        self.answers: Iterator[Answer] = iter(answers)
        self.requests: list[Sent] = []
        self.request_seconds = request_seconds
        self.time = time

    def __call__(self, request: Sent) -> Response:
        self.requests.append(request)
        if self.time is not None:
            self.time.now += self.request_seconds
        answer = next(self.answers)
        if isinstance(answer, Response):
            return answer
        raise TransportError(answer, "simulated")


def run(script: Script, policy: RetryPolicy, action: Callable[[OsmosisClient], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        async with OsmosisClient(
            BASE, token="t", workspace="team", transport=FakeTransport(script), retry=policy
        ) as client:
            return await action(client)

    return asyncio.run(main())


def get_run(client: OsmosisClient) -> Awaitable[Any]:
    return client.get_run("r1")


def submit(client: OsmosisClient) -> Awaitable[Any]:
    return client.submit_run(PAYLOAD)


def ok(body: Any = RUN, status: int = 200) -> Response:
    return reply(status, json=body)


def status(code: int, retry_after: str | None = None) -> Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return reply(code, json={"message": f"HTTP {code}"}, headers=headers)


# --- safe calls ---


def test_a_read_is_retried_on_5xx_with_exponential_backoff() -> None:
    time = FakeTime()
    script = Script(status(500), status(502), ok())
    detail = run(script, time.policy(base_delay=0.5), get_run)
    assert detail.benchmark_run.id == "r1"
    assert time.sleeps == [0.5, 1.0]


def test_full_jitter_draws_each_wait_from_the_injected_random_source() -> None:
    time = FakeTime()
    script = Script(status(503), status(503), ok())
    run(script, time.policy(base_delay=1.0, jitter=True, rng=lambda: 0.25), get_run)
    assert time.sleeps == [0.25, 0.5]


def test_backoff_never_exceeds_max_delay() -> None:
    time = FakeTime()
    script = Script(*[status(500)] * 5, ok())
    run(script, time.policy(max_attempts=6, base_delay=1.0, max_delay=3.0), get_run)
    assert time.sleeps == [1.0, 2.0, 3.0, 3.0, 3.0]


def test_retry_after_is_honoured_on_429() -> None:
    time = FakeTime()
    script = Script(status(429, retry_after="7"), ok())
    run(script, time.policy(max_delay=1.0), get_run)
    assert time.sleeps == [7.0]


def test_retry_after_is_honoured_on_503() -> None:
    time = FakeTime()
    script = Script(status(503, retry_after="2.5"), ok())
    run(script, time.policy(), get_run)
    assert time.sleeps == [2.5]


def test_a_retry_after_beyond_the_time_budget_gives_up_at_once() -> None:
    time = FakeTime()
    script = Script(status(429, retry_after="120"), ok())
    with pytest.raises(e.RateLimited) as caught:
        run(script, time.policy(max_total_seconds=30), get_run)
    assert caught.value.retry_after == 120.0
    assert time.sleeps == []
    assert len(script.requests) == 1


def test_retries_stop_after_max_attempts_with_the_last_error() -> None:
    time = FakeTime()
    script = Script(*[status(503)] * 10)
    with pytest.raises(e.ServerError):
        run(script, time.policy(max_attempts=3), get_run)
    assert len(script.requests) == 3
    assert len(time.sleeps) == 2


def test_retries_stop_when_the_time_budget_is_spent() -> None:
    time = FakeTime()
    script = Script(*[status(500)] * 10, request_seconds=4.0, time=time)
    with pytest.raises(e.ServerError):
        run(script, time.policy(max_attempts=10, base_delay=1.0, max_total_seconds=12.0), get_run)
    assert time.sleeps == [1.0, 2.0]  # a third wait would start after 4+1+4+2+4 = 15 s > 12 s
    assert time.now - 4.0 <= 12.0


def test_a_wait_is_cut_to_what_is_left_of_the_budget() -> None:
    time = FakeTime()
    script = Script(status(500), status(500), ok())
    run(script, time.policy(base_delay=4.0, max_total_seconds=5.0), get_run)
    assert time.sleeps == [4.0, 1.0]


@pytest.mark.parametrize("error", ["timeout", "not_sent", "broken"])
def test_a_read_is_retried_after_a_network_error(error: FailureKind) -> None:
    time = FakeTime()
    script = Script(error, ok())
    assert run(script, time.policy(), get_run).benchmark_run.id == "r1"
    assert len(script.requests) == 2


def test_a_read_whose_body_was_truncated_is_retried() -> None:
    time = FakeTime()
    script = Script(reply(200, content=b'{"benchmark_run": {"id"'), ok())
    assert run(script, time.policy(), get_run).benchmark_run.id == "r1"


@pytest.mark.parametrize("code", [400, 401, 403, 404, 409])
def test_a_4xx_answer_is_not_retried(code: int) -> None:
    time = FakeTime()
    script = Script(status(code), ok())
    with pytest.raises(e.PlatformError):
        run(script, time.policy(), get_run)
    assert len(script.requests) == 1


def test_stop_is_retried_on_503() -> None:
    time = FakeTime()
    script = Script(status(503), reply(204))
    run(script, time.policy(), lambda c: c.stop_run("r1"))
    assert len(script.requests) == 2


def test_stopping_a_run_that_already_ended_raises_conflict() -> None:
    script = Script(status(409))
    with pytest.raises(e.Conflict):
        run(script, FakeTime().policy(), lambda c: c.stop_run("r1"))


def test_the_disabled_policy_makes_exactly_one_attempt() -> None:
    script = Script(status(503), ok())
    with pytest.raises(e.ServerError):
        run(script, RetryPolicy.disabled(), get_run)
    assert len(script.requests) == 1


# --- submit ---


@pytest.mark.parametrize("code", [500, 502, 503, 504])
def test_a_submit_answered_with_5xx_is_not_retried_and_its_outcome_is_unknown(code: int) -> None:
    time = FakeTime()
    script = Script(status(code, retry_after="1"), ok(CREATED, 201))
    with pytest.raises(e.SubmitOutcomeUnknown) as caught:
        run(script, time.policy(), submit)
    assert len(script.requests) == 1
    assert caught.value.status == code
    assert "look the run up" in (caught.value.hint or "")


@pytest.mark.parametrize("error", ["timeout", "broken"])
def test_a_submit_that_may_have_been_sent_is_not_retried(error: FailureKind) -> None:
    time = FakeTime()
    script = Script(error, ok(CREATED, 201))
    with pytest.raises(e.SubmitOutcomeUnknown):
        run(script, time.policy(), submit)
    assert len(script.requests) == 1


def test_a_submit_is_retried_on_429() -> None:
    time = FakeTime()
    script = Script(status(429, retry_after="3"), ok(CREATED, 201))
    assert run(script, time.policy(), submit).id == "r1"
    assert time.sleeps == [3.0]


@pytest.mark.parametrize("error", ["not_sent"])
def test_a_submit_is_retried_when_no_connection_was_made(error: FailureKind) -> None:
    time = FakeTime()
    script = Script(error, ok(CREATED, 201))
    assert run(script, time.policy(), submit).id == "r1"
    assert len(script.requests) == 2


def test_a_submit_that_never_connects_is_unreachable_not_unknown() -> None:
    time = FakeTime()
    script = Script("not_sent", "not_sent", "not_sent", "not_sent")
    with pytest.raises(e.PlatformUnreachable):
        run(script, time.policy(max_attempts=4), submit)
    assert len(script.requests) == 4


def test_a_submit_accepted_with_an_unreadable_answer_has_an_unknown_outcome() -> None:
    script = Script(reply(201, content=b"<html>"))
    with pytest.raises(e.SubmitOutcomeUnknown):
        run(script, FakeTime().policy(), submit)


def test_a_submit_accepted_without_the_run_id_has_an_unknown_outcome() -> None:
    script = Script(ok({"status": "pending"}, 201))
    with pytest.raises(e.SubmitOutcomeUnknown):
        run(script, FakeTime().policy(), submit)


def test_a_rejected_submit_raises_the_typed_rejection() -> None:
    script = Script(status(400))
    with pytest.raises(e.ValidationRejected):
        run(script, FakeTime().policy(), submit)


# --- the policy itself ---


def test_a_policy_needs_at_least_one_attempt() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetryPolicy(max_attempts=0)


@pytest.mark.parametrize(
    ("header", "seconds"), [("5", 5.0), (" 1.5 ", 1.5), ("0", 0.0), ("-1", None), ("soon", None), (None, None)]
)
def test_retry_after_is_read_as_seconds(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header) == seconds
