"""The sticky plan comment against a fake GitHub API served on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.core.cost import Cost
from reconciler.core.plan import Action, ActionKind, Plan
from reconciler.github.comments import COMMENT_LIMIT, PLAN_MARKER, with_marker
from reconciler.github.event import GitHubContext, PullRequestEvent
from reconciler.github.publish import publish_plan
from reconciler.github.rest import GitHubClient
from reconciler.github.sticky import upsert_sticky
from reconciler.render.plan_markdown import render_markdown
from tests.github_fake import BOT, FakeGitHub

REPO, PR = "acme/evals", 7

pytestmark = pytest.mark.slow


def client(fake: FakeGitHub) -> GitHubClient:
    return GitHubClient(fake.token, fake.url)


def context(fake: FakeGitHub) -> GitHubContext:
    return GitHubContext(REPO, PullRequestEvent(PR, "main", "abc123def456"), fake.token, api_url=fake.url, run_id="42")


def submit(i: int, usd: float = 1.0) -> Action:
    cost = Cost(tasks=1, agents=1, attempts_per_task=1, attempts=1, estimated_usd=usd, estimate_complete=True)
    return Action(kind=ActionKind.SUBMIT, spec_id=f"runs/spec-{i:04d}", reason="no run of this config yet", cost=cost)


def a_plan(*actions: Action) -> Plan:
    return Plan(owner="acme/evals", actions=actions, desired_digest="d", observed_digest="o")


def env_files(tmp_path: Path) -> dict[str, str]:
    return {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_OUTPUT": str(tmp_path / "output")}


def publish(fake: FakeGitHub, plan: Plan, env: dict[str, str]) -> str:
    md = render_markdown(plan)
    result = publish_plan(
        context(fake), plan, comment_markdown=md, summary_markdown=md, review=None, exitcode=0, env=env
    )
    return result.action


def marked(fake: FakeGitHub) -> list[dict[str, object]]:
    return [c for c in fake.comments(REPO, PR) if str(c["body"]).startswith(PLAN_MARKER)]


def test_the_comment_is_created_once_then_updated_in_place(github: FakeGitHub) -> None:
    with client(github) as gh:
        first = upsert_sticky(gh, REPO, PR, with_marker("### plan v1\n"))
        second = upsert_sticky(gh, REPO, PR, with_marker("### plan v2\n"))
    assert (first.action, second.action) == ("created", "updated")
    [comment] = marked(github)
    assert "plan v2" in str(comment["body"]) and comment["id"] == first.comment.id  # type: ignore[union-attr]
    assert (len(github.calls("POST")), len(github.calls("PATCH"))) == (1, 1)


def test_the_comment_is_found_behind_120_other_comments_across_pages(github: FakeGitHub) -> None:
    github.add_comments(REPO, PR, 120)
    with client(github) as gh:
        upsert_sticky(gh, REPO, PR, with_marker("### plan v1\n"))
        github.add_comments(REPO, PR, 5)
        again = upsert_sticky(gh, REPO, PR, with_marker("### plan v2\n"))
    assert again.action == "updated"
    assert len(marked(github)) == 1
    assert len(github.calls("POST")) == 1
    # 121 comments on 2 pages of 100, twice; and once who the token writes as
    assert github.calls("GET").count("/user") == 1 and len(github.calls("GET")) == 5


def test_a_marked_comment_someone_else_wrote_is_never_taken_for_ours(github: FakeGitHub) -> None:
    # anyone can type the marker: a pull request author's comment starting with it is left alone
    planted = github.add_comment(REPO, PR, with_marker("### reconciler plan\n\nnothing to see\n"))
    ours = github.add_comment(REPO, PR, with_marker("### plan v1\n"), BOT)
    with client(github) as gh:
        again = upsert_sticky(gh, REPO, PR, with_marker("### plan v2\n"))
    assert again.comment is not None and again.comment.id == ours["id"]
    assert "nothing to see" in str(planted["body"]) and github.calls("PATCH") == [
        f"/repos/{REPO}/issues/comments/{ours['id']}"
    ]


def test_with_a_persons_token_the_sticky_comment_is_the_one_that_login_wrote(github: FakeGitHub) -> None:
    github.login = "release-bot-user"  # a personal token: its comments are written by a user account
    github.add_comment(REPO, PR, with_marker("### plan from another bot\n"), BOT)
    with client(github) as gh:
        first = upsert_sticky(gh, REPO, PR, with_marker("### plan v1\n"))
        second = upsert_sticky(gh, REPO, PR, with_marker("### plan v2\n"))
    assert (first.action, second.action) == ("created", "updated")
    assert first.comment is not None and second.comment is not None and first.comment.id == second.comment.id
    assert len(marked(github)) == 2  # the other bot's comment untouched, ours updated in place


def test_another_bots_marked_comment_it_may_not_edit_is_passed_over_without_a_new_comment_each_time(
    github: FakeGitHub,
) -> None:
    github.foreign_edits_refused = True
    other_bot = {"login": "some-other-app[bot]", "type": "Bot"}
    github.add_comment(REPO, PR, with_marker("### not ours\n"), other_bot)
    with client(github) as gh:
        first = upsert_sticky(gh, REPO, PR, with_marker("### plan v1\n"))
        second = upsert_sticky(gh, REPO, PR, with_marker("### plan v2\n"))
    assert (first.action, second.action) == ("created", "updated")
    assert len(marked(github)) == 2 and "not ours" in str(marked(github)[0]["body"])


def test_a_second_plan_comment_from_a_race_is_rewritten_to_point_at_the_first(github: FakeGitHub) -> None:
    # two runs that both found no comment each posted one; only the first is updated from then on
    first = github.add_comment(REPO, PR, with_marker("### plan v1\n"), BOT)
    second = github.add_comment(REPO, PR, with_marker("### plan v1, posted twice\n"), BOT)
    with client(github) as gh:
        result = upsert_sticky(gh, REPO, PR, with_marker("### plan v2\n"))
    assert result.comment is not None and result.comment.id == first["id"]
    [kept] = marked(github)
    assert "plan v2" in str(kept["body"])
    [retired] = [c for c in github.comments(REPO, PR) if c["id"] == second["id"]]
    assert "Out of date" in str(retired["body"]) and str(result.comment.html_url) in str(retired["body"])


def test_an_unchanged_plan_is_not_edited_again(github: FakeGitHub) -> None:
    with client(github) as gh:
        upsert_sticky(gh, REPO, PR, with_marker("### same\n"))
        again = upsert_sticky(gh, REPO, PR, with_marker("### same\n"))
    assert again.action == "unchanged"
    assert github.calls("PATCH") == []


def test_a_comment_that_only_quotes_the_marker_is_not_taken(github: FakeGitHub) -> None:
    github.add_comment(REPO, PR, f"> {PLAN_MARKER}\n> the bot said this")
    with client(github) as gh:
        result = upsert_sticky(gh, REPO, PR, with_marker("### plan\n"))
    assert result.action == "created"
    assert github.calls("PATCH") == []


def test_no_comment_on_a_pull_request_without_changes(github: FakeGitHub, tmp_path: Path) -> None:
    noop = Action(kind=ActionKind.NOOP, spec_id="runs/a", reason="finished, in sync")
    assert publish(github, a_plan(noop), env_files(tmp_path)) == "skipped"
    assert github.comments(REPO, PR) == []
    assert github.calls("POST") == []


def test_an_earlier_comment_is_updated_to_say_no_changes(github: FakeGitHub, tmp_path: Path) -> None:
    env = env_files(tmp_path)
    assert publish(github, a_plan(submit(1)), env) == "created"
    assert publish(github, a_plan(), env) == "updated"
    [comment] = marked(github)
    assert "**No changes.**" in str(comment["body"])
    assert "runs/spec-0001" not in str(comment["body"])


def test_a_70000_character_plan_is_cut_to_fit_with_a_pointer(github: FakeGitHub, tmp_path: Path) -> None:
    plan = a_plan(*(submit(i) for i in range(1000)))
    full = render_markdown(plan)
    assert len(full) >= 70_000
    env = env_files(tmp_path)
    assert publish(github, plan, env) == "created"
    [comment] = marked(github)
    body = str(comment["body"])
    assert len(body) <= COMMENT_LIMIT
    assert "the full plan is in the [job summary](https://github.com/acme/evals/actions/runs/42)" in body
    assert body.count("\n| + | submit |") < 1000
    assert (tmp_path / "summary.md").read_text() == full


def test_publishing_sets_the_step_outputs(github: FakeGitHub, tmp_path: Path) -> None:
    env = env_files(tmp_path)
    publish(github, a_plan(submit(1, 2.5), submit(2, 1.25)), env)
    text = Path(env["GITHUB_OUTPUT"]).read_text()
    values = dict(zip(text.split("\n")[0::3], text.split("\n")[1::3], strict=False))
    assert {k.split("<<")[0]: v for k, v in values.items() if k} == {
        "has_changes": "true",
        "paid_attempts": "2",
        "estimated_cost": "3.75",
        "exitcode": "0",
    }


def test_the_comment_is_written_as_the_bot_with_the_token(github: FakeGitHub, tmp_path: Path) -> None:
    publish(github, a_plan(submit(1)), env_files(tmp_path))
    [comment] = github.comments(REPO, PR)
    assert comment["user"] == BOT
    assert github.token not in json.dumps(github.comments_by_issue[(REPO, PR)])
