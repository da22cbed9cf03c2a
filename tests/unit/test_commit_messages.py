"""The commit `reconcile --commit` writes: one subject line, one body line per change, whatever the names hold."""

from __future__ import annotations

from types import SimpleNamespace

from reconciler.core.plan import Action, ActionKind
from reconciler.engine.apply import ActionResult, ApplyReport
from reconciler.engine.rendering import RenderOutcome
from reconciler.vcs.messages import commit_message

# a benchmark spec id from a file name older than the id rules: a newline, a forged line, an override
FORGED = "benchmarks/tb\n  + submit   FORGED \u202e"


def board(spec_id: str, path: str = "leaderboards/tb.md") -> RenderOutcome:
    return RenderOutcome(spec_id=spec_id, files=[path], changed=[path])


def submitted(spec_id: str, run_name: str) -> ActionResult:
    action = Action(kind=ActionKind.SUBMIT, spec_id=spec_id, reason="new spec")
    return ActionResult(action=action, ok=True, message="submitted", run_name=run_name)


def test_a_spec_id_with_a_newline_and_an_override_stays_on_the_subject_line_as_escapes() -> None:
    message = commit_message(SimpleNamespace(rendered=[board(FORGED)], applied=None))
    subject = message.splitlines()[0]
    assert subject == "reconciler: update leaderboards (tb\\n  + submit   FORGED \\u202e)"
    assert "\u202e" not in message and "\n  + submit" not in message


def test_a_submitted_run_with_a_newline_in_its_id_and_name_is_one_body_line() -> None:
    applied = ApplyReport(results=(submitted("runs/a\n+ stop runs/b", "tb-1\n- stop"),))
    message = commit_message(SimpleNamespace(rendered=[], applied=applied))
    assert message == "reconciler: update run state\n\n- submit runs/a\\n+ stop runs/b: tb-1\\n- stop\n"


def test_plain_names_are_written_as_they_are() -> None:
    applied = ApplyReport(results=(submitted("runs/tb smoke@1", "tb-1"),))
    message = commit_message(SimpleNamespace(rendered=[board("benchmarks/tb")], applied=applied))
    assert message == (
        "reconciler: update leaderboards (tb)\n\n- submit runs/tb smoke@1: tb-1\n- rendered leaderboards/tb.md\n"
    )
