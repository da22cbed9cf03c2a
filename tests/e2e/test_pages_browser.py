"""The web pages in a real browser: headless Chromium against `reconciler platform serve`.

The test starts Debian's `/usr/bin/chromium` itself, with background networking, component
updates, sync and QUIC off, and drives it over the DevTools protocol (a websocket, spoken here
with a few lines over a plain socket: no browser-automation dependency). For every page it
records console messages, exceptions, log entries (CSP violations, failed loads) and every
request the page makes; none may be an error and none may leave 127.0.0.1. It then takes
screenshots at 1280 px and 390 px wide into SCREENSHOTS and checks the layout: no page-wide
sideways scroll at 390 px (tables scroll in their own box) and the run sidebar stacked above
the tabs there, beside them at 1280 px.

Every wait is bounded; the whole module takes well under 30 s.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from reconciler.localplatform.catalog import BY_KEY
from tests.e2e.served_platform import ServedPlatform, serve_platform

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = Path("/tmp/reconciler-pages-screenshots")
SPEED = 3000.0
WS = "browser"
API = "/api/cli"
TB = BY_KEY["terminal-bench-2-1"]
FINISH = {"LOCALPLATFORM_FORCE_STATUS": "finished"}
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--no-default-browser-check",
    "--mute-audio",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
)


# --- a minimal websocket client (RFC 6455, client side, text frames) ------------------------


class WebSocket:
    _GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path or '/'} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        self.buffer = b""
        deadline = time.monotonic() + timeout
        while b"\r\n\r\n" not in self.buffer:
            self._fill(deadline)
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        assert lines[0].split(" ")[1] == "101", f"websocket upgrade refused: {lines[0]}"
        accept = base64.b64encode(hashlib.sha1((key + self._GUID).encode()).digest()).decode()
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        assert headers.get("sec-websocket-accept") == accept

    def _fill(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no message from the browser in time")
        self.sock.settimeout(remaining)
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("the browser closed the DevTools connection")
        self.buffer += chunk

    def _take(self, n: int, deadline: float) -> bytes:
        while len(self.buffer) < n:
            self._fill(deadline)
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def _frame(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            header = bytes([0x80 | opcode, 0x80 | n])
        elif n < 1 << 16:
            header = bytes([0x80 | opcode, 0x80 | 126]) + n.to_bytes(2, "big")
        else:
            header = bytes([0x80 | opcode, 0x80 | 127]) + n.to_bytes(8, "big")
        mask = os.urandom(4)
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")).to_bytes(n, "big")
        self.sock.sendall(header + mask + masked)

    def send(self, text: str) -> None:
        self._frame(0x1, text.encode())

    def receive(self, deadline: float) -> str:
        message = b""
        while True:
            first, second = self._take(2, deadline)
            length = second & 0x7F
            if length == 126:
                length = int.from_bytes(self._take(2, deadline), "big")
            elif length == 127:
                length = int.from_bytes(self._take(8, deadline), "big")
            mask = self._take(4, deadline) if second & 0x80 else b""
            data = self._take(length, deadline)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the browser closed the DevTools connection")
            if opcode == 0x9:
                self._frame(0xA, data)
                continue
            if opcode == 0xA:
                continue
            message += data
            if first & 0x80:
                return message.decode()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._frame(0x8, b"")
        self.sock.close()


# --- the DevTools protocol ------------------------------------------------------------------


class DevTools:
    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        self.events: list[dict[str, Any]] = []
        self._id = 0

    def call(self, method: str, timeout: float = 10.0, **params: Any) -> dict[str, Any]:
        self._id += 1
        wanted = self._id
        self.ws.send(json.dumps({"id": wanted, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.receive(deadline))
            if message.get("id") == wanted:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                result: dict[str, Any] = message.get("result", {})
                return result
            if "method" in message:
                self.events.append(message)

    def wait_for(self, method: str, since: int, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            for event in self.events[since:]:
                if event["method"] == method:
                    return event
            message = json.loads(self.ws.receive(deadline))
            if "method" in message:
                self.events.append(message)

    def settle(self, seconds: float) -> None:
        """Collect the events that arrive in the next `seconds` (late console messages, the icon)."""
        deadline = time.monotonic() + seconds
        with contextlib.suppress(TimeoutError, socket.timeout):
            while True:
                message = json.loads(self.ws.receive(deadline))
                if "method" in message:
                    self.events.append(message)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")


@dataclass
class Visit:
    url: str
    requests: list[str]
    problems: list[str]


@dataclass
class Browser:
    process: subprocess.Popen[bytes]
    tools: DevTools

    def visit(self, url: str, timeout: float = 10.0) -> Visit:
        mark = len(self.tools.events)
        navigated = self.tools.call("Page.navigate", url=url)
        assert not navigated.get("errorText"), (url, navigated)
        self.tools.wait_for("Page.loadEventFired", mark, timeout)
        self.tools.settle(0.15)
        requests: list[str] = []
        problems: list[str] = []
        for event in self.tools.events[mark:]:
            method, params = event["method"], event["params"]
            if method == "Network.requestWillBeSent":
                requests.append(params["request"]["url"])
            elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
                problems.append(f"HTTP {params['response']['status']} for {params['response']['url']}")
            elif method == "Network.loadingFailed":
                problems.append(f"load failed: {params.get('errorText')} {params.get('blockedReason') or ''}")
            elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
                problems.append(f"console.{params['type']}: {params['args']}")
            elif method == "Runtime.exceptionThrown":
                problems.append(f"exception: {params['exceptionDetails']}")
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                problems.append(f"log: {params['entry']['text']} ({params['entry'].get('url')})")
        return Visit(url, requests, problems)

    def screenshot(self, url: str, width: int, path: Path) -> dict[str, Any]:
        """A full-page PNG of `url` at `width` CSS px (device scale 1), and the layout facts checked."""
        self.tools.call(
            "Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=width < 600
        )
        self.visit(url)
        metrics = self.tools.call("Page.getLayoutMetrics")
        height = min(int(metrics["cssContentSize"]["height"]), 6000)
        shot = self.tools.call(
            "Page.captureScreenshot",
            timeout=20.0,
            format="png",
            captureBeyondViewport=True,
            clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        )
        data = base64.b64decode(shot["data"])
        path.write_bytes(data)
        facts: dict[str, Any] = self.tools.evaluate(
            """(() => {
              const box = (s) => { const e = document.querySelector(s); if (!e) return null;
                const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
              return {scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
                      sidebar: box('.sidebar'), main: box('.run-main'),
                      tables: [...document.querySelectorAll('.table-scroll')].map(e => [e.scrollWidth, e.clientWidth])};
            })()"""
        )
        facts["png_width"] = int.from_bytes(data[16:20], "big")
        return facts


def _wait_for_port(user_data: Path, process: subprocess.Popen[bytes], timeout: float) -> tuple[int, str]:
    marker = user_data / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker.is_file():
            lines = marker.read_text().split()
            if len(lines) >= 2:
                return int(lines[0]), lines[1]
        if process.poll() is not None:
            break
        time.sleep(0.05)
    raise AssertionError(f"chromium did not open its DevTools port (exit code {process.poll()})")


@contextlib.contextmanager
def chromium(user_data: Path, log: Path) -> Iterator[Browser]:
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [str(CHROMIUM), *FLAGS, f"--user-data-dir={user_data}", "about:blank"],
            stdout=sink,
            stderr=sink,
            start_new_session=True,  # its own process group, ended by its id below
        )
    ws: WebSocket | None = None
    try:
        port, _ = _wait_for_port(user_data, process, timeout=15)
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=5).json()
        page = next(t for t in targets if t["type"] == "page")
        ws = WebSocket(page["webSocketDebuggerUrl"], timeout=10)
        tools = DevTools(ws)
        for domain in ("Page", "Runtime", "Log", "Network"):
            tools.call(f"{domain}.enable")
        yield Browser(process, tools)
    finally:
        if ws is not None:
            ws.close()
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # renderer and helper processes of that group


# --- the platform, seeded -------------------------------------------------------------------


def agent(model: str = "openai/gpt-5.2", key: str = "OPENAI_API_KEY", **extra: Any) -> dict[str, Any]:
    return {"model": {"type": "provider", "model": model, "api_key_secret": key}, "env": {}, **extra}


def body(**parts: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"experiment_config": {"benchmark": TB.key}, "agents": [agent()], "env_config": FINISH}
    out.update(parts)
    return out


def _until(api: httpx.Client, run_id: str, done: Any, timeout: float = 15.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        detail: dict[str, Any] = api.get(f"{API}/benchmark-runs/{run_id}").json()
        if done(detail["benchmark_run"]):
            return detail
        if time.monotonic() > deadline:
            raise AssertionError(f"run {run_id} stuck at {detail['benchmark_run']}")
        time.sleep(0.05)


@dataclass
class Seeded:
    platform: ServedPlatform
    runs: dict[str, str]
    benchmark_ids: list[str]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Seeded]:
    with serve_platform(tmp_path_factory.mktemp("platform"), speed=SPEED) as platform, platform.api(WS) as api:

        def submit(payload: dict[str, Any]) -> str:
            response = api.post(f"{API}/benchmark-runs", json=payload)
            assert response.status_code == 201, response.text
            run_id: str = response.json()["id"]
            return run_id

        finished = submit(
            body(
                agents=[agent(harness="codex"), agent("anthropic/claude-sonnet-4.5", "ANTHROPIC_API_KEY")],
                execution_config={"attempts_per_task": 2, "max_concurrent_attempts": 128},
            )
        )
        failed = submit(
            body(tasks_config={"categories": ["security"]}, env_config={"LOCALPLATFORM_FORCE_STATUS": "failed"})
        )
        stopped = submit(
            body(tasks_config={"categories": ["games", "debugging"]}, execution_config={"max_concurrent_attempts": 1})
        )
        running = submit(
            body(
                agents=[agent(), agent("openai/gpt-5-mini")],
                execution_config={"attempts_per_task": 3, "max_concurrent_attempts": 1},
            )
        )
        _until(api, stopped, lambda r: r["ingested_results"] >= 1)
        assert api.post(f"{API}/benchmark-runs/{stopped}/stop", json={}).status_code == 200
        _until(api, finished, lambda r: r["status"] == "finished")
        _until(api, failed, lambda r: r["status"] == "failed")
        _until(api, running, lambda r: r["status"] == "running" and r["ingested_results"] >= 2)
        runs = {"finished": finished, "failed": failed, "stopped": stopped, "running": running}
        benchmark_ids = [b["id"] for b in api.get(f"{API}/benchmarks").json()["benchmarks"]]
        yield Seeded(platform, runs, benchmark_ids)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, seeded: Seeded) -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian's chromium package); the browser checks need it")
    root = tmp_path_factory.mktemp("chromium")
    with chromium(root / "profile", root / "chromium.log") as found:
        # sign in the way a person would: the token once in the URL, then the cookie
        visit = found.visit(f"{seeded.platform.url}/benchmarks?token={seeded.platform.token}&workspace={WS}")
        assert not visit.problems, visit.problems
        assert found.tools.evaluate("location.search") == f"?workspace={WS}"
        yield found


# --- the checks -----------------------------------------------------------------------------


def _pages(seeded: Seeded) -> list[str]:
    base = seeded.platform.url
    paths = ["/benchmarks", "/benchmarks/runs", "/secrets", f"/benchmarks/{TB.key}?rank_by=cost_per_task"]
    paths += [f"/benchmarks/{bid}" for bid in seeded.benchmark_ids]
    for run_id in seeded.runs.values():
        paths += [f"/benchmarks/runs/{run_id}{tab}" for tab in ("", "?tab=results", "?tab=config", "?tab=logs")]
    paths.append(f"/benchmarks/runs/{seeded.runs['finished']}?tab=results&agent=1&outcome=failed&q=git")
    return [base + p for p in paths]


def test_every_page_loads_without_console_errors_or_requests_leaving_127_0_0_1(
    browser: Browser, seeded: Seeded
) -> None:
    host = urlsplit(seeded.platform.url).netloc
    assert host.startswith("127.0.0.1:")
    for url in _pages(seeded):
        visit = browser.visit(url)
        assert not visit.problems, (url, visit.problems)
        assert visit.requests, url
        foreign = [r for r in visit.requests if urlsplit(r).netloc != host and not r.startswith("data:")]
        assert not foreign, (url, foreign)
        heading = browser.tools.evaluate("document.querySelector('h1') && document.querySelector('h1').textContent")
        assert heading, url
        assert browser.tools.evaluate("document.querySelectorAll('script').length") == 0
        assert browser.tools.evaluate("getComputedStyle(document.body).fontFamily").startswith("system-ui")


@pytest.mark.parametrize("width", [1280, 390])
def test_screenshots_of_the_benchmark_and_run_pages(browser: Browser, seeded: Seeded, width: int) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    base = seeded.platform.url
    pages = {
        "benchmarks": f"{base}/benchmarks",
        "benchmark": f"{base}/benchmarks/{TB.key}",
        "run": f"{base}/benchmarks/runs/{seeded.runs['finished']}",
        "run-running-results": f"{base}/benchmarks/runs/{seeded.runs['running']}?tab=results",
    }
    for name, url in pages.items():
        facts = browser.screenshot(url, width, SCREENSHOTS / f"{name}-{width}.png")
        assert facts["png_width"] == width
        assert facts["scrollWidth"] <= facts["innerWidth"], (name, width, facts)  # no page-wide sideways scroll
        if name == "run":
            side, main = facts["sidebar"], facts["main"]
            if width >= 1000:
                assert side["right"] <= main["left"], facts  # beside the tabs
            else:
                assert side["bottom"] <= main["top"], facts  # stacked above them
    if width < 600:  # wide tables scroll inside their own box
        assert any(scroll > client for scroll, client in facts["tables"])
    browser.tools.call("Emulation.clearDeviceMetricsOverride")
