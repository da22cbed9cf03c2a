"""`reconciler runs`: the workspace's runs, and one run scored per agent."""

from __future__ import annotations

from collections.abc import Sequence

from ..engine.runs_view import AgentScore, Interval, RunReport, RunSummary
from ..render.tables import json_document, percent, table

LIST_HEADERS = ("RUN", "BENCHMARK", "STATUS", "PROGRESS", "AGENTS", "BEST PASS@1", "OWNER")
AGENT_HEADERS = (
    "RANK",
    "AGENT",
    "HARNESS",
    "MODEL",
    "PASS@1 [95% CI]",
    "PASS@K",
    "COST/TASK",
    "TIME/TASK",
    "TOKENS/TASK",
)


def _progress(r: RunSummary) -> str:
    return f"{r.ingested}/{r.expected}" if r.expected else "-"


def render_list(rows: Sequence[RunSummary]) -> str:
    if not rows:
        return "no runs in this workspace yet\n"
    body = [
        (r.name, r.benchmark or "-", r.status, _progress(r), str(r.agents or "-"), percent(r.best_pass_at_1), r.owner)
        for r in rows
    ]
    return table(LIST_HEADERS, body) + "Next: `reconciler runs RUN` for per-agent scores, `reconciler logs RUN`.\n"


def _with_interval(i: Interval | None) -> str:
    if i is None or i.value is None:
        return "-"
    if i.ci_low is None or i.ci_high is None:
        return percent(i.value)
    return f"{percent(i.value)} [{percent(i.ci_low)}, {percent(i.ci_high)}]"


def _number(value: float | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def _agent_row(a: AgentScore) -> tuple[str, ...]:
    k = f"@{a.deepest_k} {percent(a.pass_at_k.value)}" if a.deepest_k and a.pass_at_k else "-"
    return (
        str(a.rank) if a.rank is not None else "-",
        str(a.index + 1) if a.index is not None else "-",  # "Agent 1" is index 0, as in the run's logs
        a.harness or "-",
        a.model or "-",
        _with_interval(a.pass_at_1),
        k,
        _number(a.cost_per_task_usd, "${:,.4f}"),
        _number(a.seconds_per_task, "{:,.0f}s"),
        _number(a.tokens_per_task, "{:,.0f}"),
    )


def render_report(r: RunReport) -> str:
    lines = [f"{r.name} ({r.id})", f"  benchmark: {r.benchmark or '-'}; owner: {r.owner}"]
    duration = f"; duration {r.duration_seconds:,.0f}s" if r.duration_seconds is not None else ""
    lines.append(f"  status: {r.status}; progress {_progress(r)}{duration}")
    counts = ", ".join(
        f"{n} {label}"
        for n, label in ((r.passed, "passed"), (r.failed, "failed"), (r.errored, "errored"), (r.cancelled, "cancelled"))
        if n
    )
    cost = f"; cost ${r.total_cost_usd:,.2f}" if r.total_cost_usd is not None else ""
    tokens = f"; {r.total_tokens:,} tokens" if r.total_tokens is not None else ""
    lines.append(f"  results: {counts or 'none yet'}{cost}{tokens}")
    if r.agent_scores:
        lines.append(table(AGENT_HEADERS, [_agent_row(a) for a in r.agent_scores]).rstrip("\n"))
    if r.platform_url:
        lines.append(f"platform: {r.platform_url}")
    return "\n".join(lines) + "\n"


def list_json(rows: Sequence[RunSummary]) -> str:
    return json_document("runs", {"runs": [r.model_dump(mode="json") for r in rows]})


def reports_json(reports: Sequence[RunReport]) -> str:
    return json_document("run_reports", {"runs": [r.model_dump(mode="json") for r in reports]})
