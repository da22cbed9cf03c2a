"""How `reconciler plan` scales: 1,000 run specs against 100, 1,000 and 10,000 runs.

    .venv/bin/python -m tests.perf.bench_plan [--latency-ms 20] [--sizes 100,1000,10000] [--repeat 5]

For each size it seeds a fresh platform database in-process (1,000 owned runs at most, the
rest someone else's), serves it with `reconciler platform serve --latency-ms 20` on
127.0.0.1, and runs `reconciler plan --format json` in a child process, the way a user does
(the child only wraps the HTTP transport to count requests). Three plans, in order:
- cold: no state file, empty per-machine cache: every run's marker is read once;
- again: still no state file (a fresh checkout on the same machine): the per-machine cache
  knows every run the first plan read, so only the listing is paid;
- warm: the state file an apply would commit (written by the bench, not timed) plus the cache.
It prints whole-process wall time (interpreter start to exit), the part of it spent inside
`reconciler.cli.main` (start-up excluded: the interpreter, the CLI's and aiohttp's imports),
HTTP requests, the child's CPU seconds, the server's CPU seconds over the same plan, and the
child's peak RSS as GNU time reports it (`/usr/bin/time -f %M`, the kernel's count for the
whole process), and `ref ms`: a fixed computation timed in the benchmark just before the plan
(`reference_ms`), for how fast the machine was in that minute. The
claim under test: cost grows with pages of runs, not with specs x runs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SPECS = 1000
OWNER = "perf/bench"
TIME = "/usr/bin/time"  # GNU time
PEAK = "__peak_kib__"

CHILD = r"""
import atexit, json, resource, sys, time
from reconciler.osmosis.aiohttp_transport import AiohttpTransport
count = 0
original = AiohttpTransport.send
async def counting(self, request):
    global count
    count += 1
    return await original(self, request)
AiohttpTransport.send = counting
from reconciler.cli import main
started = time.perf_counter()
def report():  # the plan goes to stdout as a user's does; this line goes to stderr, last
    inside = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"requests": count, "inside": inside, "cpu": usage.ru_utime + usage.ru_stime}), file=sys.stderr)
atexit.register(report)
sys.argv = ["reconciler", "plan", "--format", "json"]  # as the console script runs it
main()
"""

SAVE_STATE = r"""
import asyncio, sys
from pathlib import Path
from reconciler.engine.session import open_session
from reconciler.settings import load_project
async def go():
    async with open_session(load_project(Path(sys.argv[1]))) as session:
        await session.observe()
        session.save_state()
asyncio.run(go())
"""


def task_names() -> list[str]:
    from reconciler.localplatform.catalog import CATALOG

    for bench in CATALOG:
        if bench.key == "terminal-bench-2-1":
            return [t.name for t in bench.tasks]
    raise SystemExit("no terminal-bench-2-1 in the catalog")


def spec_text(i: int, tasks: list[str]) -> str:
    return (
        '[experiment]\nbenchmark = "terminal-bench-2-1"\n'
        f'[tasks]\ntask_names = ["{tasks[i % len(tasks)]}"]\n'
        '[[agents]]\nharness = "codex"\n'
        f'[agents.model]\ntype = "provider"\nmodel = "openai/model-{i // len(tasks)}"\napi_key_secret = "OPENAI_API_KEY"\n'
        f'[reconcile]\nid = "s{i:04d}"\n'
    )


def seed(db: Path, repo: Path, runs: int) -> None:
    """Submit `runs` runs in-process: the first min(runs, SPECS) carry this repo's markers."""
    import httpx

    from reconciler.core.identity import Marker, fingerprint, marked_payload
    from reconciler.localplatform.app import create_app
    from reconciler.localplatform.inprocess import InProcessTransport
    from reconciler.settings import load_project
    from reconciler.specs.loader import discover, load_specs

    project = load_project(repo)
    specs = load_specs(discover([project.specs_path]), project.root, "specs").run_specs
    app = create_app(db, speed=1.0)
    headers = {"X-Osmosis-Workspace": "perf"}
    with httpx.Client(transport=InProcessTransport(app), base_url="http://local", headers=headers) as client:
        for i in range(runs):
            spec = specs[i % len(specs)]
            if i < min(runs, SPECS):
                body = marked_payload(
                    spec.config, Marker(owner=OWNER, spec_id=spec.id, fingerprint=fingerprint(spec.config))
                )
            else:
                body = spec.config.to_payload()  # someone else's run: no marker
            answer = client.post("/api/cli/benchmark-runs", json=body)
            answer.raise_for_status()


def serve(db: Path, latency_ms: float, *, token: str = "perf", speed: float = 1) -> tuple[subprocess.Popen[str], str]:
    """`reconciler platform serve` on a free port of 127.0.0.1, over `db`; returns the process and its URL."""
    cmd = [sys.executable, "-m", "reconciler.cli", "platform", "serve", "--port", "0", "--db", str(db),
           "--token", token, "--speed", f"{speed:g}", "--latency-ms", str(latency_ms)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"serving on (\S+)", line)
    if not match:
        proc.kill()
        raise SystemExit(f"platform serve did not start: {line!r}")
    return proc, match.group(1)


def env_for(repo: Path, url: str) -> dict[str, str]:
    # a user's interpreter keeps compiled bytecode; without it every plan would pay for
    # compiling the package again (the first, cold plan writes it)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {
        **env,
        "OSMOSIS_PLATFORM_URL": url,
        "OSMOSIS_TOKEN": "perf",
        "RECONCILER_CACHE_DIR": str(repo.parent / "machine-cache"),
    }


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reference_ms() -> float:
    """A fixed pure-Python computation, best of three, timed just before a plan: this machine's
    speed changes from minute to minute (cores shared with other machines), and a plan that
    took longer while this did too says so about the machine, not about the plan."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        sum(i * i for i in range(200_000))
        best = min(best, time.perf_counter() - started)
    return best * 1000


def run_child(repo: Path, url: str, server: int) -> dict[str, Any]:
    reference = reference_ms()
    served = cpu_seconds(server)
    started = time.perf_counter()
    # GNU time reports the peak of the whole process as the kernel counted it, exit included
    cmd = [TIME, "-f", f"{PEAK} %M", sys.executable, "-c", CHILD]
    out = subprocess.run(cmd, cwd=repo, env=env_for(repo, url), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"plan exited {out.returncode}: {out.stderr}")
    errors = out.stderr.splitlines()
    peak = next(line for line in reversed(errors) if line.startswith(PEAK))
    result: dict[str, Any] = json.loads(next(line for line in reversed(errors) if line.startswith("{")))
    return {
        **result,
        "plan": json.loads(out.stdout),
        "wall": wall,
        "server_cpu": cpu_seconds(server) - served,
        "rss_mib": int(peak.split()[1]) / 1024,
        "reference_ms": reference,
    }


def save_state(repo: Path, url: str, owned: int) -> None:
    """The state file an apply would have committed (markers of our runs), written outside the timing.

    It observes with an empty per-machine cache of its own: a marker this machine's cache alone
    claims is never committed (engine/observe.Ownership.committed_state), so with the shared
    cache the state file would hold no marker and "warm" would measure "again" once more."""
    env = {**env_for(repo, url), "RECONCILER_CACHE_DIR": str(repo.parent / "save-state-cache")}
    subprocess.run([sys.executable, "-c", SAVE_STATE, str(repo)], env=env, check=True)
    markers = json.loads((repo / ".reconciler/state.json").read_text())["markers"]
    if len(markers) != owned:
        raise SystemExit(f"the saved state file holds {len(markers)} markers, not the {owned} of our runs")


def counts(result: dict[str, Any]) -> str:
    return ", ".join(f"{v} {k}" for k, v in sorted(result["plan"]["counts"].items()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="plans of each warm kind (again, warm); with more than one, a median line follows",
    )
    args = parser.parse_args()
    tasks = task_names()
    print(f"plan for {SPECS} run specs, {args.latency_ms:g} ms added latency per request, on {os.cpu_count()} cores")
    print(
        f"{'runs':>6} {'plan':>5} {'wall s':>7} {'in main':>7} {'requests':>8} {'cpu s':>6} {'srv cpu':>7}"
        f" {'peak MiB':>8} {'ref ms':>6}  actions"
    )
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "repo"
            (repo / "specs/runs").mkdir(parents=True)
            (repo / "reconciler.toml").write_text(f'workspace = "perf"\nowner = "{OWNER}"\n')
            for i in range(SPECS):
                (repo / f"specs/runs/s{i:04d}.toml").write_text(spec_text(i, tasks))
            db = Path(tmp) / "platform.sqlite3"
            t0 = time.perf_counter()
            seed(db, repo, size)
            seeded = time.perf_counter() - t0
            proc, url = serve(db, args.latency_ms)
            try:
                for label in ("cold", "again", "warm"):
                    if label == "warm":
                        save_state(repo, url, min(size, SPECS))
                    rows = [run_child(repo, url, proc.pid) for _ in range(1 if label == "cold" else args.repeat)]
                    for r in rows:
                        print(
                            f"{size:>6} {label:>5} {r['wall']:>7.2f} {r['inside']:>7.2f} {r['requests']:>8} {r['cpu']:>6.2f}"
                            f" {r['server_cpu']:>7.2f} {r['rss_mib']:>8.1f} {r['reference_ms']:>6.1f}  {counts(r)}",
                            flush=True,
                        )
                    if len(rows) > 1:
                        wall = statistics.median(r["wall"] for r in rows)
                        peak = statistics.median(r["rss_mib"] for r in rows)
                        print(
                            f"{size:>6} {label:>5} median wall {wall:.2f} s, peak {peak:.1f} MiB over {len(rows)} plans"
                        )
            finally:
                proc.terminate()
                proc.wait()
            print(f"       (seeded {size} runs in {seeded:.1f}s)", flush=True)


if __name__ == "__main__":
    main()
