"""`reconciler benchmarks`: the catalog a spec author picks from."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.catalog import BenchmarkSummary, BenchmarkView
from ..render.tables import json_document, table

HEADERS = ("KEY", "NAME", "SYNC", "TASKS", "HARNESS", "JUDGE", "PARITY SET")


def _sync(b: BenchmarkSummary) -> str:
    if b.sync_status == "ready":
        return "ready"
    if b.sync_status == "failed":
        return "failed"
    done = f" {b.synced_task_count}/{b.task_count}" if b.synced_task_count is not None else ""
    return f"{b.sync_status}{done}"


def _tasks(b: BenchmarkSummary) -> str:
    # the platform's Benchmarks table: "Empty while the task list syncs, `unavailable` if the sync failed"
    if b.sync_status == "failed":
        return "unavailable"
    return str(b.task_count) if b.sync_status == "ready" else ""


def _harness(b: BenchmarkSummary) -> str:
    if b.harness == "none":
        return "none"
    text = b.harness
    return f"{text} (default {b.default_harness})" if b.default_harness else text


def _judge(b: BenchmarkSummary) -> str:
    return "required" if b.requires_judge_api_key else "-"


def render_list(benchmarks: Sequence[BenchmarkSummary]) -> str:
    if not benchmarks:
        return "no benchmarks in this workspace; add one on the platform first\n"
    rows = [(b.key, b.name, _sync(b), _tasks(b), _harness(b), _judge(b), b.parity_set or "-") for b in benchmarks]
    out = table(HEADERS, rows)
    for b in benchmarks:
        if b.sync_error:
            out += f"{b.key}: sync failed: {b.sync_error}; retry it from the benchmark's page on the platform\n"
    return out + "Next: `reconciler benchmarks KEY` for its categories, task sets and task names.\n"


def render_detail(b: BenchmarkView) -> str:
    lines = [f"{b.name} ({b.key})", f"  sync: {_sync(b)}" + (f": {b.sync_error}" if b.sync_error else "")]
    lines.append(f"  tasks: {_tasks(b)}; pass threshold {b.pass_threshold:g}")
    if b.harness == "none":
        lines.append("  harness: none (this benchmark takes no [[agents]] harness)")
    else:
        default = (
            f"; default {b.default_harness} (its published scores were measured on it)" if b.default_harness else ""
        )
        lines.append(f"  harness: {b.harness}{default}")
    if b.requires_judge_api_key:
        lines.append(
            f"  judge: [execution] judge_api_key_secret required; judge_model defaults to {b.judge_model_default or '-'}"
        )
    else:
        lines.append("  judge: none (judge_model and judge_api_key_secret are refused)")
    if b.required_secret_names:
        lines.append(f"  required secret records: {', '.join(b.required_secret_names)}")
    if b.task_sets:
        lines.append("  task sets:")
        lines += [f"    {s.name} ({s.task_count} tasks){' recommended' if s.recommended else ''}" for s in b.task_sets]
    if b.categories:
        lines.append("  categories:")
        lines += [f"    {c.name} ({c.task_count})" for c in b.categories]
    if b.tasks:
        lines.append("")
        lines.append(
            table(
                ("TASK", "CATEGORY", "DIFFICULTY"), [(t.name, t.category or "-", t.difficulty or "-") for t in b.tasks]
            ).rstrip("\n")
        )
    if b.unavailable_reason or b.unavailable_tasks:
        lines.append(f"unavailable tasks ({len(b.unavailable_tasks)}): {b.unavailable_reason or 'no reason given'}")
        lines += [f"  {t.name}" for t in b.unavailable_tasks]
    if b.platform_url:
        lines.append(f"platform: {b.platform_url}")
    return "\n".join(lines) + "\n"


def list_json(benchmarks: Sequence[BenchmarkSummary]) -> str:
    return json_document(
        "benchmarks",
        {"benchmarks": [{**b.model_dump(mode="json"), "parity_set": b.parity_set} for b in benchmarks]},
    )


def detail_json(b: BenchmarkView) -> str:
    return json_document("benchmark", {"benchmark": {**b.model_dump(mode="json"), "parity_set": b.parity_set}})
