"""What `reconciler` costs before it does any work: `--help`, the imports of `plan`, and a small plan.

    .venv/bin/python -m tests.perf.bench_startup [--runs 20] [--venv DIR [--reuse]] [--baseline DIR]

It measures a regular (non-editable) install, as users get it: the checkout's working tree
(tracked and untracked files, not the ignored ones) is copied to a temporary directory and
installed with `pip install` into a fresh virtual environment, dependencies included, from the
package index pip is configured with. `--venv DIR` builds there instead of a temporary
directory; `--venv DIR --reuse` measures what is already installed in DIR (no rebuild, so it
measures whatever was installed there last). Then it prints:

    --help      wall of `reconciler --help` over --runs runs after one warm-up: median, min, max
    imports     `python -X importtime` on the console script running `reconciler plan` in a fresh
                clone of this repository (its example specs, `platform = "local"`, in process):
                the sum of the top-level cumulative column, median over 9 fresh clones; then the
                wall of importing the same top-level modules in that order without importtime
    plan 50     wall of `reconciler plan --format json` on a generated repository of 50 run specs
                (bench_plan's specs) against the local platform, median over 9 runs after a warm-up

`--baseline DIR` measures a second install (say, of the main branch: `--venv DIR` once from
that checkout) in the same loops, each run of one followed by the same run of the other, so both
see the same load: on a shared machine the figures swing by a third from one minute to the next.

Figures only: they depend on the machine and on what else runs on it, so nothing is asserted.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tests.perf.bench_plan import spec_text, task_names

CHECKOUT = Path(__file__).resolve().parents[2]
CLONES = 9
PLAN_SPECS = 50
PLAN_RUNS = 9
# "import time:      self |  cumulative | <2 spaces per level>name"; top level has no extra indent
_IMPORTTIME = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)$")


def build(venv: Path) -> None:
    """A regular install of the working tree into a fresh `venv` (copied first: pip builds in the source tree)."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "src"
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=CHECKOUT,
            capture_output=True,
            check=True,
        ).stdout.split(b"\0")
        for name in filter(None, (n.decode() for n in listed)):
            if (CHECKOUT / name).is_file():  # a deleted but still tracked file is listed too
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(CHECKOUT / name, source / name)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        subprocess.run([str(venv / "bin/pip"), "install", "-q", str(source)], check=True)


def timed(cmd: Sequence[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def top_level_imports(stderr: str) -> list[tuple[str, int]]:
    """(module, cumulative microseconds) of each top-level import in `-X importtime` output."""
    found = []
    for line in stderr.splitlines():
        match = _IMPORTTIME.match(line)
        if match and not match.group(3):
            found.append((match.group(4), int(match.group(2))))
    return found


def plan_importtime(venv: Path, work: Path) -> list[tuple[str, int]]:
    """importtime of `reconciler plan` (text, the default) in a fresh clone of this repository."""
    clone = work / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(CHECKOUT), str(clone)], check=True)
    out = subprocess.run(
        [str(venv / "bin/python"), "-X", "importtime", str(venv / "bin/reconciler"), "plan"],
        cwd=clone,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode not in (0, 2):  # 2: changes pending
        raise SystemExit(f"reconciler plan failed in {clone}:\n{out.stderr[-2000:]}")
    return top_level_imports(out.stderr)


def import_wall(venv: Path, modules: Sequence[str], cwd: Path) -> float:
    """Wall of importing `modules` in order in a fresh interpreter, without importtime."""
    code = (
        "import importlib, time\n"
        "started = time.perf_counter()\n"
        f"for name in {list(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(time.perf_counter() - started)\n"
    )
    out = subprocess.run([str(venv / "bin/python"), "-c", code], cwd=cwd, capture_output=True, text=True, check=True)
    return float(out.stdout)


def plan_repo(root: Path) -> Path:
    """A git repository of PLAN_SPECS run specs for the local platform, as `git init` and a first commit leave it."""
    tasks = task_names()
    (root / "specs/runs").mkdir(parents=True)
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "perf"\nowner = "perf/startup"\n')
    (root / ".gitignore").write_text(".osmosis/\n.reconciler/lock\n")
    for i in range(PLAN_SPECS):
        (root / f"specs/runs/s{i:04d}.toml").write_text(spec_text(i, tasks))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "specs"], cwd=root, check=True)
    return root


def plan_wall(venv: Path, repo: Path) -> float:
    started = time.perf_counter()
    out = subprocess.run(
        [str(venv / "bin/reconciler"), "plan", "--format", "json"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if out.returncode not in (0, 2):
        raise SystemExit(f"reconciler plan failed in {repo}:\n{out.stderr[-2000:]}")
    return wall


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20, help="runs of `reconciler --help` (default 20)")
    parser.add_argument("--venv", type=Path, help="build the install here (default: a temporary directory)")
    parser.add_argument("--reuse", action="store_true", help="measure the install already in --venv; no rebuild")
    parser.add_argument("--baseline", type=Path, help="an install to measure alongside, run for run")
    args = parser.parse_args()
    if args.reuse and args.venv is None:
        parser.error("--reuse needs --venv DIR")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        venv = args.venv.resolve() if args.venv else work / "venv"
        if not args.reuse:
            started = time.perf_counter()
            build(venv)
            print(f"installed the working tree into {venv} in {time.perf_counter() - started:.0f}s")
        installs = {"this": venv}
        if args.baseline is not None:
            installs["baseline"] = args.baseline.resolve()
        for install in installs.values():
            if not (install / "bin/reconciler").exists():
                raise SystemExit(f"no reconciler installed in {install}")
        width = max(map(len, installs))

        helps: dict[str, list[float]] = {name: [] for name in installs}
        for install in installs.values():
            timed([str(install / "bin/reconciler"), "--help"], work)  # warm-up: the page cache, not the measurement
        for _ in range(args.runs):
            for name, install in installs.items():
                helps[name].append(timed([str(install / "bin/reconciler"), "--help"], work))
        for name, walls in helps.items():
            print(
                f"{name:<{width}}  --help   median {ms(statistics.median(walls))}, min {ms(min(walls))},"
                f" max {ms(max(walls))} over {args.runs} runs"
            )

        sums: dict[str, list[int]] = {name: [] for name in installs}
        modules: dict[str, list[str]] = {}
        for _ in range(CLONES):
            for name, install in installs.items():
                imports = plan_importtime(install, work)
                sums[name].append(sum(us for _, us in imports))
                modules[name] = [module for module, _ in imports]
        import_walls: dict[str, list[float]] = {name: [] for name in installs}
        for _ in range(CLONES):
            for name, install in installs.items():
                import_walls[name].append(import_wall(install, modules[name], work))
        for name in installs:
            print(
                f"{name:<{width}}  imports  plan under -X importtime: median {statistics.median(sums[name]) / 1e6:.3f} s"
                f" (min {min(sums[name]) / 1e6:.3f}) over {CLONES} fresh clones; the same {len(modules[name])}"
                f" top-level imports without it: median {ms(statistics.median(import_walls[name]))}"
            )

        repo = plan_repo(work / "plan50")
        plans: dict[str, list[float]] = {name: [] for name in installs}
        for install in installs.values():
            plan_wall(install, repo)  # warm-up; the first creates the local platform's database
        for _ in range(PLAN_RUNS):
            for name, install in installs.items():
                plans[name].append(plan_wall(install, repo))
        for name, walls in plans.items():
            print(
                f"{name:<{width}}  plan 50  median {ms(statistics.median(walls))}, min {ms(min(walls))}"
                f" over {PLAN_RUNS} runs ({PLAN_SPECS} run specs, local platform, --format json)"
            )


if __name__ == "__main__":
    main()
