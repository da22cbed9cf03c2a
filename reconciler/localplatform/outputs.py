"""A run's downloadable files, generated deterministically from the store at one moment.

Layout (docs/platform-api.md §3): `summary.csv`, `results.csv`, `logs.txt` and, per produced result,
`artifacts/<result-id>/trajectory.json` and `artifacts/<result-id>/verifier/stdout.txt`.
A running run gives a snapshot; the same run at the same moment always gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence

from .runview import RunView
from .simulator import rng_for
from .timeline import PRODUCED, events

RESULTS_COLUMNS = (
    "result_id",
    "agent_index",
    "harness",
    "model",
    "task_name",
    "category",
    "difficulty",
    "attempt",
    "outcome",
    "score",
    "duration_seconds",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "started_at",
    "completed_at",
)
SUMMARY_COLUMNS = (
    "agent_index",
    "harness",
    "model",
    "n_tasks",
    "attempts_per_task",
    "passed",
    "failed",
    "errored",
    "cancelled",
    "pass_at_1",
    "pass_at_1_ci_low",
    "pass_at_1_ci_high",
    "pass_at_k",
    "pass_at_k_ci_low",
    "pass_at_k_ci_high",
    "k",
    "cost_per_task",
    "mean_duration_seconds",
    "tokens_per_task",
    "rank",
    "tied",
)
OUTPUT_TYPES = ("summary", "results", "artifacts", "logs")
FIXED_FILES = {"summary.csv": "summary", "results.csv": "results", "logs.txt": "logs"}  # path -> output type


def path_type(path: str) -> str | None:
    """The output type of a layout path (docs/platform-api.md §3), or None outside the layout."""
    if path in FIXED_FILES:
        return FIXED_FILES[path]
    parts = path.split("/")
    if (
        len(parts) >= 3
        and parts[0] == "artifacts"
        and all(p not in ("", ".", "..") for p in parts)
        and "\\" not in path
    ):
        return "artifacts"
    return None


def _num(value: float | None, places: int) -> str:
    return "" if value is None else f"{value:.{places}f}"


def _csv(header: Sequence[str], rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode()


def results_csv(view: RunView) -> bytes:
    tasks = view.selection_tasks()
    rows = []
    for slot in view.results:
        agent = view.agents[slot.agent]
        name, category, difficulty = tasks[slot.task]
        score = {"passed": "1.0", "failed": "0.0"}.get(slot.outcome, "")
        rows.append(
            [
                slot.result_id,
                str(slot.agent),
                agent.effective_harness or "",
                agent.model,
                name,
                category or "",
                difficulty or "",
                str(slot.attempt),
                slot.outcome,
                score,
                _num(slot.duration, 3),
                str(slot.input_tokens),
                str(slot.output_tokens),
                _num(slot.cost_usd, 6),
                view.iso(slot.start) if slot.start is not None else "",
                view.iso(slot.end),
            ]
        )
    return _csv(RESULTS_COLUMNS, rows)


def summary_csv(view: RunView) -> bytes:
    rows = []
    for agent, score in zip(view.agents, view.scores, strict=True):
        interval = score.pass_at_1
        deepest = score.pass_at_k[-1] if score.pass_at_k else None
        rows.append(
            [
                str(agent.index),
                agent.effective_harness or "",
                agent.model,
                str(len(view.task_names)),
                str(view.attempts),
                str(score.passed),
                str(score.failed),
                str(score.errored),
                str(score.cancelled),
                _num(interval.value if interval else None, 6),
                _num(interval.ci_low if interval else None, 6),
                _num(interval.ci_high if interval else None, 6),
                _num(deepest.value if deepest else None, 6),
                _num(deepest.ci_low if deepest else None, 6),
                _num(deepest.ci_high if deepest else None, 6),
                str(deepest.k) if deepest else "",
                _num(score.cost_per_task, 6),
                _num(score.mean_duration_seconds, 3),
                _num(score.tokens_per_task, 1),
                str(score.rank) if score.rank is not None else "",
                ("true" if score.tied else "false") if score.rank is not None else "",
            ]
        )
    return _csv(SUMMARY_COLUMNS, rows)


def logs_txt(view: RunView) -> bytes:
    lines = [
        f"{view.iso(e.at)} {e.level.upper():<7} [{e.step}] {e.message}\n"
        for e in events(view.schedule, view.task_names, view.attempts, view.now, view.stopped_at)
    ]
    return "".join(lines).encode()


_ACTIONS = (
    "inspect the repository layout",
    "read the task instructions",
    "run the test suite",
    "edit the failing module",
    "install a missing dependency",
    "rerun the checks",
    "write the final answer",
)


def artifacts(view: RunView) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    tasks = view.selection_tasks()
    for slot in view.results:
        if slot.outcome not in PRODUCED:
            continue
        agent = view.agents[slot.agent]
        rng = rng_for("artifact", view.row.id, slot.result_id)
        steps = [
            {"step": i + 1, "action": _ACTIONS[rng.randrange(len(_ACTIONS))], "tokens": rng.randrange(200, 4000)}
            for i in range(rng.randrange(3, 9))
        ]
        trajectory = {
            "result_id": slot.result_id,
            "task_name": tasks[slot.task][0],
            "agent_index": slot.agent,
            "attempt": slot.attempt,
            "harness": agent.effective_harness,
            "model": agent.model,
            "outcome": slot.outcome,
            "steps": steps,
        }
        out[f"artifacts/{slot.result_id}/trajectory.json"] = (json.dumps(trajectory, indent=2) + "\n").encode()
        checks = rng.randrange(2, 7)
        verdict = {"passed": "PASS", "failed": "FAIL", "errored": "ERROR"}[slot.outcome]
        lines = [
            f"test_{i + 1} ... {'ok' if slot.outcome == 'passed' or i < checks - 1 else 'FAILED'}"
            for i in range(checks)
        ]
        if slot.outcome == "errored":
            lines = ["verifier did not run: the agent's sandbox exited before the tests"]
        out[f"artifacts/{slot.result_id}/verifier/stdout.txt"] = ("\n".join([*lines, verdict]) + "\n").encode()
    return out


class OutputCache:
    """The last few generated file sets, keyed by (run, moment)."""

    def __init__(self, size: int = 16, extra: dict[str, bytes] | None = None) -> None:
        self._items: OrderedDict[tuple[str, float, bool], dict[str, bytes]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()
        self._extra = extra or {}  # test hook: bulk artifacts every run carries (benchmarks)

    def files(self, view: RunView) -> dict[str, bytes]:
        """Every file of the run at the view's moment, in manifest order."""
        key = (
            view.row.id,
            min(view.cutoff, view.row.end_at),
            view.stopped_at is not None,
        )  # nothing changes after the end
        with self._lock:
            cached = self._items.get(key)
        if cached is not None:
            return cached
        files = {"summary.csv": summary_csv(view), "results.csv": results_csv(view), "logs.txt": logs_txt(view)}
        files.update(artifacts(view))
        files.update(self._extra)
        with self._lock:
            self._items[key] = files
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return files
