"""A typed async client for every benchmark endpoint of docs/platform-api.md §2.

    async with OsmosisClient("https://platform.osmosis.ai", token=token, git_identity="acme/evals") as osmosis:
        runs = await osmosis.list_runs()

Every call carries `Authorization: Bearer <token>` (when there is a token),
`Content-Type: application/json`, `User-Agent: reconciler/<version>` and exactly one scope
header: `X-Osmosis-Workspace` or `X-Osmosis-Git` (lowercased). Path segments are
percent-encoded with no safe characters. Errors are reconciler.osmosis.errors; retries
follow reconciler.osmosis.session. Presigned output URLs are fetched only through
`open_presigned`, which sends no credentials.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Literal, Self, TypeVar
from urllib.parse import urljoin, urlsplit

from pydantic import BaseModel, ValidationError

from .. import __version__
from ..errors import ConfigError
from .errors import NotFound, PlatformError, PlatformUnreachable, ProtocolError, SubmitOutcomeUnknown
from .models import (
    BenchmarkDetail,
    BenchmarkEntry,
    DownloadUrls,
    LogPage,
    Manifest,
    Page,
    PageMeta,
    RunDetail,
    RunItem,
    RunScan,
    SecretRecord,
    SubmitResult,
)
from .retry import RetryPolicy
from .session import PlatformSession
from .transport import Request, StreamedResponse, Transport, TransportError
from .urls import is_loopback, normalize_base_url, require_secure, segment

logger = logging.getLogger("reconciler.osmosis")

PAGE_LIMIT = 50  # the platform's cap for list pages
LOG_LIMIT = 200  # the platform's cap for log pages
MAX_DOWNLOAD_BATCH = 500
MAX_REDIRECTS = 20
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ALLOWED_HOPS_KEPT = 256  # origins whose presigned hops were checked and allowed, per client
_PAGE_FIELDS = ("total_count", "has_more", "next_offset")
DEFAULT_RETRY = RetryPolicy()
_GIT_IDENTITY = re.compile(r"^[^/\s]+/[^/\s]+$")

SecretScope = Literal["workspace", "user"]


M = TypeVar("M", bound=BaseModel)
Keep = Callable[[Mapping[str, Any]], bool]
"""Which raw list items become models (see `OsmosisClient.scan_runs`)."""


class OsmosisClient:
    """The platform, one workspace scope, one token. Use it as an async context manager."""

    # listing 10,000 runs is 200 pages: latency, not bandwidth, is the cost. At 20 ms a request,
    # a listing took 0.67 s with 8 pages in flight, 0.40 s with 16, 0.26-0.35 s with 32, and 64 gained
    # little more (tests/perf/bench_plan.py); a platform that wants fewer says 429 (osmosis/retry.py)
    page_concurrency = 32
    """How many list pages this client fetches at once, all its listings together (a listing's
    first page, which gives `total_count`, comes before the others)."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None,
        workspace: str | None = None,
        git_identity: str | None = None,
        transport: Transport | None = None,
        retry: RetryPolicy = DEFAULT_RETRY,
        timeout: float = 30.0,
        user_agent: str = f"reconciler/{__version__}",
        on_warning: Callable[[str], None] | None = None,
        allow_insecure: bool = False,
    ) -> None:
        """`transport`: how requests travel (reconciler.osmosis.transport); by default the network,
        through aiohttp. `allow_insecure` skips the https check: only for an in-process app."""
        self.base_url = normalize_base_url(base_url)
        if not allow_insecure:
            require_secure(self.base_url)
        self._user_agent = user_agent
        self.scope = _scope_header(workspace, git_identity)
        if transport is None:
            # imported here: only a client that talks to a URL pays for aiohttp's import
            from .aiohttp_transport import AiohttpTransport

            transport = AiohttpTransport(timeout=timeout)
        self._transport = transport
        # one bound for every listing of this client: the early reads list each benchmark at once,
        # and their pages together must stay within the transport's connections
        self._pages_in_flight: asyncio.Semaphore | None = None
        own = urlsplit(self.base_url)
        self._origin = (own.scheme, own.hostname, own.port)  # presigned hops may come back here over http
        self._allowed_hops: set[str] = set()  # _check_presigned_hop's verdicts
        self._session = PlatformSession(
            self.base_url,
            token=_checked_token(token),
            scope=self.scope,
            transport=transport,
            retry=retry,
            timeout=timeout,
            user_agent=user_agent,
            on_warning=on_warning or logger.warning,
        )

    def __repr__(self) -> str:
        return f"OsmosisClient(base_url={self.base_url!r}, {self.scope[0]}={self.scope[1]!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._session.aclose()

    # --- benchmarks ---

    async def list_benchmarks(self) -> list[BenchmarkEntry]:
        return await self._collect("/api/cli/benchmarks", "benchmarks", BenchmarkEntry, {})

    async def get_benchmark(self, ref: str) -> BenchmarkDetail:
        """A benchmark by key, exact name or id, with its leaderboard (verbatim and typed)."""
        path = f"/api/cli/benchmarks/{_named(ref, 'Benchmark')}"
        data = await self._session.call("GET", path)
        benchmark = data.get("benchmark")
        if not isinstance(benchmark, dict):
            raise ProtocolError(
                f"The platform's answer to GET {path} has no `benchmark` object", method="GET", path=path
            )
        return _parse(BenchmarkDetail, {**benchmark, "leaderboard": data.get("leaderboard")}, "GET", path, "benchmark")

    # --- runs ---

    async def list_runs_page(
        self, *, offset: int = 0, limit: int = PAGE_LIMIT, benchmark_id: str | None = None
    ) -> Page[RunItem]:
        params = {"benchmark": benchmark_id} if benchmark_id is not None else {}
        return await self._page(
            "/api/cli/benchmark-runs", "benchmark_runs", RunItem, offset=offset, limit=limit, params=params
        )

    async def list_runs(self, *, benchmark_id: str | None = None) -> list[RunItem]:
        """Every run of the workspace (or of one benchmark, by its id), newest first."""
        params = {"benchmark": benchmark_id} if benchmark_id is not None else {}
        return await self._collect("/api/cli/benchmark-runs", "benchmark_runs", RunItem, params)

    async def scan_runs(self, *, benchmark_id: str | None = None, keep: Keep) -> RunScan:
        """Every run, as `list_runs` reads them, but only the items `keep` accepts become models;
        the others are kept by id. A listing of 10,000 runs of which a few hundred matter then
        costs the memory of those few hundred."""
        params = {"benchmark": benchmark_id} if benchmark_id is not None else {}
        items, skipped = await self._collect_kept("/api/cli/benchmark-runs", "benchmark_runs", RunItem, params, keep)
        skipped.difference_update(item.id for item in items)
        # the set itself, not a frozen copy: at 10,000 runs each copy of it is half a MiB more
        # at the peak of a plan
        return RunScan.model_construct(items=tuple(items), others=skipped)

    async def get_run(self, name_or_id: str) -> RunDetail:
        path = f"/api/cli/benchmark-runs/{_named(name_or_id, 'Benchmark run')}"
        return _parse(RunDetail, await self._session.call("GET", path), "GET", path, "run")

    async def get_logs(
        self,
        name_or_id: str,
        *,
        limit: int = 50,
        direction: Literal["older", "newer"] = "older",
        cursor: str | None = None,
    ) -> LogPage:
        """One page of logs, oldest first within the page; no cursor + "older" = the newest page."""
        path = f"/api/cli/benchmark-runs/{_named(name_or_id, 'Benchmark run')}/logs"
        params = {"limit": str(_clamp(limit, LOG_LIMIT)), "direction": direction}
        if cursor is not None:
            params["cursor"] = cursor
        return _parse(LogPage, await self._session.call("GET", path, params=params), "GET", path, "logs")

    async def submit_run(self, payload: Mapping[str, Any]) -> SubmitResult:
        """Submit once. Raises SubmitOutcomeUnknown when the platform may have created the run
        anyway (timeout, dropped connection, 5xx, unreadable answer): look it up before retrying."""
        path = "/api/cli/benchmark-runs"
        data = await self._session.call("POST", path, body=payload, submit=True, secrets=_provided_values(payload))
        return _parse(SubmitResult, data, "POST", path, "submit", unknown_outcome=True)

    async def stop_run(self, run_id: str) -> None:
        """Stop a pending, queued or running run, by id. A run that has already ended answers
        409 and raises Conflict: whether that is fine is the caller's decision."""
        path = f"/api/cli/benchmark-runs/{_named(run_id, 'Benchmark run')}/stop"
        await self._session.call("POST", path, body={}, read_body=False)

    # --- outputs ---

    async def get_manifest(self, run_id: str, types: Sequence[str]) -> Manifest:
        if not types:
            raise ValueError("get_manifest needs at least one output type")
        path = f"/api/cli/benchmark-runs/{_named(run_id, 'Benchmark run')}/outputs/manifest"
        data = await self._session.call("GET", path, params={"types": ",".join(types)})
        return _parse(Manifest, data, "GET", path, "manifest")

    async def get_download_urls(self, run_id: str, items: Sequence[tuple[str, str | None]]) -> DownloadUrls:
        """Presigned URLs for (path, token) pairs of a manifest; 1..500 per call."""
        if not 1 <= len(items) <= MAX_DOWNLOAD_BATCH:
            raise ValueError(f"a download-URL batch holds 1..{MAX_DOWNLOAD_BATCH} items, not {len(items)}")
        path = f"/api/cli/benchmark-runs/{_named(run_id, 'Benchmark run')}/outputs/download-urls"
        body = {"items": [{"path": p, **({"token": t} if t is not None else {})} for p, t in items]}
        return _parse(DownloadUrls, await self._session.call("POST", path, body=body), "POST", path, "download-urls")

    def open_presigned(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> AbstractAsyncContextManager[StreamedResponse]:
        """The one door for presigned fetches: a streamed GET with no credentials.

        `async with client.open_presigned(url, headers={"Range": "bytes=10-"}) as response:`
        then read `response.status` and `response.chunks()`. Only `User-Agent`,
        `Accept-Encoding: identity` and the given headers are sent: never the token, never the
        scope header. Redirects are followed (at most 20), each hop https, loopback or this
        platform's own origin. Network failures, also while reading the body inside the block,
        raise PlatformUnreachable; the URL is never put in a message (it carries a signature).
        """
        if headers and any(name.lower() == "authorization" for name in headers):
            raise ValueError("presigned fetches carry no Authorization header")
        sent = {"User-Agent": self._user_agent, "Accept-Encoding": "identity", **(headers or {})}
        return _PresignedFetch(self, url, sent)

    def _check_presigned_hop(self, url: str) -> None:
        # a hop's verdict depends on its scheme and authority alone, which end before the third
        # slash; a download asks the same few origins thousands of times
        origin = url.split("/", 3)[:3]
        key = "/".join(origin)
        if key in self._allowed_hops:
            return
        self._check_hop_origin(key)
        if len(self._allowed_hops) >= _ALLOWED_HOPS_KEPT:
            self._allowed_hops.clear()
        self._allowed_hops.add(key)

    def _check_hop_origin(self, url: str) -> None:
        try:
            parts = urlsplit(url)
            scheme, host, port = parts.scheme.lower(), (parts.hostname or ""), parts.port
        except ValueError:
            raise ProtocolError("The platform returned an invalid download URL (<redacted URL>)") from None
        if scheme not in ("http", "https") or not host:
            raise ProtocolError("The platform returned an invalid download URL (<redacted URL>)")
        if scheme == "https" or is_loopback(host):
            return
        if (scheme, host, port) == self._origin:
            return
        raise ProtocolError(f"Refusing a download URL over {scheme} to {host}: only https is allowed")

    # --- secrets ---

    async def list_secrets(self, scope: Literal["all", "workspace", "user"] = "all") -> list[SecretRecord]:
        """Secret records (names and metadata; values are never returned), all pages."""
        return await self._collect(
            "/api/cli/environment-secrets", "environment_secrets", SecretRecord, {"scope": scope}
        )

    async def set_secret(self, name: str, value: str, scope: SecretScope) -> None:
        body = {"name": name, "value": value, "scope": scope}
        await self._session.call("POST", "/api/cli/environment-secrets", body=body, read_body=False, secrets=[value])

    async def delete_secret(self, name: str, scope: SecretScope) -> None:
        body = {"name": name, "scope": scope}
        await self._session.call("DELETE", "/api/cli/environment-secrets", body=body, read_body=False)

    # --- paging ---

    async def _page(
        self,
        path: str,
        key: str,
        model: type[M],
        *,
        offset: int,
        limit: int,
        params: Mapping[str, str],
        keep: Keep | None = None,
    ) -> Page[M]:
        query = {**params, "limit": str(_clamp(limit, PAGE_LIMIT)), "offset": str(max(0, offset))}
        data = await self._session.call("GET", path, params=query)
        raw = data.get(key)
        if raw is None:
            raw = []
        if not isinstance(raw, list):
            raise ProtocolError(
                f"The platform's answer to GET {path} has a `{key}` that is not a list", method="GET", path=path
            )
        items = []
        skipped = []
        for n, item in enumerate(raw):
            # an item is passed over only when it has a string id to count it by; anything else is
            # parsed, so a malformed answer is still reported as one
            if keep is not None and isinstance(item, dict) and isinstance(item.get("id"), str) and not keep(item):
                skipped.append(item["id"])
            else:
                items.append(_parse(model, item, "GET", path, f"{key}[{n}]"))
        meta = _parse(PageMeta, {name: data.get(name) for name in _PAGE_FIELDS}, "GET", path, "page")
        # built without validation: the items are parsed and the paging fields checked just above
        return Page[M].model_construct(
            items=tuple(items),
            skipped=tuple(skipped),
            total_count=meta.total_count,
            has_more=meta.has_more,
            next_offset=meta.next_offset,
        )

    async def _collect(self, path: str, key: str, model: type[M], params: Mapping[str, str]) -> list[M]:
        items, _ = await self._collect_kept(path, key, model, params, None)
        return items

    async def _collect_kept(
        self, path: str, key: str, model: type[M], params: Mapping[str, str], keep: Keep | None
    ) -> tuple[list[M], set[str]]:
        """Every item, and the ids of those `keep` passed over: follow `next_offset` until it is
        null or a page comes back empty.

        When the first page tells `total_count` (and honoured our page size), the remaining
        pages are fetched side by side, `page_concurrency` at a time; if the list moved
        meanwhile, paging goes on one page at a time from where the pages stop agreeing.
        Items seen twice (a list that grew while we read it) are kept once, first seen.
        """
        fetch = functools.partial(self._page, path, key, model, limit=PAGE_LIMIT, params=params, keep=keep)
        offset, page = 0, await fetch(offset=0)
        items = list(page.items)
        skipped = set(page.skipped)
        nxt = page.next_offset
        if nxt is not None and _size(page) == nxt == PAGE_LIMIT and page.total_count > nxt:
            offsets = list(range(nxt, page.total_count, PAGE_LIMIT))
            for offset, page in zip(offsets, await self._gather(fetch, offsets), strict=True):
                items.extend(page.items)
                skipped.update(page.skipped)
                if _size(page) != PAGE_LIMIT or page.next_offset != offset + PAGE_LIMIT:
                    break
        while _size(page) and page.next_offset is not None:
            if page.next_offset <= offset:
                raise ProtocolError(f"The platform's paging of GET {path} does not advance", method="GET", path=path)
            offset = page.next_offset
            page = await fetch(offset=offset)
            items.extend(page.items)
            skipped.update(page.skipped)
        return _unique(items), skipped

    async def _gather(self, fetch: Callable[..., Awaitable[Page[M]]], offsets: Sequence[int]) -> list[Page[M]]:
        if self._pages_in_flight is None:
            self._pages_in_flight = asyncio.Semaphore(self.page_concurrency)
        gate = self._pages_in_flight

        async def one(offset: int) -> Page[M]:
            async with gate:
                return await fetch(offset=offset)

        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(offset)) for offset in offsets]
        except BaseExceptionGroup as failures:
            first: BaseException = failures
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise first from None
        return [task.result() for task in tasks]


def _scope_header(workspace: str | None, git_identity: str | None) -> tuple[str, str]:
    if workspace is not None and git_identity is not None:
        raise ConfigError(
            "both a workspace name and a git identity were given; the platform takes exactly one scope",
            hint="keep either the workspace name or the GitHub owner/repo identity",
        )
    if workspace is not None:
        name = workspace.strip()
        if not name or not name.isprintable():
            raise ConfigError(f"invalid workspace name {workspace!r}")
        try:
            name.encode("latin-1")  # an HTTP header value carries nothing else
        except UnicodeEncodeError:
            raise ConfigError(
                f"workspace name {workspace!r} cannot be sent to the platform: only Latin-1 characters fit an HTTP header",
                hint="use the workspace's name as the platform shows it",
            ) from None
        return ("X-Osmosis-Workspace", name)
    if git_identity is not None:
        identity = git_identity.strip().lower()
        if not _GIT_IDENTITY.match(identity) or not identity.isprintable():
            raise ConfigError(f"invalid git identity {git_identity!r}: expected owner/repo")
        return ("X-Osmosis-Git", identity)
    raise ConfigError(
        "no Osmosis workspace scope: neither a workspace name nor a GitHub owner/repo identity",
        hint="set `workspace` in reconciler.toml, pass --workspace, or run inside a git repository whose origin is on github.com",
    )


def _checked_token(token: str | None) -> str | None:
    if token is None or not token.strip():
        return None
    token = token.strip()
    if not all(33 <= ord(char) <= 126 for char in token):
        raise ConfigError(
            "OSMOSIS_TOKEN contains spaces, line breaks or non-ASCII characters",
            hint="copy the token again: export OSMOSIS_TOKEN=...",
        )
    return token


def _size(page: Page[Any]) -> int:
    """How many items the platform put on the page, kept or passed over."""
    return len(page.items) + len(page.skipped)


def _clamp(limit: int, ceiling: int) -> int:
    return max(1, min(ceiling, limit))


def _provided_values(payload: Mapping[str, Any]) -> list[str]:
    """Secret values supplied at submit time: kept out of every error message."""
    secrets = payload.get("secrets")
    provided = secrets.get("provided") if isinstance(secrets, Mapping) else None
    if not isinstance(provided, Mapping):
        return []
    return [value for value in provided.values() if isinstance(value, str)]


def _unique(items: list[M]) -> list[M]:
    seen: set[object] = set()
    unique = []
    for item in items:
        key = getattr(item, "id", None)
        if key is None or key not in seen:
            unique.append(item)
            seen.add(key)
    return unique


def _parse(model: type[M], data: object, method: str, path: str, what: str, *, unknown_outcome: bool = False) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{what}{''.join(f'.{part}' if isinstance(part, str) else f'[{part}]' for part in err['loc'])}: {err['msg']}"
            for err in exc.errors()[:5]
        )
        text = f"Unexpected answer from the platform to {method} {path}: {problems}"
        cls = SubmitOutcomeUnknown if unknown_outcome else ProtocolError
        raise cls(text, method=method, path=path) from None


def _named(ref: str, kind: str) -> str:
    """`ref` as a path segment; an empty one would turn the request into the list endpoint's."""
    if not ref.strip():
        raise NotFound(f"{kind} not found: the name is empty", status=404, code="NOT_FOUND")
    return segment(ref)


class _PresignedFetch:
    """`OsmosisClient.open_presigned`'s block: follows allowed redirects on entry, releases the
    answer on exit, and turns a transport failure (on entry or while the body is read inside
    the block) into PlatformUnreachable or ProtocolError. A class, not a generator-based context
    manager: one is entered per downloaded file, and the generator's frames cost more than the
    fetch's own Python (tests/perf/bench_download.py)."""

    __slots__ = ("_client", "_headers", "_stream", "_url")

    def __init__(self, client: OsmosisClient, url: str, headers: dict[str, str]) -> None:
        self._client = client
        self._url = url
        self._headers = headers
        self._stream: AbstractAsyncContextManager[StreamedResponse] | None = None

    async def __aenter__(self) -> StreamedResponse:
        url = self._url
        try:
            for _ in range(MAX_REDIRECTS + 1):
                self._client._check_presigned_hop(url)
                stream = self._client._transport.stream(Request("GET", url, self._headers))
                response = await stream.__aenter__()
                location = response.headers.get("Location") if response.status in _REDIRECTS else None
                if location is None:
                    self._stream = stream
                    return response
                await stream.__aexit__(None, None, None)
                url = urljoin(url, location.strip())
        except TransportError as exc:
            raise _presigned_failure(exc) from None
        raise ProtocolError(f"A download URL redirected more than {MAX_REDIRECTS} times")

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                await stream.__aexit__(exc_type, exc, tb)
            except TransportError as failure:
                raise _presigned_failure(failure) from None
        if isinstance(exc, TransportError):
            raise _presigned_failure(exc) from None


def _presigned_failure(exc: TransportError) -> PlatformError:
    if exc.kind == "invalid":
        return ProtocolError("The platform returned an invalid download URL (<redacted URL>)")
    return PlatformUnreachable(f"Could not fetch <redacted URL>: {exc.detail.split(':')[0]}")
