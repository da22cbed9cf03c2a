"""This repository's own `templates/` is the customisation example: the same files `init` scaffolds, read first."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reconciler.commands.init import scaffold_files

ROOT = Path(__file__).resolve().parents[2]
RECONCILER = str(Path(sys.executable).with_name("reconciler"))
TEMPLATES = ("leaderboard.md.j2", "leaderboard.svg.j2", "plan.md.j2")


def example_copy(tmp_path: Path) -> Path:
    """The repository's example GitOps files, as a fresh clone has them (no local platform world yet)."""
    copy = tmp_path / "clone"
    copy.mkdir()
    shutil.copy(ROOT / "reconciler.toml", copy)
    for folder in ("specs", "templates", "leaderboards"):
        shutil.copytree(ROOT / folder, copy / folder)
    return copy


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_", "CI"))}
    return subprocess.run([RECONCILER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_repository_templates_are_the_ones_init_scaffolds() -> None:
    scaffolded = scaffold_files()
    for name in TEMPLATES:
        assert (ROOT / "templates" / name).read_text(encoding="utf-8") == scaffolded[f"templates/{name}"], name


@pytest.mark.slow
def test_editing_the_repository_leaderboard_template_changes_the_rendered_leaderboard(tmp_path: Path) -> None:
    clone = example_copy(tmp_path)
    template = clone / "templates" / "leaderboard.md.j2"
    template.write_text(
        template.read_text(encoding="utf-8").replace("### {{ title | cell }}", "### Our team: {{ title | cell }}"),
        encoding="utf-8",
    )
    done = run(clone, "render")
    assert done.returncode == 0, done.stderr
    assert "### Our team: Terminal-Bench 2.1 leaderboard" in (clone / "leaderboards/terminal-bench-2-1.md").read_text()
    assert "### Our team: Humanity's Last Exam leaderboard" in (clone / "leaderboards/hle.md").read_text()


@pytest.mark.slow
def test_editing_the_repository_plan_template_changes_the_markdown_plan(tmp_path: Path) -> None:
    clone = example_copy(tmp_path)
    template = clone / "templates" / "plan.md.j2"
    template.write_text(
        template.read_text(encoding="utf-8").replace("### reconciler plan", "### Benchmark plan for review"),
        encoding="utf-8",
    )
    done = run(clone, "plan", "--format", "markdown")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("### Benchmark plan for review")
