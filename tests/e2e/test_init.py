"""`reconciler init`: a new GitOps repository that validates and plans with no further edits."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest
import yaml

from reconciler import __version__
from reconciler.core.shards import OLD_WORKFLOW_TARGET

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent
RECONCILER = str(BIN / "reconciler")
ROOT = Path(__file__).resolve().parents[2]
SCAFFOLDED = [
    "reconciler.toml",
    "specs/benchmarks/terminal-bench-2-1.toml",
    "specs/runs/tb-smoke.toml",
    "templates/leaderboard.md.j2",
    "templates/leaderboard.svg.j2",
    "templates/plan.md.j2",
    ".github/workflows/ci.yml",
    ".github/workflows/plan.yml",
    ".github/workflows/reconcile.yml",
    ".github/actions/reconcile/action.yml",
    ".gitignore",
]


def clean_env() -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_"))}
    return keep | {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RECONCILER, *args], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=300)


@pytest.fixture
def scaffolded(tmp_path: Path) -> Path:
    target = tmp_path / "evals"
    done = run(tmp_path, "init", "evals")
    assert done.returncode == 0, done.stderr
    return target


def test_init_writes_every_scaffold_file(scaffolded: Path) -> None:
    written = sorted(str(p.relative_to(scaffolded)) for p in scaffolded.rglob("*") if p.is_file())
    assert written == sorted(SCAFFOLDED)


def test_init_prints_the_next_commands(tmp_path: Path) -> None:
    out = run(tmp_path, "init", "evals").stdout
    assert "cd evals" in out
    assert out.index("reconciler validate") < out.index("reconciler plan") < out.index("reconciler apply")


def test_validate_succeeds_in_a_fresh_scaffold(scaffolded: Path) -> None:
    done = run(scaffolded, "validate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 specs valid" in done.stdout


def test_plan_succeeds_in_a_fresh_scaffold_against_the_local_platform(scaffolded: Path) -> None:
    done = run(scaffolded, "plan")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "submit   tb-smoke" in done.stdout


def test_init_in_a_project_keeps_every_edited_file_and_adds_what_is_missing(scaffolded: Path) -> None:
    (scaffolded / "specs/runs/tb-smoke.toml").write_text("# mine\n")
    (scaffolded / "templates/plan.md.j2").unlink()
    done = run(scaffolded.parent, "init", "evals")
    assert done.returncode == 0, done.stderr
    assert "kept specs/runs/tb-smoke.toml" in done.stdout and "created templates/plan.md.j2" in done.stdout
    assert "unchanged reconciler.toml" in done.stdout
    assert (scaffolded / "specs/runs/tb-smoke.toml").read_text() == "# mine\n"


def test_init_outside_a_project_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / ".github/workflows").mkdir(parents=True)
    (tmp_path / ".github/workflows/ci.yml").write_text("name: theirs\n")
    done = run(tmp_path, "init")
    assert done.returncode == 1
    assert "1 file(s) already exist" in done.stderr and "  .github/workflows/ci.yml" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".github"]
    assert (tmp_path / ".github/workflows/ci.yml").read_text() == "name: theirs\n"


def test_init_adds_its_lines_to_an_existing_gitignore(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/")
    done = run(tmp_path, "init")
    assert done.returncode == 0, done.stderr
    assert "updated .gitignore" in done.stdout
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[0] == "node_modules/" and ".osmosis/" in lines and ".reconciler/lock" in lines
    assert run(tmp_path, "init").stdout.count("unchanged") == 11  # a second init changes nothing


def test_init_sharded_switches_an_initialized_project_and_keeps_its_settings(scaffolded: Path) -> None:
    settings = scaffolded / "reconciler.toml"
    settings.write_text(settings.read_text().replace('platform = "local"', 'platform = "https://osmosis.example"'))
    done = run(scaffolded, "init", "--sharded")
    assert done.returncode == 0, done.stderr
    assert "switched .github/workflows/reconcile.yml" in done.stdout and "kept reconciler.toml" in done.stdout
    assert "https://osmosis.example" in settings.read_text()
    jobs = yaml.safe_load((scaffolded / ".github/workflows/reconcile.yml").read_text())["jobs"]
    assert list(jobs) == ["shards", "reconcile", "commit"]
    assert "switched" in run(scaffolded, "init").stdout  # and back


@pytest.mark.parametrize(("earlier", "asked"), [(False, []), (True, ["--sharded"]), (True, []), (False, ["--sharded"])])
def test_init_replaces_the_previous_versions_unedited_reconcile_workflow(
    scaffolded: Path, earlier: bool, asked: list[str]
) -> None:
    # the previous sharded workflow read `matrix.targets`, which `reconciler shards` no longer fills
    previous = ROOT / "reconciler/scaffold/previous" / ("reconcile-sharded.yml" if earlier else "reconcile.yml")
    workflow = scaffolded / ".github/workflows/reconcile.yml"
    workflow.write_text(previous.read_text().replace("@RECONCILER_VERSION@", "0.9.0"))
    done = run(scaffolded, "init", *asked)
    assert done.returncode == 0, done.stderr
    verb = "updated" if earlier == bool(asked) else "switched"
    assert f"{verb} .github/workflows/reconcile.yml" in done.stdout
    jobs = list(yaml.safe_load(workflow.read_text())["jobs"])
    assert jobs == (["shards", "reconcile", "commit"] if asked else ["reconcile"])
    assert "matrix.targets" not in workflow.read_text()


def test_init_sharded_keeps_an_edited_workflow_and_says_so(scaffolded: Path) -> None:
    workflow = scaffolded / ".github/workflows/reconcile.yml"
    workflow.write_text(workflow.read_text() + "# ours\n")
    done = run(scaffolded, "init", "--sharded")
    assert done.returncode == 0 and "kept .github/workflows/reconcile.yml" in done.stdout
    assert "was edited, so it was kept" in done.stderr and workflow.read_text().endswith("# ours\n")


def test_init_force_overwrites(scaffolded: Path) -> None:
    (scaffolded / "specs/runs/tb-smoke.toml").write_text("# mine\n")
    done = run(scaffolded, "init", "--force")
    assert done.returncode == 0
    assert "overwrote specs/runs/tb-smoke.toml" in done.stdout
    assert "[experiment]" in (scaffolded / "specs/runs/tb-smoke.toml").read_text()


def test_the_gitignore_keeps_the_local_platform_and_lock_out(scaffolded: Path) -> None:
    lines = (scaffolded / ".gitignore").read_text().splitlines()
    assert ".osmosis/" in lines and ".reconciler/lock" in lines


def test_the_templates_are_the_packaged_defaults(scaffolded: Path) -> None:
    packaged = files("reconciler") / "render" / "templates"
    for name in ("leaderboard.md.j2", "leaderboard.svg.j2", "plan.md.j2"):
        assert (scaffolded / "templates" / name).read_text() == packaged.joinpath(name).read_text()


def install_steps(workflow: dict[str, object]) -> list[dict[str, object]]:
    jobs = workflow["jobs"]
    assert isinstance(jobs, dict)
    return [s for job in jobs.values() for s in job["steps"] if s.get("name") == "Install reconciler"]


@pytest.mark.parametrize("name", ["ci.yml", "plan.yml", "reconcile.yml"])
def test_scaffolded_workflows_install_this_version_from_the_package_index(scaffolded: Path, name: str) -> None:
    workflow = yaml.safe_load((scaffolded / ".github/workflows" / name).read_text())
    [step] = install_steps(workflow)
    assert step["env"] == {"RECONCILER_VERSION": __version__}
    assert '"osmosis-reconciler==${RECONCILER_VERSION}"' in str(step["run"])


DISTRIBUTION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_distribution_has_a_name_of_its_own_and_this_version() -> None:
    # "reconciler" on the package index is an unrelated project
    assert (DISTRIBUTION["name"], DISTRIBUTION["version"]) == ("osmosis-reconciler", __version__)
    assert DISTRIBUTION["scripts"] == {"reconciler": "reconciler.cli:main"}


def installed_requirements(root: Path) -> set[str]:
    """Every `...reconciler==VERSION` the scaffold in `root` installs; fails on a bare `reconciler` install."""
    requirement = re.compile(r"[\w.-]*reconciler==[^\s\"']+")
    found = set()
    for rel in SCAFFOLDED:
        text = (root / rel).read_text()
        found |= {m.replace("${RECONCILER_VERSION}", "$RECONCILER_VERSION") for m in requirement.findall(text)}
        assert not re.search(r"pip install[^\n]*[\s\"']reconciler[\s\"=]", text), rel
    return found


def test_everything_scaffolded_installs_exactly_this_distribution_and_version(scaffolded: Path) -> None:
    assert installed_requirements(scaffolded) == {"osmosis-reconciler==$RECONCILER_VERSION"}
    action = yaml.safe_load((scaffolded / ".github/actions/reconcile/action.yml").read_text())
    assert action["inputs"]["reconciler-version"]["default"] == __version__


@pytest.mark.parametrize("name", ["plan.yml", "reconcile.yml"])
def test_scaffolded_workflows_match_this_repositorys_but_for_the_install(scaffolded: Path, name: str) -> None:
    ours = yaml.safe_load((ROOT / ".github/workflows" / name).read_text())
    theirs = yaml.safe_load((scaffolded / ".github/workflows" / name).read_text())
    for workflow in (ours, theirs):
        for step in install_steps(workflow):
            step.clear()
    assert ours == theirs


def test_the_scaffolded_action_is_this_repositorys_action(scaffolded: Path) -> None:
    ours = (ROOT / ".github/actions/reconcile/action.yml").read_text()
    assert (scaffolded / ".github/actions/reconcile/action.yml").read_text() == ours


def test_scaffolded_workflows_pass_actionlint(scaffolded: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=scaffolded, check=True)
    done = subprocess.run(
        [str(BIN / "actionlint")], cwd=scaffolded, env=clean_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture
def sharded(tmp_path: Path) -> Path:
    done = run(tmp_path, "init", "--sharded", "evals")
    assert done.returncode == 0, done.stderr
    return tmp_path / "evals"


def test_init_sharded_writes_the_matrix_variant_in_place_of_the_single_job(sharded: Path) -> None:
    written = sorted(str(p.relative_to(sharded)) for p in sharded.rglob("*") if p.is_file())
    assert written == sorted(SCAFFOLDED)
    jobs = yaml.safe_load((sharded / ".github/workflows/reconcile.yml").read_text())["jobs"]
    assert list(jobs) == ["shards", "reconcile", "commit"]
    assert jobs["reconcile"]["strategy"]["matrix"] == "${{ fromJSON(needs.shards.outputs.matrix) }}"
    assert "@RECONCILER_VERSION@" not in (sharded / ".github/workflows/reconcile.yml").read_text()


def test_the_sharded_scaffold_installs_exactly_this_distribution_and_version(sharded: Path) -> None:
    assert installed_requirements(sharded) == {"osmosis-reconciler==$RECONCILER_VERSION"}


def test_the_sharded_scaffold_passes_actionlint(sharded: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=sharded, check=True)
    done = subprocess.run(
        [str(BIN / "actionlint")], cwd=sharded, env=clean_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_shards_lists_one_shard_per_benchmark_in_a_fresh_scaffold(sharded: Path) -> None:
    done = run(sharded, "shards", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "include": [{"shard": "terminal-bench-2-1-7e2d31cc", "ids": "tb-smoke", "targets": OLD_WORKFLOW_TARGET}]
    }


def test_shards_by_spec_id_prints_one_line_per_shard(sharded: Path) -> None:
    done = run(sharded, "shards", "--shards", "3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(": tb-smoke\n") and done.stdout.count("\n") == 1


def test_shards_set_in_the_settings_split_by_spec_id_with_no_flag(sharded: Path) -> None:
    settings = sharded / "reconciler.toml"
    settings.write_text(settings.read_text().replace("# shards = 4", "shards = 4"))
    done = run(sharded, "shards", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith('{"include":[{"shard":"shard-') and '"ids":"tb-smoke"' in done.stdout


def test_an_older_sharded_workflow_reading_matrix_targets_stops_and_says_what_to_change(sharded: Path) -> None:
    # an older scaffold split `matrix.targets` on spaces (`read -r -a`) and read its first line only
    [entry] = json.loads(run(sharded, "shards", "--format", "json").stdout)["include"]
    args = [arg for word in entry["targets"].split() for arg in ("--target", word)]
    done = run(sharded, "reconcile", *args)
    assert done.returncode == 64, done.stdout + done.stderr
    assert "`matrix.ids`" in done.stderr and "Nothing was done" in done.stderr
    assert not (sharded / ".reconciler/state.json").exists()


def test_shards_github_output_outside_actions_says_what_is_missing(sharded: Path) -> None:
    done = run(sharded, "shards", "--format", "json", "--github-output")
    assert done.returncode != 0
    assert "--github-output needs GITHUB_OUTPUT" in done.stderr and "Traceback" not in done.stderr


def test_merging_a_missing_shard_state_names_it_and_writes_nothing(sharded: Path) -> None:
    done = run(sharded, "shards", "--merge-state", "shard-a/state.json")
    assert done.returncode != 0
    assert "state file(s) not found, nothing was merged: shard-a/state.json" in done.stderr
    assert not (sharded / ".reconciler/state.json").exists()


def shard_state(sharded: Path) -> Path:
    shard = sharded / "shard-a.json"
    shard.write_text('{"version": 1, "specs": {"runs/x": {"run_id": "r-1", "run_name": "n-1", "fingerprint": "f"}}}\n')
    return shard


def test_merging_shard_states_waits_for_the_repository_lock(sharded: Path) -> None:
    from reconciler.engine.lock import repository_lock

    shard = shard_state(sharded)
    with repository_lock(sharded / ".reconciler/lock"):
        done = run(sharded, "shards", "--merge-state", str(shard))
    assert done.returncode == 1 and "another reconciler holds the lock" in done.stderr
    assert not (sharded / ".reconciler/state.json").exists()
    assert run(sharded, "shards", "--merge-state", str(shard)).returncode == 0


def test_merging_shard_states_never_writes_through_a_symlinked_state_folder(sharded: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (sharded / ".reconciler").symlink_to(outside, target_is_directory=True)
    done = run(sharded, "shards", "--merge-state", str(shard_state(sharded)))
    assert done.returncode == 1 and "is a symlink" in done.stderr and "Traceback" not in done.stderr
    assert list(outside.iterdir()) == []


def test_render_waits_for_the_repository_lock(scaffolded: Path) -> None:
    """render writes the state file too: beside an apply it would save an older copy over the new one."""
    from reconciler.engine.lock import repository_lock

    with repository_lock(scaffolded / ".reconciler/lock"):
        done = run(scaffolded, "render")
        checked = run(scaffolded, "render", "--check")
    assert done.returncode == 1 and "another reconciler holds the lock" in done.stderr
    assert not (scaffolded / ".reconciler/state.json").exists()
    assert "holds the lock" not in checked.stderr  # --check writes nothing and takes no lock


def test_the_scaffold_pushed_unchanged_warns_that_actions_talk_to_a_simulated_platform(scaffolded: Path) -> None:
    env = clean_env() | {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_REPOSITORY": "acme/evals"}
    done = subprocess.run(
        [RECONCILER, "plan", "--format", "json"], cwd=scaffolded, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith('::warning title=reconciler%3A local platform::platform = "local"')
    assert "nothing reaches Osmosis" in done.stderr
    assert json.loads(done.stdout)["has_changes"] is True  # stdout stays the JSON document


def test_outside_actions_the_local_platform_is_not_warned_about(scaffolded: Path) -> None:
    assert "::warning" not in run(scaffolded, "plan").stderr


def test_init_keeps_the_bytes_of_a_gitignore_that_is_not_utf8(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_bytes(b"secret-caf\xe9.txt\n*.log\n")
    done = run(tmp_path, "init")
    assert done.returncode == 0, done.stderr
    kept = (tmp_path / ".gitignore").read_bytes()
    assert kept.startswith(b"secret-caf\xe9.txt\n*.log\n") and b".osmosis/\n" in kept


def test_init_sharded_switches_a_workflow_another_version_scaffolded(scaffolded: Path) -> None:
    from reconciler import __version__

    workflow = scaffolded / ".github/workflows/reconcile.yml"
    workflow.write_text(workflow.read_text().replace(f'"{__version__}"', '"0.0.9"'))
    done = run(scaffolded, "init", "--sharded")
    assert "switched .github/workflows/reconcile.yml" in done.stdout, done.stdout + done.stderr
