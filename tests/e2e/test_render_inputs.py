"""A render is planned exactly when a render input changed (standings, [leaderboard] settings, templates),
and `render` rewrites exactly what the plan said: the CLI as a subprocess, on the embedded platform."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.local_cli import cli

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow
TB = "specs/benchmarks/terminal-bench-2-1.toml"


def renders(root: Path) -> list[str]:
    done = cli(root, "plan", "--format", "json")
    assert done.returncode == 0, done.stderr
    return sorted(a["spec_id"] for a in json.loads(done.stdout)["actions"] if a["kind"] == "render")


def rendered_files(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "leaderboards").iterdir())}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """Leaderboards rendered once: the plan has no render left."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "inputs"\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert cli(root, "render").returncode == 0
    assert renders(root) == []
    return root


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('rank_by = "pass_at_1"', 'rank_by = "cost_per_task"'),
        ('scope = "workspace"', 'scope = "repo"'),
        ('chart = "leaderboards/terminal-bench-2-1.svg"', 'chart = "leaderboards/tb.svg"'),
        ('output = "leaderboards/terminal-bench-2-1.md"', 'output = "leaderboards/tb.md"'),
    ],
    ids=["rank_by", "scope", "chart", "output"],
)
def test_a_changed_leaderboard_setting_plans_a_render_until_it_is_rendered(root: Path, old: str, new: str) -> None:
    spec = root / TB
    spec.write_text(spec.read_text().replace(old, new))
    assert renders(root) == ["benchmarks/terminal-bench-2-1"]
    assert cli(root, "render").returncode == 0
    assert renders(root) == []


def test_a_moved_output_is_written_where_the_plan_said(root: Path) -> None:
    spec = root / TB
    spec.write_text(spec.read_text().replace("leaderboards/terminal-bench-2-1.md", "leaderboards/tb.md"))
    [action] = [a for a in json.loads(cli(root, "plan", "--format", "json").stdout)["actions"] if a["kind"] == "render"]
    assert action["reason"].endswith("render leaderboards/tb.md")
    assert cli(root, "render").returncode == 0
    assert "tb.md" in rendered_files(root)


def test_an_edited_template_plans_a_render_of_every_leaderboard(root: Path) -> None:
    (root / "templates").mkdir()
    packaged = REPO / "reconciler/render/templates/leaderboard.md.j2"
    (root / "templates/leaderboard.md.j2").write_text(packaged.read_text() + "\nRanked nightly.\n")
    assert renders(root) == ["benchmarks/hle", "benchmarks/terminal-bench-2-1"]
    assert cli(root, "render").returncode == 0
    assert "Ranked nightly." in (root / "leaderboards/hle.md").read_text()
    assert renders(root) == []


def test_when_the_plan_has_no_render_render_rewrites_nothing(root: Path) -> None:
    before = {name: (root / "leaderboards" / name).stat().st_mtime_ns for name in rendered_files(root)}
    done = cli(root, "render")
    assert done.returncode == 0, done.stderr
    assert {name: (root / "leaderboards" / name).stat().st_mtime_ns for name in rendered_files(root)} == before
