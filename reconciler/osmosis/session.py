"""One call to the platform API: headers, retries, version warnings, and typed errors.

Retry rules (the backoff itself is reconciler.osmosis.retry):

    outcome (TransportError.kind)             ordinary call        submit
    no connection made (not_sent)             retry                retry
    the request cannot be sent (invalid)      typed error          typed error
    a timeout or a broken connection          retry                SubmitOutcomeUnknown
    429 Too Many Requests                     retry (Retry-After)  retry (Retry-After)
    5xx                                       retry (503: R-A)     SubmitOutcomeUnknown
    2xx whose body is not valid JSON          retry                SubmitOutcomeUnknown
    any other answer                          typed error          typed error

"Ordinary" covers reads and the calls whose repetition is harmless: stop (a second stop of
a run the first one stopped answers 409, which surfaces as Conflict for the caller to
judge), download-URL requests, and secret upserts and deletes (a repeated delete may
answer 404). When retries run out, the last error is raised.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from .. import json_text
from .errors import (
    PlatformError,
    PlatformUnreachable,
    ProtocolError,
    SubmitOutcomeUnknown,
    error_from_response,
    redact,
)
from .retry import RetryPolicy, parse_retry_after
from .transport import Request, Response, Transport, TransportError

logger = logging.getLogger("reconciler.osmosis")

_VERSION_WARNINGS = {
    "upgrade_available": "A newer Osmosis client version is available; consider upgrading reconciler.",
    "deprecated": "The Osmosis platform has deprecated this client version; upgrade reconciler soon.",
}


@dataclass(frozen=True)
class _Failure:
    error: PlatformError
    retryable: bool
    retry_after: float | None = None


class PlatformSession:
    """The authenticated conversation with one platform, for one workspace scope."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None,
        scope: tuple[str, str],
        transport: Transport,
        retry: RetryPolicy,
        timeout: float,
        user_agent: str,
        on_warning: Callable[[str], None],
    ) -> None:
        self.base_url = base_url
        self.__token = token
        self._headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": user_agent,
            scope[0]: scope[1],
        }
        self._http = transport
        self._timeout = timeout
        self._retry = retry
        self._on_warning = on_warning
        self._version_warned: set[str] = set()  # each status once: a deprecation after a notice still shows

    def __repr__(self) -> str:
        return f"PlatformSession(base_url={self.base_url!r})"

    async def aclose(self) -> None:
        await self._http.aclose()

    async def call(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: object = None,
        submit: bool = False,
        read_body: bool = True,
        secrets: Collection[str] = (),
    ) -> dict[str, Any]:
        """The JSON object the platform answered (`{}` for an empty body, or when not `read_body`)."""
        known = [s for s in (self.__token, *secrets) if s]
        content = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        headers = dict(self._headers)
        if self.__token:
            headers["Authorization"] = f"Bearer {self.__token}"
        policy = self._retry
        started = policy.clock()
        attempt = 0
        while True:
            attempt += 1
            outcome = await self._attempt(method, path, params, content, headers, submit, read_body, known)
            if not isinstance(outcome, _Failure):
                return outcome
            delay = None
            if outcome.retryable:
                delay = policy.next_delay(attempt, policy.clock() - started, outcome.retry_after)
            if delay is None:
                raise outcome.error
            logger.info(
                "%s %s failed (%s); retrying in %.2f s (attempt %d of %d)",
                method,
                path,
                outcome.error.message.splitlines()[0],
                delay,
                attempt + 1,
                policy.max_attempts,
            )
            await policy.sleep(delay)

    async def _attempt(
        self,
        method: str,
        path: str,
        params: Mapping[str, str] | None,
        content: bytes | None,
        headers: dict[str, str],
        submit: bool,
        read_body: bool,
        known: Collection[str],
    ) -> dict[str, Any] | _Failure:
        url = self.base_url + path + (f"?{urlencode(params, quote_via=quote)}" if params else "")
        try:
            response = await self._http.send(Request(method, url, headers, content, self._timeout))
        except TransportError as exc:
            return self._transport_failure(exc, method, path, submit, known)
        self._note_version(response)
        status = response.status
        if 200 <= status < 300:
            if not read_body or status == 204 or not response.body.strip():
                return {}
            return _decode_success(response, method, path, submit)
        body = _lenient_body(response)
        retry_after = parse_retry_after(response.headers.get("Retry-After")) if status in (429, 503) else None
        error = error_from_response(
            status,
            body,
            response.body.decode("utf-8", "replace"),
            method=method,
            path=path,
            retry_after=retry_after,
            secrets=known,
        )
        if submit and status >= 500:
            unknown = SubmitOutcomeUnknown(
                f"The platform answered HTTP {status} to the submit, so it may or may not have created the run: {error.message}",
                status=status,
                code=error.code,
                method=method,
                path=path,
            )
            return _Failure(unknown, retryable=False)
        return _Failure(error, retryable=status == 429 or status >= 500, retry_after=retry_after)

    def _transport_failure(
        self, exc: TransportError, method: str, path: str, submit: bool, known: Collection[str]
    ) -> _Failure:
        if exc.kind == "timeout":
            text = f"The Osmosis platform at {self.base_url} did not answer {method} {path} in time ({exc.detail})"
        else:
            text = f"Could not reach the Osmosis platform at {self.base_url} ({method} {path}): {exc.detail}"
        text = redact(text, known)
        if submit and exc.kind in ("timeout", "broken"):
            message = f"The submit may or may not have reached the platform: {text}"
            return _Failure(SubmitOutcomeUnknown(message, method=method, path=path), retryable=False)
        error = PlatformUnreachable(text, method=method, path=path)
        return _Failure(error, retryable=exc.kind != "invalid")

    def _note_version(self, response: Response) -> None:
        status = (response.headers.get("X-Osmosis-Version-Status") or "").strip().lower()
        if status not in _VERSION_WARNINGS or status in self._version_warned:
            return
        self._version_warned.add(status)
        message = (response.headers.get("X-Osmosis-Version-Message") or "").strip()
        self._on_warning(message or _VERSION_WARNINGS[status])


def _decode_success(response: Response, method: str, path: str, submit: bool) -> dict[str, Any] | _Failure:
    try:
        data = json_text.loads_answer(response.body)
    except (ValueError, UnicodeDecodeError):
        text = f"Invalid JSON response from the platform to {method} {path} (HTTP {response.status})"
        if submit:
            text = f"The platform accepted the submit but its answer was unreadable: {text}"
            return _Failure(SubmitOutcomeUnknown(text, status=response.status, method=method, path=path), False)
        # A truncated or garbled body is usually transient: a read is safe to repeat.
        return _Failure(ProtocolError(text, status=response.status, method=method, path=path), retryable=True)
    if not isinstance(data, dict):
        text = f"The platform answered {method} {path} with JSON that is not an object"
        cls = SubmitOutcomeUnknown if submit else ProtocolError
        return _Failure(cls(text, status=response.status, method=method, path=path), retryable=False)
    return data


def _lenient_body(response: Response) -> dict[str, Any] | None:
    try:
        data = json_text.loads_answer(response.body)
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None
