"""A fake GitHub REST API on 127.0.0.1 for tests: issue comments with Link paging, create, update;
the pull requests of a commit; commit statuses.

    with FakeGitHub(token="t").serve() as gh:      # a real uvicorn server in a thread
        gh.url                                     # use as GITHUB_API_URL
        gh.add_comments("acme/evals", 7, 120)      # other people's comments, spread over pages
        gh.comments("acme/evals", 7)               # state to assert on
        gh.requests                                # (method, path) of every call, in order
        gh.merge("acme/evals", 7, sha)             # pull request 7 was merged as commit `sha`
        gh.statuses("acme/evals", sha)             # statuses set on a commit, newest first

Like GitHub it pages lists (`per_page`, default 30, at most 100) with a `Link` header, answers 401
without the right bearer token, 404 for an unknown comment, 422 for a body over 65,536 characters,
and 422 for the pull requests of something that is not a full commit SHA.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

BOT = {"login": "github-actions[bot]", "type": "Bot"}
HUMAN = {"login": "octocat", "type": "User"}


@dataclass
class FakeGitHub:
    token: str = "ghs_fake_token_for_tests"
    comments_by_issue: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    pulls_by_commit: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    statuses_by_commit: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    url: str = ""
    # the login a person's token writes as; None: an installation token (GITHUB_TOKEN), which
    # writes as github-actions[bot] and is refused /user, as GitHub does
    login: str | None = None
    read_only: bool = False  # a fork's pull request: the token may read, and every write is 403
    foreign_edits_refused: bool = False  # editing a comment someone else wrote is 403
    _next_id: int = 1000

    # --- state ---------------------------------------------------------------------------

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        return self.comments_by_issue.setdefault((repo, number), [])

    def add_comment(self, repo: str, number: int, body: str, user: dict[str, str] | None = None) -> dict[str, Any]:
        self._next_id += 1
        comment = {
            "id": self._next_id,
            "body": body,
            "user": dict(user or HUMAN),
            "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{self._next_id}",
            "updated": 0,
        }
        self.comments(repo, number).append(comment)
        return comment

    def add_comments(self, repo: str, number: int, count: int) -> None:
        for i in range(count):
            self.add_comment(repo, number, f"comment {i}: looks good to me")

    def merge(self, repo: str, number: int, sha: str) -> None:
        self.pulls_by_commit.setdefault((repo, sha), []).append(
            {
                "number": number,
                "state": "closed",
                "merged_at": "2026-01-01T00:00:00Z",
                "html_url": f"https://github.com/{repo}/pull/{number}",
            }
        )

    def statuses(self, repo: str, sha: str) -> list[dict[str, Any]]:
        return self.statuses_by_commit.setdefault((repo, sha), [])

    def calls(self, method: str) -> list[str]:
        return [path for m, path in self.requests if m == method]

    # --- the API -------------------------------------------------------------------------

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route(
                    "/repos/{owner}/{repo}/issues/{number:int}/comments", self._issue_comments, methods=["GET", "POST"]
                ),
                Route("/repos/{owner}/{repo}/issues/comments/{cid:int}", self._comment, methods=["PATCH"]),
                Route("/repos/{owner}/{repo}/commits/{sha}/pulls", self._commit_pulls, methods=["GET"]),
                Route("/repos/{owner}/{repo}/commits/{sha}/statuses", self._commit_statuses, methods=["GET"]),
                Route("/repos/{owner}/{repo}/statuses/{sha}", self._set_status, methods=["POST"]),
                Route("/user", self._user, methods=["GET"]),
            ]
        )

    def author(self) -> dict[str, str]:
        """Who the comments this token posts are written by."""
        return {"login": self.login, "type": "User"} if self.login else dict(BOT)

    async def _user(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path))
        if not self._authorized(request):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        if self.login is None:
            return JSONResponse({"message": "Resource not accessible by integration"}, status_code=403)
        return JSONResponse({"login": self.login, "type": "User"})

    def _authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.token}"

    async def _issue_comments(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path))
        if not self._authorized(request):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        repo = f"{request.path_params['owner']}/{request.path_params['repo']}"
        number = request.path_params["number"]
        if request.method == "POST":
            if self.read_only:
                return JSONResponse({"message": "Resource not accessible by integration"}, status_code=403)
            body = (await request.json())["body"]
            if len(body) > 65536:
                return JSONResponse({"message": "Validation Failed", "errors": [{"message": "body is too long"}]}, 422)
            return JSONResponse(self._public(self.add_comment(repo, number, body, self.author())), status_code=201)
        per_page = min(100, int(request.query_params.get("per_page", 30)))
        page = int(request.query_params.get("page", 1))
        items = self.comments(repo, number)
        chunk = items[(page - 1) * per_page : page * per_page]
        last = max(1, -(-len(items) // per_page))
        headers = {}
        base = f"{self.url}{request.url.path}"
        links = []
        if page < last:
            links.append(f'<{base}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{base}?per_page={per_page}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{base}?per_page={per_page}&page=1>; rel="first"')
        if links:
            headers["Link"] = ", ".join(links)
        return JSONResponse([self._public(c) for c in chunk], headers=headers)

    async def _comment(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path))
        if not self._authorized(request):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        if self.read_only:
            return JSONResponse({"message": "Resource not accessible by integration"}, status_code=403)
        cid = request.path_params["cid"]
        for (_repo, _number), items in self.comments_by_issue.items():
            for c in items:
                if c["id"] == cid:
                    if self.foreign_edits_refused and c["user"]["login"] != self.author()["login"]:
                        return JSONResponse({"message": "Resource not accessible by integration"}, 403)
                    body = (await request.json())["body"]
                    if len(body) > 65536:
                        return JSONResponse({"message": "Validation Failed"}, status_code=422)
                    c["body"] = body
                    c["updated"] += 1
                    return JSONResponse(self._public(c))
        return JSONResponse({"message": "Not Found"}, status_code=404)

    async def _commit_pulls(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path))
        if not self._authorized(request):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        repo = f"{request.path_params['owner']}/{request.path_params['repo']}"
        sha = request.path_params["sha"]
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            return JSONResponse({"message": f"No commit found for SHA: {sha}"}, status_code=422)
        return JSONResponse(self.pulls_by_commit.get((repo, sha), []))

    async def _commit_statuses(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path))
        if not self._authorized(request):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        repo = f"{request.path_params['owner']}/{request.path_params['repo']}"
        return JSONResponse(self.statuses(repo, request.path_params["sha"]))

    async def _set_status(self, request: Request) -> JSONResponse:
        self.requests.append((request.method, request.url.path))
        if not self._authorized(request):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        body = await request.json()
        if body.get("state") not in ("pending", "success", "failure", "error"):
            return JSONResponse({"message": "Validation Failed", "errors": [{"message": "bad state"}]}, 422)
        if len(str(body.get("description") or "")) > 140:
            return JSONResponse({"message": "Validation Failed", "errors": [{"message": "description"}]}, 422)
        repo = f"{request.path_params['owner']}/{request.path_params['repo']}"
        self._next_id += 1
        status = {
            "id": self._next_id,
            "state": body["state"],
            "context": body.get("context") or "default",
            "description": body.get("description"),
            "target_url": body.get("target_url"),
        }
        self.statuses(repo, request.path_params["sha"]).insert(0, status)  # GitHub lists newest first
        return JSONResponse(status, status_code=201)

    @staticmethod
    def _public(c: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in c.items() if k != "updated"}

    # --- serving ---------------------------------------------------------------------------

    @contextmanager
    def serve(self) -> Iterator[FakeGitHub]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off", ws="none", access_log=False)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            for _ in range(500):
                if server.started:
                    break
                threading.Event().wait(0.01)
            else:
                raise RuntimeError("the fake GitHub server did not start")
            yield self
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            sock.close()
