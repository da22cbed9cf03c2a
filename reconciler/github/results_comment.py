"""Pure: the results comment body, the job summary section and the commit status for some runs.

The same table serves the pull request and the job summary. Percentages have one decimal, the
McNemar p-value three significant digits; a run still going shows only its status, a failed or
stopped one the reason its logs give.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from ..core.cells import cell, code_cell, code_span
from ..core.run_results import AgentReport, RunReport
from .rest import CommitStatus

RESULTS_MARKER = "<!-- reconciler:results -->"
RESULTS_CONTEXT = "reconciler/results"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _signed_pp(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f} pp"


def _p(value: float) -> str:
    return f"{value:.3g}"


def _money(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


def _seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.1f} s"


def _tokens(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def _rank(agent: AgentReport) -> str:
    if agent.rank is None:
        return "not ranked"
    return f"{agent.rank} (tied)" if agent.tied else str(agent.rank)


def _comparison(agent: AgentReport) -> str:
    c = agent.comparison
    if c is None:
        return "no earlier run"
    return (
        f"{_signed_pp(c.delta)} vs {code_cell(c.previous_run)}; McNemar p = {_p(c.p_value)}"
        f" ({c.b} now-only, {c.c} before-only passes of {c.paired} paired tasks)"
    )


def agent_row(agent: AgentReport) -> str:
    r = agent.results
    interval = r.pass_at_1
    ci = f" ({pct(interval.ci_low)} to {pct(interval.ci_high)})" if interval.ci_low is not None else ""
    deepest = r.deepest_pass_at_k
    k = f"pass@{deepest.k} {pct(deepest.value)}" if deepest is not None else "n/a"
    cells = [
        code_cell(r.label),  # a model name from a spec or the platform: never a link or a mention
        f"{pct(interval.value)}{ci}",
        k,
        _money(r.cost_per_task),
        _seconds(r.mean_duration_seconds),
        _tokens(r.tokens_per_task),
        _rank(agent),
        _comparison(agent),
    ]
    return "| " + " | ".join(cells) + " |"


HEADER = (
    "| agent | pass@1 (95% CI) | deepest pass@k | cost/task | time/task | tokens/task | rank | vs previous run |\n"
    "|---|---|---|---|---|---|---|---|"
)


def leaderboard_url(path: str, *, server_url: str, repository: str, ref: str) -> str:
    # the path is a file name from a spec: percent-encoded, a `)` or a space in it cannot end the link
    return f"{server_url.rstrip('/')}/{repository}/blob/{quote(ref, safe='/')}/{quote(path, safe='/')}"


# what a Markdown link destination may hold as it is; anything else (a space or `)` that would
# end the link, `<`, `>`, a backtick, a control character) is percent-encoded
_URL_SAFE = "/:?#[]@!$&'*+,;=%~"


def _link(text: str, url: str) -> str:
    """`text` (already inert Markdown, such as a code span) linking to `url`."""
    return f"[{text}]({quote(url, safe=_URL_SAFE)})"


def run_section(run: RunReport, *, server_url: str, repository: str, ref: str) -> str:
    name = _link(code_cell(run.run_name), run.platform_url) if run.platform_url else code_cell(run.run_name)
    if run.superseded_by:
        return (
            f"#### {code_cell(run.spec_id)}: run {name} superseded\n\nA later run of this spec,"
            f" {code_cell(run.superseded_by)}, took its place before it ended (this one is {run.status});"
            " the later run's results are reported with the change that asked for it.\n"
        )
    lines = [f"#### {code_cell(run.spec_id)}: run {name} {run.status}", ""]
    if not run.terminal:
        lines.append("Still going; this comment is updated when it ends.")
        return "\n".join(lines) + "\n"
    if run.reason:
        # the platform's words, and a model's: a code span, so no `@name` in them pings anyone
        lines += [f"Why it {run.status}, from its logs: {code_span(run.reason)}", ""]
    elif not run.succeeded:
        lines += [f"The run {run.status}; its logs give no reason.", ""]
    if run.problem:
        lines.append(f"No figures: {cell(run.problem)}")
    elif run.agents:
        lines += [HEADER, *(agent_row(a) for a in run.agents)]
    else:
        lines.append("No results were produced.")
    if run.leaderboard:
        url = leaderboard_url(run.leaderboard, server_url=server_url, repository=repository, ref=ref)
        lines += ["", f"Leaderboard: {_link(code_cell(run.leaderboard), url)}"]
    return "\n".join(lines) + "\n"


def _tally(runs: Sequence[RunReport]) -> str:
    counts: dict[str, int] = {}
    for r in runs:
        status = "superseded" if r.superseded_by else r.status
        counts[status] = counts.get(status, 0) + 1
    return ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))


RESULTS_HEADING = "### reconciler results\n\n"


def results_body(runs: Sequence[RunReport], *, commit: str, server_url: str, repository: str, ref: str = "HEAD") -> str:
    """The comment for the runs one merge commit submitted (the marker is added by `with_marker`)."""
    head = [
        RESULTS_HEADING.rstrip("\n"),
        "",
        f"Runs submitted by merge commit {commit[:12]}: {_tally(runs)}.",
        "",
    ]
    sections = [run_section(r, server_url=server_url, repository=repository, ref=ref) for r in runs]
    return "\n".join(head) + "\n" + "\n".join(sections)


def summary_markdown(runs: Sequence[RunReport], *, server_url: str, repository: str, ref: str = "HEAD") -> str:
    """The job summary section: every reported run, whether or not a pull request asked for it."""
    if not runs:
        return "### reconciler results\n\nNo runs to report.\n"
    sections = [run_section(r, server_url=server_url, repository=repository, ref=ref) for r in runs]
    return f"### reconciler results\n\n{_tally(runs)}.\n\n" + "\n".join(sections)


def commit_status(runs: Sequence[RunReport], target_url: str | None) -> CommitStatus:
    """pending while any run is going; success when every run finished or was superseded (a later
    change of its spec replaced it); failure otherwise."""
    superseded = sum(1 for r in runs if r.superseded_by)
    going = sum(1 for r in runs if not r.terminal and not r.superseded_by)
    finished = sum(1 for r in runs if r.succeeded and not r.superseded_by)
    total = len(runs)
    if going:
        state, text = "pending", f"{going} of {total} run(s) still going"
    elif finished + superseded == total:
        state, text = "success", f"all {total} run(s) finished"
        if superseded:
            text = f"{finished} run(s) finished, {superseded} superseded by a later run"
    else:
        state, text = "failure", f"{total - finished} of {total} run(s) did not finish"
    return CommitStatus(state=state, context=RESULTS_CONTEXT, description=text, target_url=target_url)
