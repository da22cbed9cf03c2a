"""When to shard the scheduled job: one `reconciler reconcile` for 100 and 1,000 specs, and its shards.

    .venv/bin/python -m tests.perf.bench_reconcile_shards [--latency-ms 20] [--sizes 100,1000] [--shards 4]

For each size: a fresh repository of that many one-task run specs (each downloads summary and
results), a fresh `reconciler platform serve --latency-ms 20` on 127.0.0.1 whose simulated runs
end within seconds, and `reconciler reconcile` as a child process, timed from outside:

    submit     the first job after the specs land: every spec is submitted
    converge   a job on a fresh runner once every run ended: no .osmosis/, so every spec's
               outputs are downloaded, then every leaderboard is rendered
    idle       the same job again with the outputs in place: observe, plan, render, nothing to do
    shards     the `converge` job split by spec id into --shards jobs (`--target ...` each, one
               after the other here; on GitHub they run side by side, so the matrix takes about
               the slowest shard plus the last job), then the last job (`--render-only`)

It prints wall seconds per job and never asserts a time: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reconciler.core.shards import by_spec_id
from tests.perf import bench_plan
from tests.perf.bench_plan import task_names

TOKEN = "perf"


def spec_text(i: int, tasks: list[str]) -> str:
    return (
        '[experiment]\nbenchmark = "terminal-bench-2-1"\n'
        f'[tasks]\ntask_names = ["{tasks[i % len(tasks)]}"]\n'
        '[[agents]]\nharness = "codex"\n'
        f'[agents.model]\ntype = "provider"\nmodel = "openai/model-{i // len(tasks)}"\napi_key_secret = "OPENAI_API_KEY"\n'
        "[execution]\nmax_concurrent_attempts = 1\n"
        f'[reconcile]\nid = "s{i:04d}"\ndownload = ["summary", "results"]\n'
    )


BENCHMARK = """[benchmark]
ref = "terminal-bench-2-1"

[leaderboard]
output = "leaderboards/terminal-bench-2-1.md"
rank_by = "pass_at_1"
scope = "repo"

[policy]
max_attempts_per_run = 500
"""


def make_repo(root: Path, size: int) -> list[str]:
    tasks = task_names()
    (root / "specs/runs").mkdir(parents=True)
    (root / "specs/benchmarks").mkdir()
    (root / "specs/benchmarks/terminal-bench-2-1.toml").write_text(BENCHMARK)
    (root / "reconciler.toml").write_text(
        'workspace = "perf"\nowner = "perf/shards"\n\n[apply]\nmax_attempts_per_apply = 100000\nparallelism = 8\n'
    )
    for i in range(size):
        (root / f"specs/runs/s{i:04d}.toml").write_text(spec_text(i, tasks))
    return [f"s{i:04d}" for i in range(size)]


def serve(db: Path, latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    return bench_plan.serve(db, latency_ms, token=TOKEN, speed=100000)


def reconcile(repo: Path, url: str, *args: str) -> float:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_"))}
    env |= {"OSMOSIS_PLATFORM_URL": url, "OSMOSIS_TOKEN": TOKEN}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "reconcile", "--lock-timeout", "600", *args],
        cwd=repo, env=env, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"reconcile {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return elapsed


def fresh_runner(repo: Path) -> None:
    """What a new GitHub runner has: the checkout, no downloaded outputs."""
    shutil.rmtree(repo / ".osmosis", ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--shards", type=int, default=4)
    args = parser.parse_args()
    print(f"reconcile, {args.latency_ms:g} ms added latency per request, {os.cpu_count()} cores, [apply] parallelism 8")
    print(
        f"{'specs':>6} {'submit s':>9} {'converge s':>10} {'idle s':>7}   {args.shards} shards: slowest s, last job s"
    )
    for size in [int(s) for s in args.sizes.split(",")]:
        with tempfile.TemporaryDirectory() as tmp:
            repo = Path(tmp) / "repo"
            ids = make_repo(repo, size)
            proc, url = serve(Path(tmp) / "platform.sqlite3", args.latency_ms)
            try:
                submit = reconcile(repo, url)
                reconcile(repo, url, "--wait")  # every run ends (simulated time runs fast)
                fresh_runner(repo)
                converge = reconcile(repo, url)
                idle = reconcile(repo, url)
                fresh_runner(repo)
                shard_times = []
                for shard in by_spec_id(ids, args.shards):
                    targets = [a for t in shard.targets for a in ("--target", t)]
                    shard_times.append(reconcile(repo, url, *targets))
                last = reconcile(repo, url, "--render-only")
            finally:
                proc.terminate()
                proc.wait()
            print(
                f"{size:>6} {submit:>9.1f} {converge:>10.1f} {idle:>7.1f}   {max(shard_times):>10.1f} {last:>11.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
