"""The GitHub workflows and the composite action: their `run:` steps, as written, in a temp clone.

How a job runs here (a small stand-in for GitHub's runner):

- The clone: this checkout's files (tracked and untracked-but-not-ignored, so uncommitted workflow
  edits are what is tested) are committed on `main` in a bare repository `origin.git`, which is
  cloned to `work/`. `reconciler.toml` there says `platform = "local"`: the embedded platform
  runs in-process over `work/.osmosis/`, with no server.
- Steps run in order, each as `bash --noprofile --norc -eo pipefail SCRIPT` (what `shell: bash`
  means on GitHub's Linux runners) in `work/`, with the workflow's, job's and step's `env:`.
  Their `${{ }}` expressions are evaluated from a small table (github.token, github.repository,
  secrets.*, inputs.*); an expression outside it fails the test. `run:` scripts themselves must
  hold no expression at all (inputs reach the shell only through `env:`).
- `if:` is honoured for the two forms used: none (run while everything passed) and `!cancelled()`.
- `uses:` steps are skipped: the clone is the checkout and this interpreter is the Python.
- The step named "Install reconciler" (`pip install .`) is replaced by the package already
  installed in this virtualenv: its `bin/` comes first on PATH, so `reconciler` is this checkout.
- GITHUB_* variables are set as Actions sets them: GITHUB_ACTIONS, GITHUB_WORKSPACE,
  GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, GITHUB_EVENT_NAME, GITHUB_EVENT_PATH (a pull_request,
  push or workflow_dispatch payload), GITHUB_REPOSITORY, GITHUB_RUN_ID, GITHUB_API_URL (the
  fake GitHub API from tests/github_fake.py) and GITHUB_TOKEN where the YAML passes it.

ci.yml's one step (`bash scripts/test.sh`, the whole suite) is checked, not run: running the
suite inside itself would recurse.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.github.comments import PLAN_MARKER
from reconciler.specs.spec_ids import spec_id_problem
from tests.git_cli import git
from tests.github_fake import FakeGitHub
from tests.served_platform import served

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WORKFLOWS = ROOT / ".github" / "workflows"
SHARDED = ROOT / "reconciler" / "scaffold" / "workflows" / "reconcile-sharded.yml"
SCAFFOLDED_RECONCILE = ROOT / "reconciler" / "scaffold" / "workflows" / "reconcile.yml"
ACTION = ROOT / ".github" / "actions" / "reconcile" / "action.yml"
REPO, PR = "acme/evals", 5
EDITED_MODEL = "anthropic/claude-opus-4"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load(path: Path) -> dict[Any, Any]:  # yaml reads the key `on` as True
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


# --- the runner stand-in ----------------------------------------------------------------------


@dataclass
class StepResult:
    name: str
    code: int | None  # None: skipped
    stdout: str
    stderr: str


@dataclass
class Job:
    workspace: Path
    event_name: str
    event: dict[str, Any]
    github: FakeGitHub
    inputs: dict[str, Any] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    results: list[StepResult] = field(default_factory=list)
    context: dict[str, str] = field(default_factory=dict)  # more expressions: matrix.*, runner.temp

    @property
    def runner_dir(self) -> Path:
        return self.workspace.parent / "runner"

    def expression(self, expr: str) -> str:
        table: dict[str, Any] = {
            "github.token": self.github.token,
            "github.repository": REPO,
            "github.event_name": self.event_name,
        }
        if expr in self.context:
            return self.context[expr]
        if expr in table:
            return str(table[expr])
        if expr.startswith("secrets."):
            return self.secrets.get(expr.removeprefix("secrets."), "")
        if expr.startswith("inputs."):
            value = self.inputs.get(expr.removeprefix("inputs."), "")
            return str(value).lower() if isinstance(value, bool) else str(value)
        raise AssertionError(f"the test runner does not know the expression {expr!r}")

    def evaluate(self, text: Any) -> str:
        return EXPRESSION.sub(lambda m: self.expression(m.group(1)), str(text))

    def base_env(self) -> dict[str, str]:
        self.runner_dir.mkdir(exist_ok=True)
        event_path = self.runner_dir / "event.json"
        event_path.write_text(json.dumps(self.event))
        keep = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_", "RUNNER_")) and k not in ("CI",)
        }
        return keep | {
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(self.runner_dir / "output"),
            "GITHUB_STEP_SUMMARY": str(self.runner_dir / "summary.md"),
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_RUN_ID": "1001",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_API_URL": self.github.url,
        }

    def run_steps(self, steps: list[dict[str, Any]], env: Mapping[str, str]) -> list[StepResult]:
        failed = False
        for step in steps:
            name = step.get("name") or step.get("uses") or step.get("run", "")[:40]
            condition = str(step.get("if", "")).strip()
            if condition not in ("", "${{ !cancelled() }}"):
                raise AssertionError(f"the test runner does not know the condition {condition!r}")
            if "uses" in step or name == "Install reconciler" or (failed and not condition):
                self.results.append(StepResult(name, None, "", ""))
                continue
            assert "${{" not in step["run"], f"step {name!r} expands an expression inside run:"
            step_env = {**env, **{k: self.evaluate(v) for k, v in step.get("env", {}).items()}}
            (self.runner_dir / "output").write_text("")  # GitHub gives each step a fresh GITHUB_OUTPUT file
            script = self.runner_dir / "step.sh"
            script.write_text(step["run"])
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=self.workspace,
                env=step_env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            self.results.append(StepResult(name, done.returncode, done.stdout, done.stderr))
            failed = failed or done.returncode != 0
        return self.results

    def run_workflow(self, path: Path) -> list[StepResult]:
        workflow = load(path)
        env = self.base_env() | {k: self.evaluate(v) for k, v in workflow.get("env", {}).items()}
        for job in workflow["jobs"].values():
            job_env = env | {k: self.evaluate(v) for k, v in job.get("env", {}).items()}
            self.run_steps(job["steps"], job_env)
        return self.results

    def run_action(self, path: Path, inputs: dict[str, str]) -> list[StepResult]:
        action = load(path)
        defaults = {k: self.evaluate(v.get("default", "")) for k, v in action["inputs"].items()}
        self.inputs = defaults | inputs
        return self.run_steps(action["runs"]["steps"], self.base_env())

    def step(self, name: str) -> StepResult:
        [result] = [r for r in self.results if r.name == name]
        return result

    def outputs(self) -> dict[str, str]:
        text = (self.runner_dir / "output").read_text()
        out, lines, i = {}, text.split("\n"), 0
        while i < len(lines) and lines[i]:
            key, delimiter = lines[i].split("<<", 1)
            end = lines.index(delimiter, i + 1)
            out[key] = "\n".join(lines[i + 1 : end])
            i = end + 1
        return out

    def summary(self) -> str:
        return (self.runner_dir / "summary.md").read_text()


def explain(results: list[StepResult]) -> str:
    return "\n".join(f"--- {r.name}: {r.code}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}" for r in results)


# --- fixtures ---------------------------------------------------------------------------------


def checkout_files() -> list[str]:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sorted(p for p in out.split("\0") if p and (ROOT / p).is_file())


@pytest.fixture(scope="module")
def origin_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare `origin.git` holding this checkout's files as one commit on main."""
    base = tmp_path_factory.mktemp("origin")
    src = base / "src"
    for rel in checkout_files():
        target = src / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    settings = (src / "reconciler.toml").read_text()
    assert re.search(r'^platform = "local"$', settings, re.MULTILINE), "the clone must run on the local platform"
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "this repository")
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(base / "origin.git")], check=True)
    return base / "origin.git"


@pytest.fixture
def origin(origin_template: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "origin.git"
    shutil.copytree(origin_template, copy)
    return copy


@pytest.fixture
def work(origin: Path, tmp_path: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(origin), str(tmp_path / "work")], check=True)
    return tmp_path / "work"


def open_pull_request(work: Path, edit: Any = None) -> dict[str, Any]:
    """A branch that changes agents[1].model.model of tb-compare, and its pull_request event."""
    git(work, "checkout", "-q", "-b", "change-model")
    spec = work / "specs/runs/tb-compare.toml"
    text = spec.read_text()
    assert text.count('model = "anthropic/claude-sonnet-4"') == 1
    spec.write_text(text.replace('model = "anthropic/claude-sonnet-4"', f'model = "{EDITED_MODEL}"'))
    if edit is not None:
        edit(work)
    git(work, "commit", "-q", "-am", "try another model")
    head = git(work, "rev-parse", "HEAD")
    return {
        "action": "synchronize",
        "number": PR,
        "pull_request": {"number": PR, "base": {"ref": "main"}, "head": {"ref": "change-model", "sha": head}},
    }


def pr_job(work: Path, github: FakeGitHub, edit: Any = None) -> Job:
    return Job(work, "pull_request", open_pull_request(work, edit), github)


# --- the plan workflow -------------------------------------------------------------------------

DIFF_LINE = f"agents[1].model.model: anthropic/claude-sonnet-4 -> {EDITED_MODEL}"


def test_plan_workflow_steps_succeed_with_changes_pending(work: Path, github: FakeGitHub) -> None:
    job = pr_job(work, github)
    results = job.run_workflow(WORKFLOWS / "plan.yml")
    assert [(r.name, r.code) for r in results if r.code is not None] == [("Validate", 0), ("Plan", 0)], explain(results)
    assert "changes pending" in job.step("Plan").stdout


def test_plan_workflow_posts_one_comment_with_the_field_diff(work: Path, github: FakeGitHub) -> None:
    job = pr_job(work, github)
    job.run_workflow(WORKFLOWS / "plan.yml")
    [comment] = github.comments(REPO, PR)
    assert str(comment["body"]).startswith(PLAN_MARKER)
    assert DIFF_LINE in str(comment["body"]), explain(job.results)


def test_plan_workflow_updates_its_comment_on_the_next_push(work: Path, github: FakeGitHub) -> None:
    pr_job(work, github).run_workflow(WORKFLOWS / "plan.yml")
    again = Job(work, "pull_request", json.loads((work.parent / "runner/event.json").read_text()), github)
    again.run_workflow(WORKFLOWS / "plan.yml")
    assert len(github.comments(REPO, PR)) == 1
    assert (len(github.calls("POST")), len(github.calls("PATCH"))) in ((1, 0), (1, 1))


def test_plan_workflow_writes_the_full_plan_to_the_job_summary(work: Path, github: FakeGitHub) -> None:
    job = pr_job(work, github)
    job.run_workflow(WORKFLOWS / "plan.yml")
    summary = job.summary()
    assert summary.startswith("### reconciler plan")
    assert "#### Spec changes against `origin/main`" in summary and DIFF_LINE in summary


def test_plan_workflow_sets_the_step_outputs(work: Path, github: FakeGitHub) -> None:
    job = pr_job(work, github)
    job.run_workflow(WORKFLOWS / "plan.yml")
    outputs = job.outputs()
    assert (outputs["has_changes"], outputs["exitcode"]) == ("true", "2"), explain(job.results)
    assert int(outputs["paid_attempts"]) > 0
    assert set(outputs) == {"has_changes", "paid_attempts", "estimated_cost", "exitcode"}


def test_plan_workflow_with_an_invalid_spec_fails_and_says_so_on_the_pull_request(
    work: Path, github: FakeGitHub
) -> None:
    def break_spec(root: Path) -> None:
        smoke = root / "specs/runs/tb-smoke.toml"
        smoke.write_text(
            smoke.read_text().replace('api_key_secret = "OPENAI_API_KEY"', 'api_key_secret = "openai key"')
        )

    job = pr_job(work, github, break_spec)
    results = job.run_workflow(WORKFLOWS / "plan.yml")
    assert [(r.name, r.code) for r in results if r.code is not None] == [("Validate", 1), ("Plan", 1)]
    assert "::error file=specs/runs/tb-smoke.toml,line=" in job.step("Plan").stdout
    [comment] = github.comments(REPO, PR)
    assert "validation failed" in str(comment["body"])


# --- the reconcile workflow --------------------------------------------------------------------


def test_reconcile_workflow_on_push_commits_and_pushes_to_main(work: Path, origin: Path, github: FakeGitHub) -> None:
    before = git(origin, "rev-parse", "main")
    job = Job(work, "push", {"ref": "refs/heads/main", "after": before}, github)
    results = job.run_workflow(WORKFLOWS / "reconcile.yml")
    assert job.step("Reconcile").code == 0, explain(results)
    assert git(origin, "rev-parse", "main") == git(work, "rev-parse", "HEAD")
    assert git(origin, "rev-parse", "main") != before, explain(results)


def test_reconcile_workflow_dispatched_for_targets_reconciles_only_those(
    work: Path, origin: Path, github: FakeGitHub
) -> None:
    job = Job(work, "workflow_dispatch", {"inputs": {"targets": "tb-smoke", "prune": False}}, github)
    job.inputs = {"targets": "tb-smoke", "prune": False}
    results = job.run_workflow(WORKFLOWS / "reconcile.yml")
    step = job.step("Reconcile")
    assert step.code == 0, explain(results)
    assert "submit   tb-smoke" in step.stdout and "tb-compare" not in step.stdout


# --- the sharded reconcile workflow (`reconciler init --sharded`) ------------------------------
#
# Each job runs in its own fresh clone, as on GitHub; the jobs share one platform (a served
# local platform, named by OSMOSIS_PLATFORM_URL). The stand-in skips `uses:` steps, so the
# upload-artifact / download-artifact pair is played by copying each shard's state file to
# where download-artifact puts it: `${{ runner.temp }}/shards/state-<shard>/state.json`.


@dataclass
class ShardedRun:
    origin: Path
    base: Path
    github: FakeGitHub
    url: str
    token: str
    jobs: dict[str, Any] = field(default_factory=lambda: load(SHARDED)["jobs"])

    def clone(self, name: str) -> Path:
        subprocess.run(["git", "clone", "-q", str(self.origin), str(self.base / name)], check=True)
        return self.base / name

    def job(self, name: str, workspace: Path, **context: str) -> Job:
        job = Job(workspace, "schedule", {"schedule": "*/30 * * * *"}, self.github)
        job.secrets = {"OSMOSIS_TOKEN": self.token}
        job.context = {"runner.temp": str(self.base / "runner-temp"), **context}
        env = job.base_env() | {"OSMOSIS_PLATFORM_URL": self.url, "OSMOSIS_WORKSPACE": "acme"}
        env |= {k: job.evaluate(v) for k, v in self.jobs[name].get("env", {}).items()}
        job.run_steps(self.jobs[name]["steps"], env)
        return job

    def hand_over_state(self, workspace: Path, shard: str) -> None:
        target = self.base / "runner-temp" / "shards" / f"state-{shard}" / "state.json"
        target.parent.mkdir(parents=True)
        shutil.copy(workspace / ".reconciler" / "state.json", target)

    def matrix(self) -> list[dict[str, str]]:
        """The `shards` job's matrix entries."""
        lister = self.job("shards", self.clone("lister"))
        assert lister.step("List shards").code == 0, explain(lister.results)
        include: list[dict[str, str]] = json.loads(lister.outputs()["matrix"])["include"]
        assert lister.outputs()["count"] == str(len(include))
        return include

    def reconcile_shards(self, include: list[dict[str, str]]) -> dict[str, set[str]]:
        """Each matrix job in turn, its state handed over: the spec ids each shard submitted."""
        submitted = {}
        for entry in include:
            workspace = self.clone(f"shard-{entry['shard']}")
            job = self.job("reconcile", workspace, **{"matrix.shard": entry["shard"], "matrix.ids": entry["ids"]})
            step = job.step("Reconcile shard")
            assert step.code == 0, explain(job.results)
            submitted[entry["shard"]] = set(SUBMITTED.findall(step.stdout))
            self.hand_over_state(workspace, entry["shard"])
        return submitted


SUBMITTED = re.compile(r"^ok\s+submit\s+(.+): submitted ", re.MULTILINE)


def add_specs(origin: Path, base: Path, names: list[str], settings: str = "") -> None:
    """Push a commit to origin's main with these run specs, each tb-smoke's config under its file
    name's id, and these lines added to reconciler.toml's top-level keys."""
    author = base / "author"
    subprocess.run(["git", "clone", "-q", str(origin), str(author)], check=True)
    toml = author / "reconciler.toml"
    toml.write_text(toml.read_text().replace('specs_dir = "specs"\n', f'specs_dir = "specs"\n{settings}\n'))
    smoke = (author / "specs/runs/tb-smoke.toml").read_text()
    assert smoke.count('id = "tb-smoke"\n') == 1
    for name in names:
        (author / "specs/runs" / f"{name}.toml").write_text(smoke.replace('id = "tb-smoke"\n', ""))
    git(author, "add", "-A")
    git(author, "commit", "-q", "-m", "more specs")
    git(author, "push", "-q", "origin", "main")


def test_sharded_reconcile_workflow_runs_two_shards_and_commits_once(
    origin: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    before = git(origin, "rev-parse", "main")
    with served(tmp_path / "platform") as (url, token):
        run = ShardedRun(origin, tmp_path, github, url, token)
        matrix = run.matrix()
        assert [e["shard"] for e in matrix] == ["hle-721c8aa9", "terminal-bench-2-1-7e2d31cc"]
        submitted = run.reconcile_shards(matrix)
        assert submitted == {e["shard"]: set(e["ids"].split("\n")) for e in matrix}
        assert all(git(tmp_path / f"shard-{e['shard']}", "rev-parse", "HEAD") == before for e in matrix)  # no commits
        final = run.job("commit", run.clone("final"))
    assert [(r.name, r.code) for r in final.results if r.code is not None] == [
        ("Merge shard state", 0),
        ("Render, report and commit", 0),
    ], explain(final.results)
    after = git(origin, "rev-parse", "main")
    assert git(origin, "rev-list", "--count", f"{before}..{after}") == "1"
    state = json.loads(git(origin, "show", f"{after}:.reconciler/state.json"))
    assert set(state["specs"]) == {"hle-parity", "tb-compare", "tb-smoke"}


def test_a_spec_id_with_a_space_is_reconciled_by_its_own_shard_alone(
    origin: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    """With targets split on spaces, `runs/smoke tb-smoke` in shard 0 targeted `runs/smoke` (shard 1's
    spec: two jobs submitted it, in two concurrency groups) and `tb-smoke`, and was never reconciled."""
    add_specs(origin, tmp_path, ["smoke", "smoke tb-smoke"], settings="shards = 2")
    with served(tmp_path / "platform") as (url, token):
        run = ShardedRun(origin, tmp_path, github, url, token)
        matrix = run.matrix()
        targets = {e["shard"]: e["ids"].split("\n") for e in matrix}
        assert "runs/smoke tb-smoke" in targets["shard-0-of-2"] and "runs/smoke" in targets["shard-1-of-2"]
        submitted = run.reconcile_shards(matrix)
    assert submitted == {shard: set(ids) for shard, ids in targets.items()}
    everything = [i for ids in targets.values() for i in ids]
    assert sorted(everything) == ["hle-parity", "runs/smoke", "runs/smoke tb-smoke", "tb-compare", "tb-smoke"]


def test_sharded_workflow_gives_each_shard_its_own_concurrency_group() -> None:
    jobs = load(SHARDED)["jobs"]
    assert jobs["reconcile"]["concurrency"] == {
        "group": "reconcile-${{ github.repository }}-${{ matrix.shard }}",
        "cancel-in-progress": False,
    }
    assert jobs["reconcile"]["needs"] == "shards"
    assert jobs["commit"]["needs"] == ["shards", "reconcile"]
    assert {name: job["permissions"] for name, job in jobs.items()} == {
        "shards": {"contents": "read"},
        "reconcile": {"contents": "read"},
        "commit": {"contents": "write", "pull-requests": "write", "statuses": "write"},
    }


@pytest.mark.parametrize(
    "workflow",
    [WORKFLOWS / "reconcile.yml", SCAFFOLDED_RECONCILE, SHARDED],
    ids=["this-repository", "scaffolded", "scaffolded-sharded"],
)
def test_the_reconcile_workflows_are_dispatched_only_on_the_default_branch(workflow: Path) -> None:
    # a dispatch from another branch would submit from specs no one reviewed, with the token
    jobs = load(workflow)["jobs"]
    first = next(iter(jobs.values()))
    assert first["if"] == (
        "github.event_name != 'workflow_dispatch'"
        " || github.ref == format('refs/heads/{0}', github.event.repository.default_branch)"
    )
    assert all("needs" in job for job in list(jobs.values())[1:])  # the others wait on it, and skip with it


def test_every_run_of_the_sharded_workflow_splits_the_specs_alike() -> None:
    # a dispatch input that split by id while the schedule split by benchmark put one spec in two
    # concurrency groups at once, and both jobs submitted it: the split is reconciler.toml's alone
    workflow = load(SHARDED)
    triggers: dict[str, Any] = workflow["on"] if "on" in workflow else workflow[True]  # YAML 1.1 reads `on` as True
    assert not (triggers["workflow_dispatch"] or {}).get("inputs")
    [listing] = [s for s in workflow["jobs"]["shards"]["steps"] if s.get("name") == "List shards"]
    assert listing["run"].strip() == "reconciler shards --format json --github-output" and "env" not in listing


# --- the composite action ----------------------------------------------------------------------


def test_the_composite_action_plans_a_pull_request(work: Path, github: FakeGitHub) -> None:
    job = pr_job(work, github)
    results = job.run_action(ACTION, {"command": "plan"})
    assert job.step("Run reconciler").code == 0, explain(results)
    assert DIFF_LINE in str(github.comments(REPO, PR)[0]["body"])
    assert job.outputs()["has_changes"] == "true"


def test_the_composite_action_fails_a_plan_with_a_blocked_spec(work: Path, github: FakeGitHub) -> None:
    def block_smoke(root: Path) -> None:
        smoke = root / "specs/runs/tb-smoke.toml"
        smoke.write_text(
            smoke.read_text().replace('api_key_secret = "OPENAI_API_KEY"', 'api_key_secret = "NO_SUCH_KEY"')
        )

    job = pr_job(work, github, block_smoke)
    results = job.run_action(ACTION, {"command": "plan"})
    assert job.step("Run reconciler").code == 3, explain(results)
    assert "some specs are blocked" in job.step("Run reconciler").stdout


def test_the_composite_action_fails_a_plan_with_an_unknown_target(work: Path, github: FakeGitHub) -> None:
    job = pr_job(work, github)
    results = job.run_action(ACTION, {"command": "plan", "targets": "typo"})
    assert job.step("Run reconciler").code == 64, explain(results)


# --- what the YAML promises --------------------------------------------------------------------


def all_run_steps() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for job in load(path)["jobs"].values():
            out += [(path.name, s) for s in job["steps"] if "run" in s]
    out += [(ACTION.name, s) for s in load(ACTION)["runs"]["steps"] if "run" in s]
    return out


def test_no_run_script_expands_an_expression() -> None:
    offenders = [(where, s.get("name")) for where, s in all_run_steps() if "${{" in s["run"]]
    assert offenders == []


def test_the_composite_action_passes_every_input_through_env() -> None:
    action = load(ACTION)
    used = set()
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", "")
        if "run" in step:
            assert step["shell"] == "bash"
        for value in [*step.get("env", {}).values(), *step.get("with", {}).values()]:
            used.update(re.findall(r"inputs\.([\w-]+)", str(value)))
    assert used == set(action["inputs"])


def test_the_composite_action_scripts_pass_shellcheck(tmp_path: Path) -> None:
    for i, step in enumerate(s for s in load(ACTION)["runs"]["steps"] if "run" in s):
        script = tmp_path / f"step{i}.sh"
        script.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + step["run"])
        done = subprocess.run([str(BIN / "shellcheck"), str(script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout


def test_ci_runs_the_readme_test_command() -> None:
    [job] = load(WORKFLOWS / "ci.yml")["jobs"].values()
    runs = [s["run"] for s in job["steps"] if "run" in s]
    assert runs == ["bash scripts/test.sh"]
    assert "bash scripts/test.sh" in (ROOT / "README.md").read_text()


def test_every_workflow_uses_python_3_11() -> None:
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for job in load(path)["jobs"].values():
            [setup] = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/setup-python@")]
            assert setup["with"]["python-version"] == "3.11", path.name


def test_plan_workflow_has_one_cancelling_group_per_pull_request() -> None:
    workflow = load(WORKFLOWS / "plan.yml")
    assert workflow["concurrency"] == {
        "group": "plan-${{ github.event.pull_request.number }}",
        "cancel-in-progress": True,
    }
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert workflow[True]["pull_request"]["paths"][:2] == ["specs/**", "templates/**"]  # yaml reads `on` as True


def test_reconcile_workflow_never_cancels_a_running_apply() -> None:
    workflow = load(WORKFLOWS / "reconcile.yml")
    assert workflow["concurrency"] == {"group": "reconcile-${{ github.repository }}", "cancel-in-progress": False}


def test_reconcile_workflow_grants_write_only_to_the_committing_job() -> None:
    workflow = load(WORKFLOWS / "reconcile.yml")
    assert workflow["permissions"] == {}
    assert {name: job.get("permissions") for name, job in workflow["jobs"].items()} == {
        "reconcile": {"contents": "write", "pull-requests": "write", "statuses": "write"}
    }


def test_reconcile_workflow_triggers() -> None:
    on = load(WORKFLOWS / "reconcile.yml")[True]
    assert on["push"] == {"branches": ["main"], "paths": ["specs/**"]}
    assert on["schedule"] == [{"cron": "*/30 * * * *"}]
    assert set(on["workflow_dispatch"]["inputs"]) == {"targets", "prune", "replace"}
    assert on["workflow_dispatch"]["inputs"]["prune"]["type"] == "boolean"


def test_the_osmosis_token_comes_from_secrets() -> None:
    for name in ("plan.yml", "reconcile.yml"):
        [job] = load(WORKFLOWS / name)["jobs"].values()
        assert job["env"]["OSMOSIS_TOKEN"] == "${{ secrets.OSMOSIS_TOKEN }}"


def test_workflows_pass_actionlint() -> None:
    done = subprocess.run(
        [str(BIN / "actionlint")],
        cwd=ROOT,
        env=os.environ | {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout


def test_reconcile_workflow_dispatched_with_replace_submits_that_spec_again(
    work: Path, origin: Path, github: FakeGitHub
) -> None:
    first = Job(work, "workflow_dispatch", {"inputs": {"targets": "tb-smoke"}}, github)
    first.inputs = {"targets": "tb-smoke", "prune": False, "replace": ""}
    assert first.run_workflow(WORKFLOWS / "reconcile.yml") and first.step("Reconcile").code == 0
    again = Job(work, "workflow_dispatch", {"inputs": {"targets": "tb-smoke", "replace": "tb-smoke"}}, github)
    again.inputs = {"targets": "tb-smoke", "prune": False, "replace": "tb-smoke"}
    results = again.run_workflow(WORKFLOWS / "reconcile.yml")
    step = again.step("Reconcile")
    assert step.code == 0, explain(results)
    assert re.search(r"ok\s+(submit|replace)\s+tb-smoke: (stopped \S+; )?submitted", step.stdout), step.stdout


def reconcile_step_arguments(tmp_path: Path, inputs: dict[str, Any]) -> list[str]:
    """The arguments the reconcile workflow's Reconcile step gives `reconciler` for these dispatch
    inputs: its script, run with its env, in front of a `reconciler` that only records them (and
    calls no GitHub: the fake is never served)."""
    [job] = load(WORKFLOWS / "reconcile.yml")["jobs"].values()
    [step] = [s for s in job["steps"] if s.get("name") == "Reconcile"]
    dispatch = Job(tmp_path, "workflow_dispatch", {"inputs": inputs}, FakeGitHub(), inputs=inputs)
    stub = tmp_path / "bin" / "reconciler"
    stub.parent.mkdir(exist_ok=True)
    stub.write_text('#!/usr/bin/env bash\nprintf \'%s\\0\' "$@" > "$ARGUMENTS"\n')
    stub.chmod(0o755)
    env = {k: dispatch.evaluate(v) for k, v in step["env"].items()}
    env |= {"PATH": f"{stub.parent}{os.pathsep}{os.environ['PATH']}", "ARGUMENTS": str(tmp_path / "arguments")}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], env=env, text=True)
    assert done.returncode == 0
    return (tmp_path / "arguments").read_text().split("\0")[:-1]


def flag_values(arguments: list[str], flags: tuple[str, ...]) -> list[tuple[str, str]]:
    """(flag, value) for each of these flags, in order; a value is never read as a flag."""
    rest = iter(arguments)
    return [(a, next(rest)) for a in rest if a in flags]


def test_dispatch_inputs_are_spec_ids_separated_by_commas_each_passed_as_one_argument(tmp_path: Path) -> None:
    """Split on spaces, `replace: "runs/my run"` replaced `runs/my` (paid), a spec nobody named."""
    inputs = {"targets": " runs/my run,tb-smoke , ,", "replace": "runs/my run", "prune": False}
    arguments = reconcile_step_arguments(tmp_path, inputs)
    assert flag_values(arguments, ("--target", "--replace")) == [
        ("--target", "runs/my run"),
        ("--target", "tb-smoke"),
        ("--replace", "runs/my run"),
    ]


# any character, often one a list or a trim could take apart
ID_CHARACTERS = st.sampled_from([" ", ",", "\t", "\u00a0", "\u3000", "a", "/", "@"]) | st.characters()
VALID_IDS = st.text(ID_CHARACTERS, min_size=1, max_size=12).filter(lambda i: spec_id_problem(i) is None)


@settings(max_examples=40, deadline=None)
@given(st.lists(VALID_IDS, min_size=1, max_size=4))
def test_any_list_of_spec_ids_the_loader_accepts_reaches_reconciler_unchanged_through_the_replace_input(
    tmp_path_factory: pytest.TempPathFactory, ids: list[str]
) -> None:
    inputs = {"targets": "", "replace": " , ".join(ids), "prune": False}
    arguments = reconcile_step_arguments(tmp_path_factory.mktemp("step"), inputs)
    assert flag_values(arguments, ("--replace",)) == [("--replace", i) for i in ids]


def test_reconcile_workflow_dispatched_with_replace_of_an_id_with_a_space_replaces_that_spec_alone(
    origin: Path, work: Path, tmp_path: Path, github: FakeGitHub
) -> None:
    add_specs(origin, tmp_path, ["my", "my run"])
    git(work, "pull", "-q")

    def dispatch(inputs: dict[str, Any]) -> dict[str, str]:
        job = Job(work, "workflow_dispatch", {"inputs": inputs}, github, inputs=inputs | {"prune": False})
        results = job.run_workflow(WORKFLOWS / "reconcile.yml")
        assert job.step("Reconcile").code == 0, explain(results)
        specs = json.loads((work / ".reconciler/state.json").read_text())["specs"]
        return {spec: specs[spec]["run_id"] for spec in ("runs/my", "runs/my run")}

    first = dispatch({"targets": "runs/my, runs/my run", "replace": ""})
    again = dispatch({"targets": "runs/my, runs/my run", "replace": "runs/my run"})
    assert again["runs/my"] == first["runs/my"] and again["runs/my run"] != first["runs/my run"]


def test_a_job_that_fails_still_keeps_what_it_learned_about_run_owners() -> None:
    """`actions/cache` saves only when the whole job succeeds: a plan that exits 3 (blocked) or a
    reconcile that met a platform error would throw away every marker it read. Each job restores
    the owners cache first and saves it last, under the same key, whenever it was not cancelled."""
    scaffold = ROOT / "reconciler" / "scaffold" / "workflows"
    jobs = 0
    for path in [*sorted(WORKFLOWS.glob("*.yml")), *sorted(scaffold.glob("*.yml"))]:
        for name, job in load(path).get("jobs", {}).items():
            steps = job.get("steps", [])
            uses = [str(step.get("uses", "")) for step in steps]
            if not any(u.startswith("actions/cache") for u in uses):
                continue
            jobs += 1
            assert not any(u.startswith("actions/cache@") for u in uses), (path.name, name)
            restore = next(step for step in steps if str(step.get("uses", "")).startswith("actions/cache/restore@"))
            save = steps[-1]
            assert str(save.get("uses", "")).startswith("actions/cache/save@"), (path.name, name)
            assert save.get("if") == "${{ !cancelled() }}", (path.name, name)
            assert save["with"] == {"path": restore["with"]["path"], "key": restore["with"]["key"]}, (path.name, name)
    assert jobs == 7  # plan and reconcile, here and scaffolded, and the sharded workflow's three jobs


def test_each_job_saves_the_owners_cache_under_its_own_key() -> None:
    """actions/cache saves nothing on an exact key hit: jobs of one run sharing a key would leave
    what all but the first learned unsaved. Every job's key names the job (and its matrix entry)."""
    scaffold = ROOT / "reconciler" / "scaffold" / "workflows"
    keys = []
    for path in [*sorted(WORKFLOWS.glob("*.yml")), *sorted(scaffold.glob("*.yml"))]:
        for name, job in load(path).get("jobs", {}).items():
            for step in job.get("steps", []):
                if str(step.get("uses", "")).startswith("actions/cache") and "reconciler" in step["with"]["path"]:
                    keys.append((path.name, name, step["with"]["key"]))
    assert keys
    for where, job, key in keys:
        assert "${{ github.job }}" in key and "${{ strategy.job-index }}" in key, (where, job, key)


def test_the_composite_action_sets_the_plan_outputs_on_a_push_too(work: Path, github: FakeGitHub) -> None:
    """The outputs are documented for the action, not for pull requests: a caller gates apply on them."""
    job = Job(work, "push", {"ref": "refs/heads/main"}, github)
    results = job.run_action(ACTION, {"command": "plan"})
    assert job.step("Run reconciler").code == 0, explain(results)
    outputs = job.outputs()
    assert (outputs["has_changes"], outputs["exitcode"]) == ("true", "2"), explain(results)
    assert github.comments(REPO, PR) == []
