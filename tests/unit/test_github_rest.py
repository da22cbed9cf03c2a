"""The GitHub REST client: Link paging, typed errors, bounded retries, and a token that stays secret."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from reconciler.github.rest import (
    GitHubAuthError,
    GitHubClient,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubServerError,
    GitHubValidationError,
)

TOKEN = "ghs_do_not_print_me"
API = "https://api.github.test"


def client(handler: Callable[[httpx.Request], httpx.Response], **kw: object) -> GitHubClient:
    return GitHubClient(TOKEN, API, transport=httpx.MockTransport(handler), sleep=lambda _s: None, **kw)  # type: ignore[arg-type]


def comment(i: int, body: str = "hi") -> dict[str, object]:
    return {"id": i, "body": body, "html_url": f"https://github.test/c/{i}", "user": {"login": "u", "type": "User"}}


def test_list_follows_link_next_across_pages() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page", "1"))
        headers = (
            {"Link": f'<{API}/repos/o/r/issues/1/comments?per_page=2&page={page + 1}>; rel="next"'} if page < 3 else {}
        )
        return httpx.Response(200, json=[comment(page * 10), comment(page * 10 + 1)], headers=headers)

    with client(handler) as gh:
        assert [c.id for c in gh.list_issue_comments("o/r", 1)] == [10, 11, 20, 21, 30, 31]


def test_first_page_asks_for_100_per_page() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=[])

    with client(handler) as gh:
        list(gh.list_issue_comments("o/r", 1))
    assert seen == [f"{API}/repos/o/r/issues/1/comments?per_page=100"]


def test_a_next_link_to_another_host_is_refused() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=[comment(1)], headers={"Link": '<https://evil.test/x?page=2>; rel="next"'})

    with client(handler) as gh, pytest.raises(GitHubError, match=r"refusing to send the GitHub token to evil\.test"):
        list(gh.list_issue_comments("o/r", 1))


def test_requests_carry_the_bearer_token_and_api_version() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(201, json=comment(5))

    with client(handler) as gh:
        gh.create_issue_comment("o/r", 1, "body")
    assert seen[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert seen[0].headers["x-github-api-version"] == "2022-11-28"


@pytest.mark.parametrize(
    ("status", "headers", "error"),
    [
        (401, {}, GitHubAuthError),
        (403, {}, GitHubAuthError),
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0"}, GitHubRateLimited),
        (429, {"retry-after": "1"}, GitHubRateLimited),
        (404, {}, GitHubNotFound),
        (422, {}, GitHubValidationError),
        (503, {}, GitHubServerError),
    ],
)
def test_errors_are_typed_by_status(status: int, headers: dict[str, str], error: type[GitHubError]) -> None:
    answer = httpx.Response(status, json={"message": "nope"}, headers=headers)
    with client(lambda r: answer, retries=0) as gh, pytest.raises(error) as info:
        gh.update_issue_comment("o/r", 5, "x")
    assert info.value.status == status


def test_an_error_message_never_holds_the_token() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"message": f"Bad credentials {request.headers['authorization']}"})

    with client(handler) as gh, pytest.raises(GitHubAuthError) as info:
        gh.create_issue_comment("o/r", 1, "x")
    assert TOKEN not in info.value.render()
    assert "***" in info.value.render()


def test_a_get_is_retried_after_a_server_error() -> None:
    answers = iter([httpx.Response(502), httpx.Response(200, json=[comment(1)])])
    with client(lambda r: next(answers)) as gh:
        assert [c.id for c in gh.list_issue_comments("o/r", 1)] == [1]


def test_a_post_is_never_retried() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        return httpx.Response(502)

    with client(handler) as gh, pytest.raises(GitHubServerError):
        gh.create_issue_comment("o/r", 1, "x")
    assert calls == ["POST"]


def test_retries_are_bounded() -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.method)
        return httpx.Response(500)

    with client(handler, retries=2) as gh, pytest.raises(GitHubServerError):
        gh.update_issue_comment("o/r", 1, "x")
    assert len(calls) == 3


def test_a_rate_limit_waits_as_long_as_retry_after_says() -> None:
    waits: list[float] = []
    answers = iter([httpx.Response(429, headers={"retry-after": "7"}), httpx.Response(200, json=comment(1))])
    gh = GitHubClient(TOKEN, API, transport=httpx.MockTransport(lambda r: next(answers)), sleep=waits.append)
    with gh:
        gh.update_issue_comment("o/r", 1, "x")
    assert waits == [7.0]


def test_the_client_repr_has_no_token() -> None:
    with client(lambda r: httpx.Response(200)) as gh:
        assert TOKEN not in repr(gh)


@pytest.mark.parametrize("content", [b"<html>proxy error</html>", b"[" * 100_000], ids=["html", "too-deep"])
def test_an_answer_that_is_not_json_is_a_clear_error_naming_the_request(content: bytes) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=content)

    with client(handler) as gh, pytest.raises(GitHubError, match=r"GET /repos/o/r/issues/1/comments .*not JSON"):
        list(gh.list_issue_comments("o/r", 1))
