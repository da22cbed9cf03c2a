"""What a scheduled run looks like at one simulated moment: status, results, agents, logs.

Pure functions of (schedule, now, stopped_at), all in simulated seconds since submit. A stop
at `s` freezes the run there: results that ended by `s` stay, every other slot becomes a
`cancelled` result ending at `s`, and no event after `s` ever happens.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.world import RunStatus
from .simulator import Schedule, Slot

PRODUCED = ("passed", "failed", "errored")


def run_status(
    queued_at: float, running_at: float, end_at: float, final_status: str, now: float, stopped_at: float | None
) -> str:
    """The run's status from the schedule's phase times alone (cheap: no slots needed)."""
    if stopped_at is not None:
        return RunStatus.STOPPED
    if now < queued_at:
        return RunStatus.PENDING
    if now < running_at:
        return RunStatus.QUEUED
    if now < end_at:
        return RunStatus.RUNNING
    return final_status


def unchanged_between(moments: Iterable[float], now: float) -> tuple[float, float]:
    """The simulated times [start, end) around `now` between two consecutive `moments`.

    A run's status, start, end, results and stop each change exactly at a moment of its own, and
    at the moment itself (`run_status`, `results`, RunView: `now >= t`), so what is shown of it
    stands still between two consecutive moments."""
    start, end = float("-inf"), float("inf")
    for t in moments:
        if t <= now:
            start = max(start, t)
        else:
            end = min(end, t)
    return start, end


def cutoff(now: float, stopped_at: float | None) -> float:
    """The moment whose state is shown: now, or the stop when the run was stopped."""
    return now if stopped_at is None else min(now, stopped_at)


def results(schedule: Schedule, now: float, stopped_at: float | None) -> list[Slot]:
    """The result rows visible at `now`, ordered by (agent, task, attempt)."""
    if stopped_at is None:
        rows = [s for s in schedule.slots if s.end <= now]
    else:
        rows = [s if s.end <= stopped_at else _cancelled(s, stopped_at) for s in schedule.slots]
    return sorted(rows, key=lambda s: (s.agent, s.task, s.attempt))


def _cancelled(slot: Slot, at: float) -> Slot:
    """A slot cut by a stop at `at`: it keeps its start when it had begun, and produced nothing."""
    start = slot.start if slot.start is not None and slot.start < at else None
    return Slot(slot.agent, slot.task, slot.attempt, start, at, "cancelled", 0, 0, 0.0, slot.result_id)


def agent_status(schedule: Schedule, index: int, status: str, now: float, stopped_at: float | None) -> str:
    if status in (RunStatus.PENDING, RunStatus.QUEUED):
        return status
    end = schedule.agent_end[index]
    if stopped_at is not None:
        return schedule.agent_status[index] if end <= stopped_at else RunStatus.STOPPED
    if now >= end:
        return schedule.agent_status[index]
    return RunStatus.RUNNING


@dataclass(frozen=True)
class Event:
    at: float  # simulated seconds since submit
    level: str  # info | warning | error
    step: str
    message: str
    details: dict[str, Any] | None


def events(
    schedule: Schedule, task_names: list[str], attempts: int, now: float, stopped_at: float | None
) -> list[Event]:
    """The run's lifecycle events up to `now`, oldest first; a stable, append-only list."""
    n_agents = len(schedule.agent_end)
    out: list[tuple[float, int, int, Event]] = [
        (
            0.0,
            0,
            0,
            Event(
                0.0,
                "info",
                "submit",
                f"Run submitted: {len(task_names)} task(s) x {n_agents} agent(s) x {attempts} attempt(s)",
                {"task_count": len(task_names), "agent_count": n_agents, "attempts_per_task": attempts},
            ),
        ),
        (
            schedule.queued_at,
            1,
            0,
            Event(schedule.queued_at, "info", "queue", "Run queued, waiting for capacity", None),
        ),
        (
            schedule.running_at,
            2,
            0,
            Event(
                schedule.running_at,
                "info",
                "start",
                f"Run started with up to {schedule.max_concurrent} concurrent attempt(s)",
                {"max_concurrent_attempts": schedule.max_concurrent},
            ),
        ),
    ]
    for order, slot in enumerate(schedule.slots):
        if slot.outcome not in PRODUCED:
            continue
        level = "warning" if slot.outcome == "errored" else "info"
        message = f"Agent {slot.agent + 1}: {task_names[slot.task]} attempt {slot.attempt} {slot.outcome}"
        details = {
            "result_id": slot.result_id,
            "agent_index": slot.agent,
            "task_name": task_names[slot.task],
            "attempt": slot.attempt,
            "outcome": slot.outcome,
            "duration_seconds": slot.duration,
        }
        out.append((slot.end, 3, order, Event(slot.end, level, "attempt", message, details)))
    for a in range(n_agents):
        end, final, why = schedule.agent_end[a], schedule.agent_status[a], schedule.agent_failure[a]
        if final == RunStatus.FAILED:
            event = Event(end, "error", "agent", f"Agent {a + 1} failed: {why}", {"agent_index": a, "reason": why})
        else:
            event = Event(end, "info", "agent", f"Agent {a + 1} finished", {"agent_index": a})
        out.append((end, 4, a, event))
    if schedule.final_status == RunStatus.FAILED:
        final_event = Event(
            schedule.end_at, "error", "finish", f"Run failed: {schedule.failure}", {"reason": schedule.failure}
        )
    else:
        final_event = Event(schedule.end_at, "info", "finish", "Run finished", None)
    out.append((schedule.end_at, 5, 0, final_event))
    limit = cutoff(now, stopped_at)
    visible = [e for at, _, _, e in sorted(out, key=lambda x: (x[0], x[1], x[2])) if at <= limit]
    if stopped_at is not None and stopped_at <= now:
        cancelled = sum(1 for s in schedule.slots if s.end > stopped_at)
        visible.append(
            Event(
                stopped_at,
                "warning",
                "stop",
                f"Run stopped by request; {cancelled} unfinished attempt(s) cancelled",
                {"cancelled": cancelled},
            )
        )
    return visible
