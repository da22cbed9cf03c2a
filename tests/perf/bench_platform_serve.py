"""Throughput of `reconciler platform serve`: run listing and run detail over ~1,000 runs.

Not a test. Run it with:

    .venv/bin/python tests/perf/bench_platform_serve.py [--runs 1000] [--requests 1000] [--clients 4]

It starts the server on 127.0.0.1 with a fresh database in a temporary directory, submits the
runs (a realistic mix: mostly small task selections, some full Terminal-Bench runs, some HLE
parity runs with several attempts), lets simulated time pass so most have finished, then
drives a bounded number of requests from a few concurrent httpx clients and prints requests per
second for each kind.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

TOKEN = "bench-token"
API = "/api/cli"
_SERVING = re.compile(r"serving on (\S+) token=(\S+)")


def start_server(workdir: Path, speed: float) -> tuple[subprocess.Popen[str], str]:
    cmd = [
        sys.executable, "-m", "reconciler.cli", "platform", "serve", "--port", "0",
        "--db", str(workdir / "platform.sqlite3"), "--token", TOKEN, "--seed", "1", "--speed", str(speed),
    ]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    match = _SERVING.match(proc.stdout.readline())
    if match is None:
        proc.kill()
        raise SystemExit("platform serve did not start")
    return proc, match.group(1)


def payload(i: int) -> dict[str, Any]:
    rng = random.Random(i)
    agents = [
        {"model": {"type": "provider", "model": m, "api_key_secret": k}, "env": {"RUN": str(i)}}
        for m, k in rng.sample(
            [
                ("openai/gpt-5.2", "OPENAI_API_KEY"),
                ("openai/gpt-5-mini", "OPENAI_API_KEY"),
                ("anthropic/claude-sonnet-4.5", "ANTHROPIC_API_KEY"),
                ("anthropic/claude-opus-4.5", "ANTHROPIC_API_KEY"),
            ],
            k=rng.randint(1, 3),
        )
    ]
    if i % 20 == 0:  # a full Terminal-Bench run
        return {"experiment_config": {"benchmark": "terminal-bench-2-1"}, "agents": agents}
    if i % 20 == 1:  # an HLE parity run with several attempts
        return {
            "experiment_config": {"benchmark": "hle"},
            "agents": agents,
            "tasks_config": {"task_set": "parity"},
            "execution_config": {"judge_api_key_secret": "HLE_JUDGE_API_KEY", "attempts_per_task": 3},
        }
    return {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "agents": agents,
        "tasks_config": {"categories": [rng.choice(["security", "games", "networking", "debugging"])]},
    }


def hammer(
    name: str, clients: list[httpx.Client], total: int, request: Callable[[httpx.Client, int], httpx.Response]
) -> None:
    """`total` requests split over the clients (one thread each); prints requests per second."""
    errors: list[int] = []
    latencies: list[float] = []
    lock = threading.Lock()

    def work(client: httpx.Client, indices: range) -> None:
        for i in indices:
            started = time.perf_counter()
            response = request(client, i)
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                if response.status_code != 200:
                    errors.append(response.status_code)

    share = total // len(clients)
    threads = [
        threading.Thread(target=work, args=(c, range(n * share, (n + 1) * share))) for n, c in enumerate(clients)
    ]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p95 = latencies[int(len(latencies) * 0.95)] * 1000
    print(
        f"{name:<14} {share * len(clients):>6} requests  {share * len(clients) / elapsed:8.1f} req/s"
        f"  p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  errors {len(errors)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=1000, help="per kind of request")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--speed", type=float, default=20000.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp), args.speed)
        headers = {"Authorization": f"Bearer {TOKEN}", "X-Osmosis-Workspace": "bench"}
        clients = [httpx.Client(base_url=url, headers=headers, timeout=60) for _ in range(args.clients)]
        try:
            ids: list[str] = []
            lock = threading.Lock()

            def submit(client: httpx.Client, i: int) -> httpx.Response:
                response = client.post(f"{API}/benchmark-runs", json=payload(i))
                if response.status_code == 201:
                    with lock:
                        ids.append(response.json()["id"])
                    return httpx.Response(200)
                return response

            hammer("submit", clients, args.runs, submit)
            time.sleep(1.0)  # let simulated time pass: at the default speed most runs have finished
            statuses: dict[str, int] = {}
            offset: int | None = 0
            while offset is not None:
                page = clients[0].get(f"{API}/benchmark-runs", params={"limit": 50, "offset": offset}).json()
                for run in page["benchmark_runs"]:
                    statuses[run["status"]] = statuses.get(run["status"], 0) + 1
                offset = page["next_offset"]
            print(f"runs stored: {sum(statuses.values())} {dict(sorted(statuses.items()))}")
            pages = max(1, len(ids) // 50)
            rng = random.Random(0)
            hammer(
                "list runs",
                clients,
                args.requests,
                lambda c, i: c.get(f"{API}/benchmark-runs", params={"limit": 50, "offset": 50 * (i % pages)}),
            )
            hammer("run detail", clients, args.requests, lambda c, i: c.get(f"{API}/benchmark-runs/{rng.choice(ids)}"))
            hammer("benchmarks", clients, max(20, args.requests // 20), lambda c, i: c.get(f"{API}/benchmarks"))
        finally:
            for client in clients:
                client.close()
            proc.terminate()
            proc.wait(timeout=10)
            if proc.stdout is not None:
                proc.stdout.close()


if __name__ == "__main__":
    main()
