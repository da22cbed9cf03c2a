"""A renamed spec reads as one: the text and Markdown plans show `moved`, old id to new id, at no cost."""

from __future__ import annotations

from reconciler.core.plan import Plan, plan
from reconciler.core.world import Desired
from reconciler.render.plan_markdown import render_markdown
from reconciler.render.plan_text import render_text
from tests.unit.test_plan import SMOKE, observed, run, spec


def renamed() -> Plan:
    d = spec(SMOKE, "runs/smoke")
    return plan(Desired(runs=(d,)), observed(run("runs/my smoke@1", d.fingerprint, "running", "r1")))


def test_the_text_plan_shows_the_move_from_the_old_id_to_the_new_one() -> None:
    text = render_text(renamed())
    assert " -> moved    runs/smoke [run-r1] — renamed from runs/my smoke@1;" in text
    assert "Plan: 1 wait, 1 moved." in text and "Paid" not in text


def test_the_markdown_plan_has_a_moved_row_without_cost() -> None:
    rows = [line for line in render_markdown(renamed()).splitlines() if "| moved |" in line]
    (row,) = rows
    assert "| moved | `runs/smoke` | run-r1 |  |  | renamed from runs/my smoke@1;" in row


def test_a_run_name_from_the_platform_cannot_reorder_or_recolour_the_text_plan() -> None:
    """The platform names runs; a name holding a right-to-left override or a terminal escape is
    shown as escapes, so the line a reviewer reads is the run it acts on."""
    d = spec(SMOKE, "runs/smoke")
    hostile = run("runs/smoke", d.fingerprint, "running", "r1").model_copy(update={"name": "ok\u202e\x1b[2Kevil"})
    text = render_text(plan(Desired(runs=(d,)), observed(hostile)))
    assert "[ok\\u202e\\x1b[2Kevil]" in text
    assert "\u202e" not in text and "\x1b" not in text
