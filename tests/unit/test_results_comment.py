"""The results comment's pure parts: the commit status it sets and what a run's section says."""

from __future__ import annotations

from reconciler.core.run_results import RunReport
from reconciler.github.results import by_commit, marked, submitting_commit
from reconciler.github.results_comment import RESULTS_CONTEXT, RESULTS_MARKER, commit_status, run_section

LINKS = {"server_url": "https://github.com", "repository": "acme/evals", "ref": "main"}


def run(status: str, *, commit: str | None = "c" * 40, **extra: object) -> RunReport:
    terminal = status in ("finished", "failed", "stopped")
    fields: dict[str, object] = {
        "spec_id": f"spec-{status}",
        "spec_path": "specs/runs/x.toml",
        "run_id": f"id-{status}",
        "run_name": f"run-{status}",
        "status": status,
        "terminal": terminal,
        "commit": commit,
    }
    return RunReport.model_validate(fields | extra)


def test_the_status_is_pending_while_any_run_is_going() -> None:
    status = commit_status([run("finished"), run("running")], None)
    assert (status.state, status.context, status.description) == (
        "pending",
        RESULTS_CONTEXT,
        "1 of 2 run(s) still going",
    )


def test_the_status_is_success_only_when_every_run_finished() -> None:
    assert commit_status([run("finished"), run("finished")], None).state == "success"


def test_a_failed_or_stopped_run_makes_the_status_a_failure() -> None:
    for other in ("failed", "stopped"):
        status = commit_status([run("finished"), run(other)], "https://x/1")
        assert (status.state, status.description, status.target_url) == (
            "failure",
            "1 of 2 run(s) did not finish",
            "https://x/1",
        )


def test_a_failed_run_section_gives_the_reason_from_its_logs() -> None:
    text = run_section(run("failed", reason="sandbox provisioning failed: image pull timed out"), **LINKS)
    assert "Why it failed, from its logs: `sandbox provisioning failed: image pull timed out`" in text


def test_a_reason_from_the_logs_reads_as_it_is() -> None:
    text = run_section(run("failed", reason="expected <module> | got x"), **LINKS)
    assert "from its logs: `expected <module> | got x`" in text


def test_a_reason_from_the_logs_never_mentions_anyone() -> None:
    text = run_section(run("failed", reason="agent crashed; ping @octo-org/oncall"), **LINKS)
    assert "`agent crashed; ping @octo-org/oncall`" in text


def test_a_run_still_going_shows_only_its_status() -> None:
    text = run_section(run("running"), **LINKS)
    assert "run `run-running` running" in text and "| agent |" not in text


def test_a_run_without_figures_says_why() -> None:
    text = run_section(run("finished", problem="results.csv: missing column(s) outcome"), **LINKS)
    assert "No figures: results.csv: missing column(s) outcome" in text


def test_the_leaderboard_link_points_at_the_committed_file_on_the_branch() -> None:
    text = run_section(run("finished", leaderboard="leaderboards/tb.md"), **LINKS)
    assert "Leaderboard: [`leaderboards/tb.md`](https://github.com/acme/evals/blob/main/leaderboards/tb.md)" in text


def test_runs_without_a_submitting_commit_belong_to_no_group() -> None:
    groups = by_commit([run("finished"), run("failed", commit=None), run("running", commit="d" * 40)])
    assert {sha: [r.status for r in runs] for sha, runs in groups.items()} == {
        "c" * 40: ["finished"],
        "d" * 40: ["running"],
    }


def test_the_comment_starts_with_its_marker_and_fits_githubs_limit() -> None:
    body = marked("### reconciler results\n\n" + "| row |\n" * 20_000)
    assert body.startswith(RESULTS_MARKER + "\n") and len(body) <= 65_536


def test_only_a_push_job_records_its_commit_as_the_submitter() -> None:
    base = {"GITHUB_ACTIONS": "true", "GITHUB_SHA": "a" * 40}
    assert submitting_commit(base | {"GITHUB_EVENT_NAME": "push"}) == "a" * 40
    for event in ("schedule", "workflow_dispatch", "pull_request"):
        assert submitting_commit(base | {"GITHUB_EVENT_NAME": event}) is None
    assert submitting_commit({"GITHUB_EVENT_NAME": "push", "GITHUB_SHA": "a" * 40}) is None


def test_a_run_a_later_change_replaced_ends_its_commits_wait_as_superseded() -> None:
    for before in ("running", "stopped"):
        status = commit_status([run("finished"), run(before, superseded_by="run-next")], None)
        assert (status.state, status.description) == (
            "success",
            "1 run(s) finished, 1 superseded by a later run",
        )


def test_a_superseded_run_section_names_the_run_that_replaced_it() -> None:
    text = run_section(run("stopped", superseded_by="run-next"), **LINKS)
    assert "run `run-stopped` superseded" in text and "`run-next`, took its place" in text
    assert "Why it" not in text
