"""Publishing results against the fake GitHub API: who gets a comment, a status, or only the summary."""

from __future__ import annotations

from pathlib import Path

from reconciler.core.run_results import RunReport
from reconciler.github.results import ResultsContext, publish_results
from reconciler.github.results_comment import RESULTS_MARKER
from tests.github_fake import FakeGitHub

REPO, PR = "acme/evals", 3
SHA = "ab" * 20


def ctx(github: FakeGitHub) -> ResultsContext:
    return ResultsContext(repository=REPO, token=github.token, api_url=github.url, ref="main")


def report(status: str, commit: str | None = SHA) -> RunReport:
    return RunReport(
        spec_id="tb-smoke",
        spec_path="specs/runs/tb-smoke.toml",
        run_id="r1",
        run_name="calm-otter-1",
        status=status,
        terminal=status in ("finished", "failed", "stopped"),
        commit=commit,
        reason="sandbox provisioning failed" if status == "failed" else None,
    )


def summary_env(tmp_path: Path) -> dict[str, str]:
    return {"GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}


def test_a_commit_github_does_not_know_is_reported_in_the_summary_only(tmp_path: Path, github: FakeGitHub) -> None:
    said = publish_results(ctx(github), [report("failed", commit="not-a-sha")], env=summary_env(tmp_path), verbose=True)
    assert said == ["commit not-a-sha belongs to no pull request; its runs are in the job summary only"]
    assert "Why it failed, from its logs: `sandbox provisioning failed`" in (tmp_path / "summary.md").read_text()
    assert github.calls("POST") == []


def test_a_run_still_going_sets_pending_and_posts_no_comment(tmp_path: Path, github: FakeGitHub) -> None:
    github.merge(REPO, PR, SHA)
    publish_results(ctx(github), [report("running")], env=summary_env(tmp_path))
    assert [s["state"] for s in github.statuses(REPO, SHA)] == ["pending"]
    assert github.comments(REPO, PR) == []


def test_the_status_points_at_the_results_comment(tmp_path: Path, github: FakeGitHub) -> None:
    github.merge(REPO, PR, SHA)
    publish_results(ctx(github), [report("failed")], env=summary_env(tmp_path))
    [comment] = github.comments(REPO, PR)
    [status] = github.statuses(REPO, SHA)
    assert str(comment["body"]).startswith(RESULTS_MARKER)
    assert (status["state"], status["target_url"]) == ("failure", comment["html_url"])


def test_publishing_the_same_results_twice_posts_nothing_new(tmp_path: Path, github: FakeGitHub) -> None:
    github.merge(REPO, PR, SHA)
    publish_results(ctx(github), [report("failed")], env=summary_env(tmp_path))
    posts = len(github.calls("POST"))
    assert publish_results(ctx(github), [report("failed")], env=summary_env(tmp_path)) == []
    said = publish_results(ctx(github), [report("failed")], env=summary_env(tmp_path), verbose=True)
    assert said == [f"the results comment on pull request #{PR} is already up to date"]
    assert len(github.calls("POST")) == posts and github.calls("PATCH") == []


def test_a_run_that_ended_updates_the_comment_and_the_status_in_place(tmp_path: Path, github: FakeGitHub) -> None:
    github.merge(REPO, PR, SHA)
    publish_results(ctx(github), [report("stopped")], env=summary_env(tmp_path))
    publish_results(ctx(github), [report("finished")], env=summary_env(tmp_path))
    [comment] = github.comments(REPO, PR)
    assert "run `calm-otter-1` finished" in str(comment["body"]) and comment["updated"] == 1
    assert [s["state"] for s in github.statuses(REPO, SHA)] == ["success", "failure"]


def test_a_rebase_merges_commits_share_one_results_comment_and_a_rerun_edits_nothing(
    tmp_path: Path, github: FakeGitHub
) -> None:
    """A rebase merge lands one pull request as several commits, each crediting its own runs."""
    other = "cd" * 20
    github.merge(REPO, PR, SHA)
    github.merge(REPO, PR, other)
    second = report("finished", commit=other).model_copy(
        update={"spec_id": "tb-other", "run_id": "r2", "run_name": "brisk-lark-2"}
    )
    reports = [report("failed"), second]
    publish_results(ctx(github), reports, env=summary_env(tmp_path))
    [comment] = github.comments(REPO, PR)
    assert "calm-otter-1" in str(comment["body"]) and "brisk-lark-2" in str(comment["body"])
    assert str(comment["body"]).count("### reconciler results") == 1
    assert [s["state"] for s in github.statuses(REPO, SHA)] == ["failure"]
    assert [s["state"] for s in github.statuses(REPO, other)] == ["success"]
    patches = len(github.calls("PATCH"))
    assert publish_results(ctx(github), reports, env=summary_env(tmp_path)) == []
    assert len(github.calls("PATCH")) == patches
