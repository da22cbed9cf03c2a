"""A synchronous httpx transport that calls the platform app in this process.

`httpx.ASGITransport` is async-only; this runs it on a private event loop in a daemon thread,
so a plain `httpx.Client(transport=InProcessTransport(app), base_url="http://local")` talks
to the embedded platform with no socket, from sync code or from inside another event loop.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import httpx


class InProcessTransport(httpx.BaseTransport):
    def __init__(self, app: Any) -> None:
        self._asgi = httpx.ASGITransport(app=app)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="localplatform-inprocess", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    async def _call(self, request: httpx.Request) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        response = await self._asgi.handle_async_request(request)
        body = await response.aread()
        await response.aclose()
        return response.status_code, response.headers.raw, body

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        request.read()
        future = asyncio.run_coroutine_threadsafe(self._call(request), self._running_loop())
        status, headers, body = future.result()
        return httpx.Response(status, headers=headers, content=body, request=request)

    def close(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            loop.close()
