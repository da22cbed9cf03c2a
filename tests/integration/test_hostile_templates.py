"""A repository's own templates are code from whoever opens a pull request: they render sandboxed.

They cannot reach the environment, files or Python internals; what they cannot do is a clear
render error naming the template, and no token ever reaches what is posted to GitHub.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from reconciler.core.plan import Plan
from reconciler.errors import ConfigError
from reconciler.github.event import GitHubContext, PullRequestEvent
from reconciler.github.publish import publish_failure, publish_plan
from reconciler.render import sandbox
from reconciler.render.leaderboard import render_markdown as render_leaderboard
from reconciler.render.plan_markdown import render_markdown as render_plan
from tests.github_fake import FakeGitHub

REPO, PR = "acme/evals", 12
SECRET = "osm_live_9f8e7d6c5b4a39281706"
SPEC = Path(__file__).resolve().parents[1] / "corpus" / "good" / "official-smoke.toml"
STEAL = '{{ cycler.__init__.__globals__.os.environ["OSMOSIS_TOKEN"] }}'


@dataclass(frozen=True)
class Hostile:
    name: str
    template: str
    says: str


CASES = [
    Hostile("environ-through-cycler", STEAL, "access to attribute '__init__' of 'type' object is unsafe"),
    Hostile("environ-through-lipsum", "{{ lipsum.__globals__['os'].environ }}", "'__globals__'"),
    Hostile("subclasses-to-popen", "{{ ''.__class__.__mro__[1].__subclasses__() }}", "access to attribute '__class__'"),
    Hostile("mutating-a-value", "{% set x = [] %}{{ x.append(1) }}", "access to attribute 'append'"),
    Hostile(
        "read-through-symlink",
        '{% include "leak.txt" %}',
        "templates/leak.txt cannot be rendered: refusing to read templates/leak.txt: templates/leak.txt is a symlink",
    ),
    Hostile(
        "include-a-fifo",
        '{% include "pipe" %}',
        "templates/pipe cannot be rendered: refusing to read templates/pipe: it is not a regular file",
    ),
    Hostile("string-of-ten-gigabytes", "{{ 'x' * 10**10 }}", "a repetition longer than 100000 items"),
    Hostile("huge-power", "{{ 2 ** 100000000 }}", "an exponent above 1000"),
    Hostile("syntax-error", "{% if %}", "templates/plan.md.j2:1 cannot be rendered"),
    # whatever Python raises inside a template is the template's failure, at its line
    Hostile("division-by-zero", "ok\n{{ 1/0 }}", "templates/plan.md.j2:2 cannot be rendered: ZeroDivisionError"),
    Hostile("adding-a-number-to-text", '{{ "a" + 1 }}', "cannot be rendered: TypeError"),
    Hostile("sorting-mixed-types", '{{ [1, "a"]|sort }}', "cannot be rendered: TypeError"),
    Hostile("a-range-too-long", "{{ range(10**9)|length }}", "cannot be rendered: OverflowError"),
    Hostile("including-itself", '{% include "plan.md.j2" %}', "cannot be rendered: RecursionError"),
    Hostile("a-bad-filter-argument", '{{ "x"|wordwrap(0) }}', "cannot be rendered: ValueError"),
    Hostile("a-lone-surrogate", '{{ "\\ud800" }}', "cannot be rendered: UnicodeEncodeError"),
    Hostile("a-format-width-of-300-megabytes", '{{ "%300000000s" % "x" }}', "a format width of a million or more"),
    Hostile("output-of-ten-megabytes", '{% for i in range(100) %}{{ "x" * 100000 }}{% endfor %}', "over 8 million"),
    # widths asked of padding filters and string methods: a gigabyte before any output
    Hostile("center-a-gigabyte", '{{ "x"|center(1000000000)|length }}', "a width of 1,000,000 characters or more"),
    Hostile("ljust-a-gigabyte", '{{ "x".ljust(10**9) }}', "a width of 1,000,000 characters or more"),
    Hostile("expandtabs-a-gigabyte", '{{ "\t".expandtabs(10**9) }}', "a width of 1,000,000 characters or more"),
    Hostile("format-method-width", '{{ "{:>1000000000}".format("x") }}', "a format width of a million or more"),
    Hostile("format-filter-width", '{{ "%*s"|format(10**9, "x") }}', "a width of 1,000,000 characters or more"),
    Hostile("percent-star-width", '{{ "%*s" % (10**9, "x") }}', "a width of 1,000,000 characters or more"),
    Hostile("nested-format-width", '{{ "{:>{}}".format("x", 10**9) }}', "a width of 1,000,000 characters or more"),
    # pydantic's API on the models a template is given: parse_file reads (and unpickles) any file
    Hostile("pydantic-parse-file", "{{ plan.parse_file('/etc/hostname') }}", "attribute 'parse_file' of 'Plan'"),
    Hostile("pydantic-validate", "{{ plan.model_validate_json('{}') }}", "attribute 'model_validate_json'"),
    Hostile("pydantic-through-a-filter", "{{ (plan|attr('parse_raw'))('{}') }}", "attribute 'parse_raw'"),
    # text doubled step by step with an operator or a method: stopped once a step passes the bound
    Hostile(
        "doubling-with-percent",
        "{% set ns = namespace(s='x' * 100000) %}{% for i in range(10) %}{% set ns.s = '%s%s' % (ns.s, ns.s) %}"
        "{% endfor %}",
        "a value of over 8 million characters",
    ),
    Hostile(
        "doubling-with-format",
        "{% set ns = namespace(s='x' * 100000) %}{% for i in range(10) %}{% set ns.s = '{}{}'.format(ns.s, ns.s) %}"
        "{% endfor %}",
        "a value of over 8 million characters",
    ),
    # nested past what the parser or Python's compiler takes: still the template's failure, named
    Hostile("parentheses-3000-deep", "{{" + "(" * 3000 + "1" + ")" * 3000 + "}}", "templates/plan.md.j2 cannot be"),
    Hostile(
        "loops-25-deep",
        "".join(f"{{% for i{n} in [1] %}}" for n in range(25)) + "{% endfor %}" * 25,
        "templates/plan.md.j2 cannot be rendered: SyntaxError: too many statically nested blocks",
    ),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "templates").mkdir(parents=True)
    secret_file = tmp_path / "outside.txt"
    secret_file.write_text(SECRET)
    (root / "templates" / "leak.txt").symlink_to(secret_file)
    os.mkfifo(root / "templates" / "pipe")
    return root


def empty_plan() -> Plan:
    return Plan(owner=REPO, actions=(), desired_digest="d", observed_digest="o")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_hostile_plan_template_is_a_render_error_that_leaks_nothing(
    case: Hostile, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", SECRET)
    (repo / "templates" / "plan.md.j2").write_text(case.template)
    with pytest.raises(ConfigError) as raised:
        render_plan(empty_plan(), repo_root=repo)
    assert case.says in raised.value.message
    assert raised.value.message.startswith("template templates/")
    assert SECRET not in raised.value.render()


@pytest.mark.parametrize(
    ("template", "shown"),
    [
        ('{{ "{:,}".format(2500000) }}', "2,500,000"),
        ('{{ "%d"|format(2500000) }}', "2500000"),
        ('{{ "%d tokens" % 2500000 }}', "2500000 tokens"),
        ('{{ "x"|center(9) }}', "    x    "),
    ],
)
def test_a_big_number_formatted_is_not_a_big_width(repo: Path, template: str, shown: str) -> None:
    (repo / "templates" / "plan.md.j2").write_text(template)
    assert shown in render_plan(empty_plan(), repo_root=repo)


def test_a_template_that_runs_past_the_deadline_is_stopped(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "MAX_RENDER_SECONDS", 0.3)
    loop = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    (repo / "templates" / "plan.md.j2").write_text(loop)
    with pytest.raises(ConfigError, match=r"templates/plan.md.j2:1 cannot be rendered: it ran for over 0.3 seconds"):
        render_plan(empty_plan(), repo_root=repo)


def test_a_hostile_leaderboard_template_is_refused_the_same_way(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", SECRET)
    (repo / "templates" / "leaderboard.md.j2").write_text(f"# board\n{STEAL}\n")
    with pytest.raises(ConfigError) as raised:
        render_leaderboard(
            title="t", benchmark_key="b", spec_path="s", rows=[], rank_by="pass_at_1", scope="workspace", repo_root=repo
        )
    assert raised.value.message.startswith("template templates/leaderboard.md.j2:2 cannot be rendered")


class _Planted:
    """A pickle that creates a file when it is loaded: what `parse_file(..., allow_pickle=True)` would run."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.path), "w"))


def test_a_template_cannot_unpickle_a_file_through_a_models_api(repo: Path, tmp_path: Path) -> None:
    planted, ran = repo / "templates" / "data.pkl", tmp_path / "ran"
    planted.write_bytes(pickle.dumps(_Planted(ran)))
    call = f"{{{{ plan.parse_file('{planted}', proto='pickle', allow_pickle=True) }}}}"
    (repo / "templates" / "plan.md.j2").write_text(call)
    with pytest.raises(ConfigError, match="access to attribute 'parse_file' of 'Plan' object is unsafe"):
        render_plan(empty_plan(), repo_root=repo)
    assert not ran.exists()


def test_a_template_may_read_a_model_as_a_dict(repo: Path) -> None:
    (repo / "templates" / "plan.md.j2").write_text("{{ plan.model_dump()['owner'] }}")
    assert render_plan(empty_plan(), repo_root=repo) == REPO


def test_a_repository_template_that_plays_by_the_rules_still_renders(repo: Path) -> None:
    (repo / "templates" / "plan.md.j2").write_text("{% for a in plan.actions %}x{% endfor %}owner={{ plan.owner }}\n")
    assert render_plan(empty_plan(), repo_root=repo) == f"owner={REPO}\n"


# --- what reaches GitHub ------------------------------------------------------------------------


def context(fake: FakeGitHub) -> GitHubContext:
    return GitHubContext(REPO, PullRequestEvent(PR, "main", "abc123def456"), fake.token, api_url=fake.url, run_id="4")


@pytest.mark.slow
def test_tokens_in_a_plan_are_redacted_from_comment_and_summary(
    github: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OSMOSIS_TOKEN", SECRET)
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output")}
    text = f"spec by {SECRET}, pushed with {github.token}\n"
    publish_plan(
        context(github), empty_plan(), comment_markdown=text, summary_markdown=text, review=None, exitcode=1, env=env
    )
    publish_failure(context(github), text, create=True, env=env)
    posted = [str(c["body"]) for c in github.comments(REPO, PR)]
    summary = (tmp_path / "summary.md").read_text()
    for shown in (*posted, summary):
        assert SECRET not in shown and github.token not in shown
    assert "spec by ***, pushed with ***" in summary
    assert any("spec by ***, pushed with ***" in body for body in posted)


@pytest.mark.slow
def test_plan_github_comment_with_a_hostile_template_posts_no_token(github: FakeGitHub, tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "specs" / "runs").mkdir(parents=True)
    (root / "templates").mkdir()
    shutil.copyfile(SPEC, root / "specs" / "runs" / "smoke.toml")
    (root / "reconciler.toml").write_text('platform = "local"\n')
    (root / "templates" / "plan.md.j2").write_text(f"### plan\n{STEAL}\n")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR, "base": {"ref": "main"}, "head": {"sha": "f" * 40}}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OSMOSIS_", "RECONCILER_"))}
    env |= {
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_API_URL": github.url,
        "GITHUB_TOKEN": github.token,
        "GITHUB_RUN_ID": "7",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "OSMOSIS_TOKEN": SECRET,
    }
    done = subprocess.run(
        [sys.executable, "-m", "reconciler.cli", "plan", "--github-comment"],
        cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "internal error" not in done.stderr
    assert "template templates/plan.md.j2:2 cannot be rendered: access to attribute '__init__'" in done.stderr
    # the plan never rendered, so nothing was posted, and nothing that was shown holds the token
    assert github.comments(REPO, PR) == []
    assert SECRET not in done.stdout + done.stderr
