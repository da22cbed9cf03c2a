"""A bound on request bodies, enforced while they stream in.

A body is read whole into memory by the routes that parse it, so without a bound one request
can grow the server by its own size. A declared Content-Length over the limit is answered 413
before anything is read; a chunked or understated body is cut off with 413 as soon as the bytes
received pass the limit.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .api import ApiError, error_response

MAX_BODY_BYTES = 1024 * 1024  # a submit with eight agents and their env is a few KiB


def _too_large(limit: int) -> ApiError:
    return ApiError(413, f"Request body is larger than {limit} bytes", "PAYLOAD_TOO_LARGE")


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers", [])).get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                size = -1
            if size < 0:
                await error_response(400, "Content-Length is not a byte count", "VALIDATION")(scope, receive, send)
                return
            if size > self.limit:
                await _too_large(self.limit).response()(scope, receive, send)
                return
        received = 0

        async def bounded_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    # raised inside the route's read of the body: the app's ApiError handler answers it
                    raise _too_large(self.limit)
            return message

        await self.app(scope, bounded_receive, send)
