"""Every way a conversation with the Osmosis platform can fail, as one typed tree.

    ReconcilerError (reconciler.errors)
    └── PlatformError                 status, code, message, field, issues, method, path
        ├── ValidationRejected        400: the platform refused what we sent
        ├── Unauthorized              401: OSMOSIS_TOKEN is missing, invalid, expired or revoked
        ├── Forbidden                 403: this account or workspace may not do that
        │   └── BenchmarksNotEnabled  403 BENCHMARKS_NOT_ENABLED
        ├── NotFound                  404
        │   └── SecretsNotFound       404 "Secret(s) not found: A, B" (.names)
        ├── Conflict                  409: e.g. stopping a run that has already ended
        │   └── BenchmarkNotReady     409 BENCHMARK_NOT_READY: its task list is still syncing
        ├── UpgradeRequired           426: the platform no longer serves this client version
        ├── RateLimited               429 (.retry_after: seconds the platform asked us to wait)
        ├── ServerError               5xx
        ├── PlatformUnreachable       no answer at all: DNS, refused connection, timeout (status None)
        ├── ProtocolError             an answer we cannot read: not JSON, not an object, a missing key
        └── SubmitOutcomeUnknown      a submit that may or may not have created a run: look it up
                                      (by its ownership marker) before submitting again

Messages are the platform's own `message` (else `error`), followed by one line per issue
(`  - key: message`). Secrets the client knows (the token, submitted secret values) are
replaced by `[REDACTED]` before any error is built, so no message, hint or repr holds them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, NamedTuple

from ..errors import ReconcilerError

REDACTED = "[REDACTED]"
TOKEN_HINT = "set OSMOSIS_TOKEN to a valid Osmosis token: export OSMOSIS_TOKEN=..."
_SECRETS_NOT_FOUND = re.compile(r"Secret\(s\) not found:\s*([^\n]*)")
_SCOPE_HINT = (
    "check the workspace scope: set `workspace` in reconciler.toml or pass --workspace, "
    "or run inside a git repository whose GitHub origin is connected to an Osmosis workspace"
)
_CODE_HINTS = {
    "BENCHMARKS_NOT_ENABLED": "benchmarks must be enabled for this Osmosis account before runs can be listed or submitted",
    "BENCHMARK_NOT_READY": "wait until the benchmark has finished syncing its task list, then try again",
    "GIT_SCOPE_REQUIRED": _SCOPE_HINT,
    "GIT_SCOPE_HEADER_REQUIRED": _SCOPE_HINT,
    "GIT_SCOPE_INVALID": _SCOPE_HINT,
    "GIT_SCOPE_HEADER_INVALID": _SCOPE_HINT,
    "GIT_SCOPE_HEADER_ACCESS_DENIED": _SCOPE_HINT,
    "GIT_REPOSITORY_NOT_CONNECTED": _SCOPE_HINT,
    "GIT_REPOSITORY_ACCESS_DENIED": _SCOPE_HINT,
    "WORKSPACE_SCOPE_HEADER_CONFLICT": _SCOPE_HINT,
    "WORKSPACE_SCOPE_HEADER_ACCESS_DENIED": _SCOPE_HINT,
}


class Issue(NamedTuple):
    """One entry of a platform error's `issues` list."""

    key: str | None
    message: str


class PlatformError(ReconcilerError):
    """The platform conversation failed; `status` is None when no HTTP answer arrived."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        field: str | None = None,
        issues: tuple[Issue, ...] = (),
        method: str | None = None,
        path: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.code = code
        self.field = field
        self.issues = issues
        self.method = method
        self.path = path

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
            f"method={self.method!r}, path={self.path!r}, message={self.message!r})"
        )


class ValidationRejected(PlatformError):
    pass


class Unauthorized(PlatformError):
    pass


class Forbidden(PlatformError):
    pass


class BenchmarksNotEnabled(Forbidden):
    pass


class NotFound(PlatformError):
    pass


class SecretsNotFound(NotFound):
    """A submit referenced secret records that neither the caller nor the workspace holds."""

    def __init__(self, message: str, *, names: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.names = names


class Conflict(PlatformError):
    pass


class BenchmarkNotReady(Conflict):
    pass


class UpgradeRequired(PlatformError):
    pass


class RateLimited(PlatformError):
    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServerError(PlatformError):
    pass


class PlatformUnreachable(PlatformError):
    pass


class ProtocolError(PlatformError):
    pass


class SubmitOutcomeUnknown(PlatformError):
    """The platform may have accepted the submit: never resubmit without looking the run up first."""

    hint = "look the run up (by its ownership marker) before submitting it again"


def redact(text: str, secrets: Collection[str]) -> str:
    """`text` with every known secret value replaced by `[REDACTED]` (longest first)."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def platform_message(status: int, body: Mapping[str, Any] | None, text: str) -> str:
    """The platform's own words for a failure: `message`, else `error`, plus its issues."""
    message = None
    if body is not None:
        for key in ("message", "error"):
            value = body.get(key)
            if isinstance(value, Mapping):
                value = value.get("message")
            if isinstance(value, str) and value.strip():
                message = value.strip()
                break
    if message is None:
        snippet = text.strip()[:200]
        message = f"API error: HTTP {status}. Response: {snippet}" if snippet else f"API error: HTTP {status}"
    lines = [message]
    for issue in parse_issues(body):
        lines.append(f"  - {issue.key}: {issue.message}" if issue.key else f"  - {issue.message}")
    return "\n".join(lines)


def parse_issues(body: Mapping[str, Any] | None) -> tuple[Issue, ...]:
    raw = body.get("issues") if body is not None else None
    if not isinstance(raw, list):
        return ()
    issues = []
    for item in raw:
        if isinstance(item, str):
            issues.append(Issue(None, item))
        elif isinstance(item, Mapping):
            key = item.get("key")
            message = str(item.get("message") or "")
            correction = item.get("key_correction")
            if isinstance(correction, str) and correction:
                message += f" (did you mean '{correction}'?)"
            issues.append(Issue(str(key) if key is not None else None, message))
    return tuple(issues)


def missing_secret_names(body: Mapping[str, Any] | None, message: str) -> tuple[str, ...] | None:
    """Names from `Secret(s) not found: A, B` in the message or in `details.error`; None if absent."""
    candidates = [message]
    details = body.get("details") if body is not None else None
    if isinstance(details, Mapping) and isinstance(details.get("error"), str):
        candidates.append(details["error"])
    for text in candidates:
        match = _SECRETS_NOT_FOUND.search(text)
        if match:
            names = (part.strip().rstrip(".").strip() for part in match.group(1).split(","))
            return tuple(name for name in names if name)
    return None


def _platform_url(body: Mapping[str, Any] | None) -> str | None:
    if body is None:
        return None
    details = body.get("details")
    for source in (body, details if isinstance(details, Mapping) else {}):
        url = source.get("platform_url")
        if isinstance(url, str) and url:
            return url
    return None


def _unauthorized_message(code: str | None) -> str:
    if code == "TOKEN_EXPIRED":
        return "The Osmosis token (OSMOSIS_TOKEN) has expired."
    if code == "TOKEN_REVOKED":
        return "The Osmosis token (OSMOSIS_TOKEN) has been revoked."
    return "The Osmosis token (OSMOSIS_TOKEN) is missing, invalid or expired."


def error_from_response(
    status: int,
    body: Mapping[str, Any] | None,
    text: str,
    *,
    method: str,
    path: str,
    retry_after: float | None = None,
    secrets: Collection[str] = (),
) -> PlatformError:
    """The typed error for a non-2xx answer. `body` is the decoded JSON object, if it was one."""
    if secrets:
        body, text = _scrub(body, secrets), redact(text, secrets)
    code = body.get("code") if body is not None else None
    code = code if isinstance(code, str) and code else None
    field = body.get("field") if body is not None else None
    field = field if isinstance(field, str) else None
    message = platform_message(status, body, text)
    hint = _CODE_HINTS.get(code or "")
    cls: type[PlatformError] = PlatformError
    extra: dict[str, Any] = {}
    if status == 400:
        cls = ValidationRejected
    elif status == 401:
        cls, message, hint = Unauthorized, _unauthorized_message(code), TOKEN_HINT
    elif status == 403:
        cls = BenchmarksNotEnabled if code == "BENCHMARKS_NOT_ENABLED" else Forbidden
    elif status == 404:
        cls = NotFound
        names = missing_secret_names(body, message)
        if names is not None:
            cls, extra["names"] = SecretsNotFound, names
            hint = "; ".join(f"osmosis secret set {name}" for name in names) or "osmosis secret set NAME"
            hint = f"create the missing secret records: {hint}"
            url = _platform_url(body)
            if url:
                hint += f"\nOr add them in the UI: {url}"
    elif status == 409:
        cls = BenchmarkNotReady if code == "BENCHMARK_NOT_READY" else Conflict
    elif status == 426:
        cls = UpgradeRequired
        if body is None or body.get("status") not in ("unsupported", "deprecated", "upgrade_available", "current"):
            message = "This version of reconciler is no longer supported by the Osmosis platform."
        hint = "upgrade reconciler"
    elif status == 429:
        cls, extra["retry_after"] = RateLimited, retry_after
    elif status >= 500:
        cls = ServerError
    return cls(
        message,
        status=status,
        code=code,
        field=field,
        issues=parse_issues(body),
        method=method,
        path=path,
        hint=hint,
        **extra,
    )


def _scrub(value: Any, secrets: Collection[str]) -> Any:
    """A JSON value with every known secret redacted from every string in it."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {redact(str(k), secrets): _scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secrets) for v in value]
    return value
