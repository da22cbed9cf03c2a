"""Download throughput and memory: our engine next to `curl --parallel` on the same URLs.

    .venv/bin/python tests/perf/bench_download.py [--files 2000] [--size 100000] [--jobs 8] [--rounds 2]
        [--output-latency-ms 30] [--no-large]

1. Serves the local platform with `reconciler platform serve --port 0 --bench-artifacts
   FILES:SIZE` on 127.0.0.1, in a subprocess: every run also carries `--files` artifacts
   (`artifacts/bench-NNNNN/blob.bin`, `--size` bytes each, deterministic bytes).
2. Submits one small run and waits until it has finished.
3. Asks for the artifacts' manifest and presigned URLs, and writes a curl config file.
   `--output-latency-ms` makes the server wait that long before every file GET (a bucket
   across a WAN); the API requests are not delayed.
4. For each round: curl fetches the run, the manifest and the URL batches (one request each,
   as our engine does), then `curl --parallel --parallel-max JOBS` fetches every URL into a
   fresh folder, all in one timed shell: both tools pay for the same requests; then the same
   shell again ending with `sync` (curl does not make its files durable, our engine does: this
   row is what curl costs with its files on disk too);
   then our engine (`reconciler download RUN --type artifacts --jobs JOBS`, as a subprocess)
   does the same, then download_run in this process, then download_run once more with its
   files not made durable (step 3 of reconciler.outputs.transfer switched off, which no user can
   do: it prices durability, against curl, which leaves its files in the page cache). Wall time gives MB/s (decimal MB); peak
   RSS comes from wait4's rusage; our engine's own Python peak is measured in-process with
   tracemalloc (one more run). Before each timed run the page cache is flushed (`sync`,
   untimed): curl leaves its 200 MB dirty for the kernel to write back later, which would
   otherwise happen during the next turn. Nothing is deleted until the end: deleting
   thousands of files makes the next file creations slower on some filesystems (ext4 without
   a journal skips inodes deleted in the last minute), which would tax whoever runs next.
5. Memory flat in file size: the same total is fetched again as `--files/250` files of
   250x the size, and peak RSS is printed for both shapes.

Prints a table; exits 0 (it is a measurement, not a test).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TOKEN = "bench-token"
TIME = "/usr/bin/time"  # GNU time, for the peak RSS of a child process


def start_server(db: Path, files: int, size: int, output_latency_ms: float) -> tuple[subprocess.Popen[str], str]:
    cmd = [
        sys.executable,
        "-m",
        "reconciler.cli",
        "platform",
        "serve",
        "--port",
        "0",
        "--db",
        str(db),
        "--token",
        TOKEN,
        "--speed",
        "1000000",
        "--bench-artifacts",
        f"{files}:{size}",
    ]
    if output_latency_ms:
        # an older `platform serve` without the output-only knob delays every request instead
        knob = "--output-latency-ms" if "--output-latency-ms" in serve_help() else "--latency-ms"
        cmd += [knob, str(output_latency_ms)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("serving on "):
        proc.kill()
        raise SystemExit(f"the platform did not start: {line!r}")
    return proc, line.split()[2]


def serve_help() -> str:
    cmd = [sys.executable, "-m", "reconciler.cli", "platform", "serve", "--help"]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, check=True).stdout


def stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


async def prepare(url: str) -> tuple[str, str, list[tuple[str, str]], list[bytes], int]:
    """Submit a run and wait for it; returns (run name, run id, [(URL, path)], URL request bodies, bytes)."""
    from reconciler.osmosis.client import OsmosisClient
    from tests.integration.download_support import payload

    async with OsmosisClient(url, token=TOKEN, workspace="bench") as client:
        run = await client.submit_run(payload(2))
        while (await client.get_run(run.id)).benchmark_run.status not in ("finished", "failed"):
            await asyncio.sleep(0.05)
        manifest = await client.get_manifest(run.id, ["artifacts"])
        files = list(manifest.files)
        pairs, bodies = [], []
        for start in range(0, len(files), 500):
            batch = files[start : start + 500]
            items = [{"path": f.path, **({"token": f.token} if f.token is not None else {})} for f in batch]
            bodies.append(json.dumps({"items": items}).encode())
            urls = await client.get_download_urls(run.id, [(f.path, f.token) for f in batch])
            for f in batch:
                match = urls.match(f.path, f.token)
                assert match is not None
                pairs.append((match.url, f.path))
        return run.name, run.id, pairs, bodies, sum(f.size for f in files)


def curl_config(pairs: list[tuple[str, str]], out: Path, config: Path) -> Path:
    config.write_text("".join(f'url = "{url}"\noutput = "{out / path}"\n' for url, path in pairs))
    return config


def curl_script(
    url: str, run: str, run_id: str, bodies: list[bytes], config: Path, jobs: int, work: Path, *, durable: bool = False
) -> list[str]:
    """One shell: the run, the manifest and every URL batch (as our engine asks), then the files;
    `durable`: then `sync`, so curl's files are on disk when it ends, as ours are."""
    api = f"{url}/api/cli/benchmark-runs"
    auth = f"-H 'Authorization: Bearer {TOKEN}' -H 'X-Osmosis-Workspace: bench'"
    lines = [
        f"curl -sS --fail {auth} -o /dev/null '{api}/{run}'",
        f"curl -sS --fail {auth} -o /dev/null '{api}/{run_id}/outputs/manifest?types=artifacts'",
    ]
    for n, body in enumerate(bodies):
        path = work / f"urls-{n}.json"
        path.write_bytes(body)
        lines.append(
            f"curl -sS --fail {auth} -H 'Content-Type: application/json' --data-binary @{path} -o /dev/null"
            f" '{api}/{run_id}/outputs/download-urls'"
        )
    lines.append(f"curl --parallel --parallel-max {jobs} --create-dirs -sS --fail -K {config}")
    if durable:
        lines.append("sync")
    return ["sh", "-ec", "\n".join(lines)]


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> tuple[float, int, float]:
    """(seconds, peak RSS in kB, CPU seconds) of one child process, measured by /usr/bin/time.

    GNU time forks the command itself, so the peak is the command's own: a child forked
    straight from this Python process would report Python's resident set as its peak.
    """
    marker = "__bench_time__"
    os.sync()  # nobody's dirty pages are written back on this command's time
    started = time.perf_counter()
    done = subprocess.run(
        [TIME, "-f", f"{marker} %M %U %S", *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    line = next(line for line in reversed(done.stderr.splitlines()) if line.startswith(marker))
    _, rss, user, system = line.split()
    return seconds, int(rss), float(user) + float(system)


def check(folder: Path, count: int, total: int) -> None:
    files = [p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")]
    size = sum(p.stat().st_size for p in files)
    if len(files) != count or size != total:
        raise SystemExit(f"{folder}: {len(files)} files, {size} bytes; expected {count}, {total}")


async def engine_in_process(
    url: str, run: str, out: Path, jobs: int, *, traced: bool, durable: bool = True
) -> tuple[float, int]:
    """(seconds, tracemalloc peak bytes or 0) of download_run in this process.

    `durable=False` measures what making files durable costs: each partial lands as soon as its
    body is written, as curl's files do (page cache only). No user can ask for that; it is a
    measurement of the engine with its step 3 (reconciler.outputs.transfer) switched off."""
    from reconciler.osmosis.client import OsmosisClient
    from reconciler.outputs import transfer

    def written_only(self: object, fd: int, device: int, release: bool) -> asyncio.Future[None]:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    saved = transfer.Transfer._durable
    if not durable:
        transfer.Transfer._durable = written_only  # type: ignore[method-assign]

    try:
        from reconciler.engine.downloads import download_run
    except ImportError:  # the engine before its move into reconciler.engine
        from reconciler.outputs.download import download_run  # type: ignore[no-redef,import-not-found]

    try:
        async with OsmosisClient(url, token=TOKEN, workspace="bench") as client:
            if traced:
                tracemalloc.start()
            os.sync()
            started = time.perf_counter()
            report = await download_run(
                client, run=run, types=["artifacts"], output_root=out, output_dir=out, jobs=jobs
            )
            seconds = time.perf_counter() - started
            peak = tracemalloc.get_traced_memory()[1] if traced else 0
            tracemalloc.stop()
    finally:
        transfer.Transfer._durable = saved  # type: ignore[method-assign]
    assert report.status == "success", report.files_failed[:3]
    return seconds, peak


def measure(files: int, size: int, jobs: int, rounds: int, work: Path, latency: float) -> dict[str, object]:
    db = work / f"platform-{files}.sqlite3"
    server, url = start_server(db, files, size, latency)
    try:
        run, run_id, pairs, bodies, total = asyncio.run(prepare(url))
        count = len(pairs)
        # the CLI runs in an empty project folder (no specs to load), on this checkout's code
        env = dict(os.environ, OSMOSIS_PLATFORM_URL=url, OSMOSIS_TOKEN=TOKEN, OSMOSIS_WORKSPACE="bench")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        project = work / "project"
        project.mkdir(exist_ok=True)
        curl_runs, synced_runs, ours_runs, inproc_runs, undurable_runs = [], [], [], [], []
        for n in range(rounds):
            curl_out, synced_out, ours_out, inproc_out, undurable_out = (
                work / f"{tool}-{n}" for tool in ("curl", "curl-sync", "ours", "inproc", "undurable")
            )
            config = curl_config(pairs, curl_out, work / f"curl-{n}.cfg")
            curl_runs.append(timed(curl_script(url, run, run_id, bodies, config, jobs, work)))
            check(curl_out, count, total)
            config = curl_config(pairs, synced_out, work / f"curl-sync-{n}.cfg")
            synced_runs.append(timed(curl_script(url, run, run_id, bodies, config, jobs, work, durable=True)))
            check(synced_out, count, total)
            ours_cmd = [sys.executable, "-m", "reconciler.cli", "download", run, "--type", "artifacts"]
            ours_runs.append(timed([*ours_cmd, "--jobs", str(jobs), "--output", str(ours_out)], env, project))
            check(ours_out, count, total)
            inproc_runs.append(asyncio.run(engine_in_process(url, run, inproc_out, jobs, traced=False))[0])
            check(inproc_out, count, total)
            undurable = asyncio.run(engine_in_process(url, run, undurable_out, jobs, traced=False, durable=False))
            undurable_runs.append(undurable[0])
            check(undurable_out, count, total)
        inproc_seconds = min(inproc_runs)
        _, traced_peak = asyncio.run(engine_in_process(url, run, work / "traced", jobs, traced=True))
    finally:
        stop(server)
    best_curl = min(curl_runs)
    best_synced = min(synced_runs)
    best_ours = min(ours_runs)
    mb = total / 1e6
    return {
        "files": count,
        "bytes": total,
        "curl_seconds": best_curl[0],
        "curl_mb_s": mb / best_curl[0],
        "curl_cpu_seconds": best_curl[2],
        "curl_peak_rss_kb": max(r[1] for r in curl_runs),
        "curl_sync_seconds": best_synced[0],
        "curl_sync_mb_s": mb / best_synced[0],
        "curl_sync_cpu_seconds": best_synced[2],
        "ours_seconds": best_ours[0],
        "ours_mb_s": mb / best_ours[0],
        "ours_cpu_seconds": best_ours[2],
        "ours_peak_rss_kb": max(r[1] for r in ours_runs),
        "ours_inprocess_seconds": inproc_seconds,
        "ours_inprocess_mb_s": mb / inproc_seconds,
        "ours_tracemalloc_peak_kb": traced_peak // 1024,
        "ours_undurable_seconds": min(undurable_runs),
        "ratio_undurable": best_curl[0] / min(undurable_runs),
        "ratio": best_curl[0] / best_ours[0],
        "ratio_inprocess": best_curl[0] / inproc_seconds,
        "ratio_synced": best_synced[0] / best_ours[0],
        "ratio_synced_inprocess": best_synced[0] / inproc_seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--output-latency-ms", type=float, default=0.0, help="server delay before each file GET")
    parser.add_argument("--no-large", action="store_true", help="skip the few-large-files shape")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    version = subprocess.run(["curl", "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    probe = subprocess.run(["curl", "--help", "all"], capture_output=True, text=True, check=False).stdout
    if "--parallel" not in probe:
        raise SystemExit(f"{version} does not support --parallel (curl 7.66 or later is needed)")
    if not Path(TIME).exists():
        raise SystemExit(f"{TIME} (GNU time) is needed to measure the peak memory of curl and of our CLI")
    shapes = [(args.files, args.size)]
    if not args.no_large:
        shapes.append((max(1, args.files // 250), args.size * 250))
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-download-") as tmp:
        for files, size in shapes:
            work = Path(tmp) / f"{files}x{size}"
            work.mkdir()
            results.append(measure(files, size, args.jobs, args.rounds, work, args.output_latency_ms))
    print(version)
    print(
        f"jobs={args.jobs}, rounds={args.rounds}, output latency {args.output_latency_ms:g} ms: best wall time of the rounds, peak RSS the max over them;"
        f" load average {os.getloadavg()[0]:.2f}"
    )
    print("curl writes into the page cache; reconciler also makes every file durable before its rename.")
    print("'curl --parallel; sync' is curl followed by sync in the same timed shell: its files on disk too.")
    print("curl's time includes the run, manifest and URL-batch requests, as ours does.")
    header = f"{'shape':>16} {'tool':>24} {'seconds':>8} {'MB/s':>7} {'CPU s':>6} {'peak RSS MB':>12}"
    print(header)
    print("-" * len(header))
    for r in results:
        shape = f"{r['files']} x {int(r['bytes']) / int(r['files']) / 1e6:.2f} MB"
        rows = [
            (
                shape,
                "curl --parallel",
                r["curl_seconds"],
                r["curl_mb_s"],
                f"{r['curl_cpu_seconds']:.2f}",
                f"{int(r['curl_peak_rss_kb']) / 1024:.1f}",
            ),
            (
                "",
                "curl --parallel; sync",
                r["curl_sync_seconds"],
                r["curl_sync_mb_s"],
                f"{r['curl_sync_cpu_seconds']:.2f}",
                "",
            ),
            (
                "",
                "reconciler download",
                r["ours_seconds"],
                r["ours_mb_s"],
                f"{r['ours_cpu_seconds']:.2f}",
                f"{int(r['ours_peak_rss_kb']) / 1024:.1f}",
            ),
            (
                "",
                "download_run in-process",
                r["ours_inprocess_seconds"],
                r["ours_inprocess_mb_s"],
                "",
                f"py {int(r['ours_tracemalloc_peak_kb']) / 1024:.1f}",
            ),
            (
                "",
                "in-process, not durable",
                r["ours_undurable_seconds"],
                int(r["bytes"]) / 1e6 / r["ours_undurable_seconds"],
                "",
                "",
            ),
        ]
        for a, b, secs, rate, cpu, rss in rows:
            print(f"{a:>16} {b:>24} {secs:8.2f} {rate:7.1f} {cpu:>6} {rss:>12}")
        print(
            f"{'':>16} {'ours / curl throughput':>24} {r['ratio']:8.0%} (CLI process), {r['ratio_inprocess']:.0%} (in-process)"
        )
        print(f"{'':>16} {'not durable / curl':>24} {r['ratio_undurable']:8.0%} (in-process, step 3 switched off)")
        print(
            f"{'':>16} {'ours / (curl; sync)':>24} {r['ratio_synced']:8.0%} (CLI process),"
            f" {r['ratio_synced_inprocess']:.0%} (in-process)"
        )
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
