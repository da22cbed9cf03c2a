"""What a command loads before it can work: each heavy library only where it is needed.

Every pull request and every schedule pays a plan's start-up, so `plan` on the local platform
must not load GitPython (only `--base` reviews and `reconcile --commit` use git history),
jinja2 (only `--format markdown` renders a template), rich (progress bars), httpx (the GitHub
adapter), aiohttp (platforms reached by URL) or uvicorn (`platform serve`). `--help` lists
commands from a table and loads none of them, nor pydantic or asyncio.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOT_FOR_PLAN = ("git", "jinja2", "rich", "httpx", "aiohttp", "uvicorn")

# Runs the command line in this process, then reports the top-level packages it imported on stderr.
CHILD = """
import json, sys
from reconciler.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exit:
    code = exit.code
print(json.dumps({"exit": code, "packages": sorted({m.split(".")[0] for m in sys.modules})}), file=sys.stderr)
"""


def loaded(cwd: Path, *args: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=cwd, capture_output=True, text=True, check=False)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["exit"], set(report["packages"])


@pytest.fixture
def example(tmp_path: Path) -> Path:
    """This project's example specs in a git repository whose origin is on GitHub, on the local platform."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "specs", root / "specs")
    shutil.copytree(REPO / "templates", root / "templates")
    shutil.copy(REPO / "reconciler.toml", root / "reconciler.toml")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "remote", "add", "origin", "https://github.com/acme/evals.git"], cwd=root, check=True)
    return root


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_plan_on_the_local_platform_loads_no_library_it_does_not_use(example: Path, fmt: str) -> None:
    code, packages = loaded(example, "plan", "--format", fmt)
    assert code == 0
    assert "pydantic" in packages and "starlette" in packages  # it did plan, in process
    assert packages.isdisjoint(NOT_FOR_PLAN), sorted(packages & set(NOT_FOR_PLAN))


def test_root_help_loads_neither_pydantic_nor_asyncio(tmp_path: Path) -> None:
    code, packages = loaded(tmp_path, "--help")
    assert code == 0
    assert "click" in packages
    assert packages.isdisjoint({"pydantic", "asyncio", *NOT_FOR_PLAN}), sorted(packages)
