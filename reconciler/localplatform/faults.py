"""Fault knobs for tests and benchmarks, applied as one ASGI middleware.

- `latency_ms`: every request waits this long first (asyncio.sleep).
- `output_latency_ms`: file downloads (`/outputs/...`) wait this long first, on top of
  `latency_ms`: a bucket far away while the API is near.
- `rate_limit_per_second`: a token bucket (capacity max(1, rate), refilled on the injected
  clock); an empty bucket answers 429 with `Retry-After: <whole seconds>`.
- `error_rate`: a seeded fraction of requests answers 503 JSON.
- `truncate_rate`: a seeded fraction of file downloads (`/outputs/...`) sends fewer bytes than
  the file has, with a matching Content-Length, so the client sees a short file.

Draws come from one `random.Random(seed)` in request order, so a run of requests is repeatable.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .signing import FILES_PREFIX


@dataclass(frozen=True)
class Faults:
    latency_ms: float = 0.0
    output_latency_ms: float = 0.0
    error_rate: float = 0.0
    rate_limit_per_second: float | None = None  # None or 0: unlimited
    truncate_rate: float = 0.0
    seed: int = 0

    @property
    def active(self) -> bool:
        return bool(
            self.latency_ms
            or self.output_latency_ms
            or self.error_rate
            or self.rate_limit_per_second
            or self.truncate_rate
        )


def _json(status: int, message: str, code: str, extra_headers: list[tuple[bytes, bytes]]) -> tuple[Message, Message]:
    body = json.dumps({"message": message, "code": code}, separators=(",", ":")).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra_headers]
    return {"type": "http.response.start", "status": status, "headers": headers}, {
        "type": "http.response.body",
        "body": body,
    }


class FaultsMiddleware:
    def __init__(self, app: ASGIApp, faults: Faults, clock: Callable[[], float]) -> None:
        self.app = app
        self.faults = faults
        self.clock = clock
        self.rng = random.Random(faults.seed)
        self.lock = threading.Lock()
        rate = faults.rate_limit_per_second or 0.0
        self.capacity = max(1.0, rate)
        self.tokens = self.capacity
        self.last = clock()

    def _take_token(self) -> float | None:
        """None when the request may proceed, else the seconds until a token is available."""
        rate = self.faults.rate_limit_per_second
        if not rate:
            return None
        with self.lock:
            now = self.clock()
            self.tokens = min(self.capacity, self.tokens + max(0.0, now - self.last) * rate)
            self.last = now
            if self.tokens >= 1.0:
                self.tokens -= 1.0
                return None
            return (1.0 - self.tokens) / rate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.faults.latency_ms:
            await asyncio.sleep(self.faults.latency_ms / 1000.0)
        if self.faults.output_latency_ms and str(scope.get("path", "")).startswith(FILES_PREFIX + "/"):
            await asyncio.sleep(self.faults.output_latency_ms / 1000.0)
        wait = self._take_token()
        if wait is not None:
            retry = str(max(1, math.ceil(wait))).encode()
            for message in _json(429, "Too many requests; retry later", "RATE_LIMITED", [(b"retry-after", retry)]):
                await send(message)
            return
        with self.lock:
            fail = self.rng.random() < self.faults.error_rate
            truncate = (
                str(scope.get("path", "")).startswith(FILES_PREFIX + "/")
                and self.rng.random() < self.faults.truncate_rate
            )
            keep = self.rng.random()
        if fail:
            for message in _json(503, "Simulated server fault; retry later", "SERVICE_UNAVAILABLE", []):
                await send(message)
            return
        if not truncate:
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Truncating(send, keep))


class _Truncating:
    """Buffers one response and sends only part of a successful body, with a matching length."""

    def __init__(self, send: Send, keep: float) -> None:
        self.send = send
        self.keep = keep
        self.start: Message | None = None
        self.body = bytearray()

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.start = message
            return
        if message["type"] != "http.response.body" or self.start is None:
            await self.send(message)
            return
        self.body += message.get("body", b"")
        if message.get("more_body", False):
            return
        body = bytes(self.body)
        if self.start["status"] in (200, 206) and len(body) > 1:
            body = body[: int(len(body) * (0.3 + 0.6 * self.keep))]
        headers = [(k, v) for k, v in self.start["headers"] if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.send({**self.start, "headers": headers})
        await self.send({"type": "http.response.body", "body": body})
