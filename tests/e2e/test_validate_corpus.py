"""`reconciler validate` against the hand-written corpus in tests/corpus.

Every file in `tests/corpus/bad/` has an entry in `tests/corpus/expected.toml` listing, as read from
the file by a person, every line the validator must print for it: the line, the dotted key and a
fragment of the message. Each file is copied into a fresh directory and validated there, so the
printed paths are just the file name.

Most cases run in-process through click's `CliRunner` (fast); the tests marked `slow` start the real
command in a subprocess to pin down what only a process shows: its exit status and its stderr.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from reconciler.cli import root
from reconciler.errors import CommandExit

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
BAD = CORPUS / "bad"
GOOD = CORPUS / "good"

# `file:line:col: key: [warning: ]message`
DIAGNOSTIC = re.compile(
    r"^(?P<file>[^:\s]+):(?P<line>\d+):(?P<col>\d+): (?P<key>\S+): (?P<warning>warning: )?(?P<message>.+)$"
)


@dataclass(frozen=True)
class Problem:
    line: int
    key: str
    text: str
    col: int | None = None
    warning: bool = False


@dataclass(frozen=True)
class Case:
    name: str
    exit: int
    problems: tuple[Problem, ...]
    never_shown: str | None = None

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if not p.warning]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.warning]


def _load_cases() -> dict[str, Case]:
    table = tomllib.loads((CORPUS / "expected.toml").read_text(encoding="utf-8"))
    return {
        name: Case(
            name=name,
            exit=entry.get("exit", 1),
            problems=tuple(Problem(**p) for p in entry["problems"]),
            never_shown=entry.get("never_shown"),
        )
        for name, entry in table.items()
    }


CASES = _load_cases()
GOOD_FILES = sorted(p.name for p in GOOD.glob("*.toml"))

CASE_PARAMS = [pytest.param(case, id=name) for name, case in sorted(CASES.items())]


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str = ""
    lines: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.lines = [m.groupdict() for m in map(DIAGNOSTIC.match, self.stdout.splitlines()) if m]

    def at(self, file: str, problem: Problem) -> list[dict[str, Any]]:
        """The printed diagnostics of `file` that match `problem`'s line, key and kind."""
        return [
            d
            for d in self.lines
            if d["file"] == file
            and int(d["line"]) == problem.line
            and d["key"] == problem.key
            and bool(d["warning"]) == problem.warning
        ]


def validate(*args: str, env: dict[str, str | None] | None = None) -> Outcome:
    """Run `reconciler validate ARGS` in-process, in the current directory."""
    result = CliRunner().invoke(root, ["validate", *args], env={"GITHUB_ACTIONS": None, **(env or {})})
    # A crash would surface here as an exception other than the command's own exit, which
    # `cli.main` turns into the process's exit code (CliRunner calls the group, not main).
    if isinstance(result.exception, CommandExit):
        return Outcome(result.exception.exit_code, result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return Outcome(result.exit_code, result.stdout, result.stderr)


def validate_process(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real command in a child process, with tracebacks switched on for internal errors."""
    child_env = {k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"}
    child_env.update({"RECONCILER_DEBUG": "1", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "validate", *args],
        cwd=cwd,
        env=child_env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory with no reconciler.toml or git above it, as the current directory."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def stage(name: str, into: Path, source: Path = BAD) -> str:
    shutil.copyfile(source / name, into / name)
    return name


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# --- the corpus itself ---------------------------------------------------------------------------


def test_every_bad_file_has_an_expectation_and_every_expectation_a_file() -> None:
    assert sorted(p.name for p in BAD.iterdir()) == sorted(CASES)


def test_corpus_has_at_least_45_failing_cases() -> None:
    assert sum(1 for case in CASES.values() if case.exit == 1) >= 45


def test_every_expectation_names_at_least_one_problem() -> None:
    assert all(case.problems for case in CASES.values())


# --- one bad file at a time ----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_bad_spec_exits_with_the_expected_code(case: Case, workdir: Path) -> None:
    outcome = validate(stage(case.name, workdir))
    assert outcome.exit_code == case.exit, outcome.stdout


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_each_expected_problem_is_reported_at_its_line_and_key(case: Case, workdir: Path) -> None:
    outcome = validate(stage(case.name, workdir))
    for problem in case.problems:
        found = outcome.at(case.name, problem)
        assert found, f"expected {case.name}:{problem.line}: {problem.key}: ... in\n{outcome.stdout}"
        assert any(problem.text in d["message"] for d in found), (problem.text, outcome.stdout)
        if problem.col is not None:
            assert [int(d["col"]) for d in found] == [problem.col], outcome.stdout


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_nothing_but_the_expected_problems_is_reported_each_once(case: Case, workdir: Path) -> None:
    outcome = validate(stage(case.name, workdir))
    printed = Counter((int(d["line"]), d["key"], bool(d["warning"])) for d in outcome.lines)
    expected = Counter((p.line, p.key, p.warning) for p in case.problems)
    assert printed == expected, outcome.stdout


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_summary_line_counts_errors_warnings_and_files(case: Case, workdir: Path) -> None:
    outcome = validate(stage(case.name, workdir))
    summary = outcome.stdout.splitlines()[-1]
    if case.errors:
        assert summary.startswith(
            f"{_plural(len(case.errors), 'error')}, {_plural(len(case.warnings), 'warning')} in 1 file;"
        ), summary
    else:
        assert summary.startswith(f"1 spec valid ({_plural(len(case.warnings), 'warning')})"), summary


@pytest.mark.parametrize("case", [pytest.param(c, id=n) for n, c in sorted(CASES.items()) if c.never_shown])
@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_pasted_credential_is_never_printed_in_full(case: Case, fmt: str, workdir: Path) -> None:
    name = stage(case.name, workdir)
    if fmt == "json":
        outcome = validate("--format", "json", name)
    else:
        outcome = validate(name, env={"GITHUB_ACTIONS": "true"} if fmt == "github" else None)
    assert case.never_shown
    assert case.never_shown not in outcome.stdout + outcome.stderr
    # a long tail of it would be as bad as the whole value
    assert case.never_shown[-12:] not in outcome.stdout + outcome.stderr


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("pasted-openai-key-in-api-key-secret.toml", "sk-… (40 chars)"),
        ("pasted-github-token-in-judge-secret.toml", "ghp… (41 chars)"),
    ],
)
def test_a_pasted_credential_is_named_by_a_redacted_prefix_and_its_length(name: str, shown: str, workdir: Path) -> None:
    outcome = validate(stage(name, workdir))
    assert shown in outcome.stdout


# --- good files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", GOOD_FILES)
def test_good_spec_is_valid_without_warnings(name: str, workdir: Path) -> None:
    outcome = validate(stage(name, workdir, GOOD))
    assert (outcome.exit_code, outcome.lines) == (0, []), outcome.stdout
    assert outcome.stdout.startswith("1 spec valid (0 warnings)")


def test_official_smoke_example_is_in_the_good_corpus() -> None:
    assert tomllib.loads((GOOD / "official-smoke.toml").read_text(encoding="utf-8")) == {
        "experiment": {"benchmark": "terminal-bench-2-1"},
        "tasks": {"task_names": ["terminal-bench/git-multibranch"]},
        "agents": [
            {
                "harness": "codex",
                "model": {"type": "provider", "model": "openai/gpt-5.2", "api_key_secret": "OPENAI_API_KEY"},
            }
        ],
        "execution": {
            "attempts_per_task": 1,
            "max_concurrent_attempts": 1,
            "timeout_multiplier": 1.0,
            "max_retries": 0,
        },
    }


# --- paths that are not spec files ---------------------------------------------------------------


def test_a_directory_named_like_a_spec_is_reported_as_a_file_problem(workdir: Path) -> None:
    (workdir / "something.toml").mkdir()
    outcome = validate("something.toml")
    assert outcome.exit_code == 1
    assert [(d["file"], d["line"], d["key"]) for d in outcome.lines] == [("something.toml", "1", "(file)")]
    assert "is a directory" in outcome.lines[0]["message"]


def test_a_directory_named_like_a_spec_inside_a_specs_folder_is_reported(workdir: Path) -> None:
    (workdir / "specs" / "runs" / "oops.toml").mkdir(parents=True)
    stage("official-smoke.toml", workdir / "specs" / "runs", GOOD)
    outcome = validate("specs")
    assert outcome.exit_code == 1
    assert [(d["file"], d["key"]) for d in outcome.lines] == [("specs/runs/oops.toml", "(file)")]


def test_a_path_that_does_not_exist_is_reported(workdir: Path) -> None:
    outcome = validate("nowhere.toml")
    assert outcome.exit_code == 1
    assert [(d["file"], d["line"], d["key"]) for d in outcome.lines] == [("nowhere.toml", "1", "(file)")]


# --- several files, machine output, CI annotations, discovery -----------------------------------

SEVERAL = [
    "syntax-missing-equals.toml",
    "binary-file.toml",
    "unknown-key-in-agents-model-endpoint.toml",
    "pasted-openai-key-in-api-key-secret.toml",
    "model-key-redefined-in-env.toml",
    "hle-without-task-set.toml",
]


def test_several_files_in_one_run_report_the_problems_of_every_file(workdir: Path) -> None:
    names = [stage(name, workdir) for name in SEVERAL]
    stage("official-smoke.toml", workdir, GOOD)
    outcome = validate(*names, "official-smoke.toml")
    assert outcome.exit_code == 1
    for name in names:
        for problem in CASES[name].problems:
            assert outcome.at(name, problem), f"{name}:{problem.line}: {problem.key} missing from\n{outcome.stdout}"
    errors = sum(len(CASES[n].errors) for n in names)
    warnings = sum(len(CASES[n].warnings) for n in names)
    assert outcome.stdout.splitlines()[-1].startswith(
        f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} in {len(names) + 1} files;"
    )


def test_json_output_lists_every_error_and_warning_with_file_line_col_and_key(workdir: Path) -> None:
    names = [stage(name, workdir) for name in sorted(CASES)]
    outcome = validate("--format", "json", *names)
    doc = json.loads(outcome.stdout)
    assert outcome.exit_code == 1
    assert (doc["schema_version"], doc["valid"], doc["files"]) == (1, False, len(names))
    for entry in doc["errors"] + doc["warnings"]:
        assert set(entry) == {"file", "line", "col", "key", "message", "code", "hint"}
        assert isinstance(entry["col"], int) and entry["col"] >= 1
        assert entry["message"] and entry["code"]
    printed = Counter((e["file"], e["line"], e["key"]) for e in doc["errors"])
    expected = Counter((n, p.line, p.key) for n in names for p in CASES[n].errors)
    assert printed == expected
    assert [(w["file"], w["line"], w["key"]) for w in doc["warnings"]] == [
        (n, p.line, p.key) for n in names for p in CASES[n].warnings
    ]


def test_json_output_of_a_valid_spec_names_its_id(workdir: Path) -> None:
    outcome = validate("--format", "json", stage("official-smoke.toml", workdir, GOOD))
    doc = json.loads(outcome.stdout)
    assert outcome.exit_code == 0
    assert (doc["valid"], doc["errors"], doc["warnings"], doc["files"]) == (True, [], [], 1)
    assert doc["specs"] == {"runs": ["official-smoke"], "benchmarks": []}


def test_json_output_keeps_the_hint_of_a_secret_problem(workdir: Path) -> None:
    outcome = validate("--format", "json", stage("secret-name-lowercase.toml", workdir))
    (error,) = json.loads(outcome.stdout)["errors"]
    assert "osmosis secret set OPENAI_API_KEY" in error["hint"]


def test_under_github_actions_every_problem_also_gets_an_annotation(workdir: Path) -> None:
    names = [stage(n, workdir) for n in ("schema-error-and-pasted-key-together.toml", "hle-without-task-set.toml")]
    outcome = validate(*names, env={"GITHUB_ACTIONS": "true"})
    annotations = [line for line in outcome.stdout.splitlines() if line.startswith("::")]
    for name in names:
        for problem in CASES[name].problems:
            level = "warning" if problem.warning else "error"
            pattern = re.compile(
                rf"^::{level} file={re.escape(name)},line={problem.line},col=\d+(,title=[^:]*)?::{re.escape(problem.key)}: "
            )
            assert [a for a in annotations if pattern.match(a)], (pattern.pattern, annotations)
    assert len(annotations) == len(outcome.lines) == 3


def test_outside_github_actions_there_are_no_annotations(workdir: Path) -> None:
    outcome = validate(stage("schema-error-and-pasted-key-together.toml", workdir))
    assert not [line for line in outcome.stdout.splitlines() if line.startswith("::")]


def _project(workdir: Path, settings: str = 'specs_dir = "specs"\n') -> None:
    (workdir / "reconciler.toml").write_text(settings, encoding="utf-8")
    (workdir / "specs" / "runs").mkdir(parents=True)
    (workdir / "specs" / "benchmarks").mkdir()
    (workdir / "elsewhere").mkdir()


def test_without_paths_every_spec_under_the_specs_dir_is_validated(workdir: Path) -> None:
    _project(workdir)
    stage("official-smoke.toml", workdir / "specs" / "runs", GOOD)
    stage("benchmark-spec.toml", workdir / "specs" / "benchmarks", GOOD)
    stage("unknown-harness.toml", workdir / "specs" / "runs")
    stage("model-unknown-type.toml", workdir / "specs")
    stage("nine-agents.toml", workdir / "elsewhere")  # outside specs/: not validated
    outcome = validate()
    assert outcome.exit_code == 1
    assert sorted((d["file"], int(d["line"]), d["key"]) for d in outcome.lines) == [
        ("specs/model-unknown-type.toml", 9, "agents[0].model.type"),
        ("specs/runs/unknown-harness.toml", 6, "agents[0].harness"),
    ]
    assert outcome.stdout.splitlines()[-1].startswith("2 errors, 0 warnings in 4 files;")


def test_without_paths_a_configured_specs_dir_is_used(workdir: Path) -> None:
    _project(workdir, 'specs_dir = "elsewhere"\n')
    stage("unknown-harness.toml", workdir / "specs" / "runs")
    stage("official-smoke.toml", workdir / "elsewhere", GOOD)
    outcome = validate()
    assert (outcome.exit_code, outcome.lines) == (0, [])
    assert outcome.stdout.startswith("1 spec valid")


def test_without_paths_a_run_from_a_subdirectory_finds_the_project_root(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(workdir)
    stage("unknown-harness.toml", workdir / "specs" / "runs")
    monkeypatch.chdir(workdir / "specs" / "runs")
    outcome = validate()
    assert [(d["file"], d["key"]) for d in outcome.lines] == [("specs/runs/unknown-harness.toml", "agents[0].harness")]


# --- the real process ----------------------------------------------------------------------------


@pytest.mark.slow
def test_the_process_exits_1_and_prints_problems_on_stdout(tmp_path: Path) -> None:
    name = stage("pasted-github-token-in-judge-secret.toml", tmp_path)
    proc = validate_process(tmp_path, name)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"{name}:16:1: execution.judge_api_key_secret: holds what looks like a credential")
    assert proc.stderr == ""


@pytest.mark.slow
def test_the_console_script_exits_0_for_the_official_smoke_example(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("reconciler")
    name = stage("official-smoke.toml", tmp_path, GOOD)
    proc = subprocess.run([script, "validate", name], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "1 spec valid (0 warnings); next: `reconciler plan`\n"


@pytest.mark.slow
def test_no_corpus_file_makes_the_process_crash_or_print_a_traceback(tmp_path: Path) -> None:
    names = [stage(name, tmp_path) for name in sorted(CASES)]
    (tmp_path / "something.toml").mkdir()
    proc = validate_process(tmp_path, *names, "something.toml")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr == ""
    files_reported = {m["file"] for m in map(DIAGNOSTIC.match, proc.stdout.splitlines()) if m}
    assert files_reported == {*names, "something.toml"}


@pytest.mark.slow
def test_the_process_prints_annotations_under_github_actions(tmp_path: Path) -> None:
    name = stage("task-set-not-parity.toml", tmp_path)
    proc = validate_process(tmp_path, name, env={"GITHUB_ACTIONS": "true"})
    assert proc.returncode == 1
    assert re.search(rf"^::error file={re.escape(name)},line=6,col=1\b.*::tasks\.task_set: ", proc.stdout, re.M)
