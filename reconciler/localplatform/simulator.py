"""The run simulator: the whole schedule of a run, computed once at submit.

Deterministic and lazy. `build_schedule` draws everything from hashlib-seeded RNGs keyed by
the platform seed, the run id, the run's content digest and the slot, never from Python's
`hash` or the wall clock; nothing runs in the background. What a run looks like at a given
moment is derived from the schedule and the simulated elapsed time (`timeline.py`).

Times are simulated seconds since submit. The run is `pending` until `queued_at`, `queued`
until `running_at`, then its attempts run with at most `max_concurrent_attempts` overlapping
(first free slot wins; intervals are half-open, so one attempt ends exactly when the next
starts), and the run ends at `end_at` as `finished`, or `failed` for a small seeded fraction of
runs. Each agent also fails for a small seeded fraction; its unstarted attempts are then
cancelled, so not every expected result lands and the run ends `failed` too ("finished: Every
expected result landed", the Benchmarks page's Status Lifecycle). A failed run never ranks.

Attempt outcomes come from an agent-skill × task-difficulty model:
    p(pass) = logistic(skill(model) + offset(harness) − difficulty(task) − benchmark offset)
with a per-task offset shared by every agent, so agents disagree on a realistic few tasks.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import math
import random
from dataclasses import dataclass
from typing import Any

from ..core.world import RunStatus
from .catalog import TaskSpec

FORCE_ENV = "LOCALPLATFORM_FORCE_STATUS"  # "failed" or "finished": a test hook in [env] / [agents.env]
RUN_FAILURE_RATE = 0.02
AGENT_FAILURE_RATE = 0.03
ERROR_RATE = 0.025

MODEL_SKILL: dict[str, float] = {
    "openai/gpt-5.2": 1.3,
    "openai/gpt-5": 1.1,
    "openai/gpt-5-mini": 0.3,
    "openai/gpt-4.1": 0.4,
    "openai/o3": 1.0,
    "anthropic/claude-opus-4.5": 1.5,
    "anthropic/claude-sonnet-4.5": 1.2,
    "anthropic/claude-sonnet-4": 0.9,
    "anthropic/claude-haiku-4.5": 0.2,
    "google/gemini-3-pro": 1.2,
    "google/gemini-2.5-pro": 0.8,
    "google/gemini-2.5-flash": 0.1,
    "deepseek/deepseek-v3.2": 0.6,
    "moonshotai/kimi-k2": 0.5,
    "qwen/qwen3-coder": 0.4,
    "x-ai/grok-4": 0.9,
}
# USD per million (input, output) tokens
MODEL_PRICE: dict[str, tuple[float, float]] = {
    "openai/gpt-5.2": (1.75, 14.0),
    "openai/gpt-5": (1.25, 10.0),
    "openai/gpt-5-mini": (0.25, 2.0),
    "anthropic/claude-opus-4.5": (5.0, 25.0),
    "anthropic/claude-sonnet-4.5": (3.0, 15.0),
    "anthropic/claude-haiku-4.5": (1.0, 5.0),
    "google/gemini-3-pro": (2.0, 12.0),
    "google/gemini-2.5-flash": (0.3, 2.5),
}
HARNESS_OFFSET: dict[str, float] = {
    "terminus-2": 0.0,
    "codex": 0.15,
    "claude-code": 0.2,
    "openhands": 0.05,
    "cursor-cli": 0.1,
    "mini-swe-agent": -0.15,
    "gemini-cli": 0.0,
    "opencode": 0.05,
}
DIFFICULTY_LEVEL: dict[str | None, float] = {"easy": -1.6, "medium": 0.0, "hard": 1.6, None: 0.4}
DIFFICULTY_LENGTH: dict[str | None, float] = {"easy": 0.5, "medium": 1.0, "hard": 1.8, None: 1.1}
AGENT_FAILURES = (
    "sandbox provisioning failed: image pull timed out",
    "harness crashed: exit code 137 (out of memory)",
    "model provider rejected the agent's API key (HTTP 401)",
)
RUN_FAILURES = (
    "runner lost its connection to the sandbox pool",
    "workflow worker was evicted and could not resume",
)


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()


def rng_for(*parts: object) -> random.Random:
    """A private RNG seeded from the parts through sha256."""
    return random.Random(int.from_bytes(_digest(*parts)[:16], "big"))


def unit(*parts: object) -> float:
    """A stable number in [0, 1) from the parts."""
    return int.from_bytes(_digest(*parts)[:8], "big") / 2**64


def model_skill(model: str) -> float:
    key = model.lower()
    if key in MODEL_SKILL:
        return MODEL_SKILL[key]
    return round(unit("skill", key) * 2.0 - 1.0, 3)  # an unknown model: somewhere in [-1, 1)


def model_price(model: str) -> tuple[float, float]:
    key = model.lower()
    if key in MODEL_PRICE:
        return MODEL_PRICE[key]
    scale = 0.5 + 2.5 * unit("price", key)
    return round(scale, 3), round(scale * 5, 3)


@dataclass(frozen=True)
class AgentPlan:
    model: str  # the model label (provider/model, endpoint model, or hosted LoRA name)
    harness: str | None  # the effective harness (the benchmark default when omitted)
    force: str | None = None  # FORCE_ENV value in this agent's env


@dataclass(frozen=True)
class SimInput:
    seed: int
    run_id: str
    content: str  # digest of the canonical submit payload
    tasks: tuple[TaskSpec, ...]
    agents: tuple[AgentPlan, ...]
    attempts: int = 1
    max_concurrent: int = 4
    max_retries: int = 0
    timeout_multiplier: float = 1.0
    difficulty_offset: float = 0.0
    base_duration: float = 120.0
    timeout_seconds: float = 1800.0
    force: str | None = None  # FORCE_ENV value in the run's [env]


@dataclass(frozen=True)
class Slot:
    """One task × agent × attempt. `start` is None when it never started (cancelled)."""

    agent: int
    task: int
    attempt: int  # 1-based
    start: float | None
    end: float
    outcome: str  # passed | failed | errored | cancelled
    input_tokens: int
    output_tokens: int
    cost_usd: float
    result_id: str

    @property
    def duration(self) -> float:
        return 0.0 if self.start is None else round(self.end - self.start, 3)

    def cut(self, at: float, outcome_if_started: str) -> Slot:
        """This slot interrupted at `at`: in flight -> `outcome_if_started`, not started -> cancelled."""
        if self.start is not None and self.start < at:
            share = (at - self.start) / max(self.end - self.start, 1e-9)
            return Slot(
                self.agent,
                self.task,
                self.attempt,
                self.start,
                at,
                outcome_if_started,
                int(self.input_tokens * share),
                int(self.output_tokens * share),
                round(self.cost_usd * share, 6),
                self.result_id,
            )
        return Slot(self.agent, self.task, self.attempt, None, at, "cancelled", 0, 0, 0.0, self.result_id)


@dataclass(frozen=True)
class Schedule:
    queued_at: float
    running_at: float
    end_at: float
    final_status: str  # finished | failed
    failure: str | None
    agent_end: tuple[float, ...]
    agent_status: tuple[str, ...]  # finished | failed
    agent_failure: tuple[str | None, ...]
    max_concurrent: int
    slots: tuple[Slot, ...]

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "v": 1,
            "queued_at": self.queued_at,
            "running_at": self.running_at,
            "end_at": self.end_at,
            "final_status": self.final_status,
            "failure": self.failure,
            "agent_end": list(self.agent_end),
            "agent_status": list(self.agent_status),
            "agent_failure": list(self.agent_failure),
            "max_concurrent": self.max_concurrent,
            "slots": [
                [
                    s.agent,
                    s.task,
                    s.attempt,
                    s.start,
                    s.end,
                    s.outcome,
                    s.input_tokens,
                    s.output_tokens,
                    s.cost_usd,
                    s.result_id,
                ]
                for s in self.slots
            ],
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> Schedule:
        data = json.loads(text)
        return cls(
            queued_at=data["queued_at"],
            running_at=data["running_at"],
            end_at=data["end_at"],
            final_status=data["final_status"],
            failure=data["failure"],
            agent_end=tuple(data["agent_end"]),
            agent_status=tuple(data["agent_status"]),
            agent_failure=tuple(data["agent_failure"]),
            max_concurrent=data["max_concurrent"],
            slots=tuple(Slot(*row) for row in data["slots"]),
        )


def _attempt(inp: SimInput, a: int, t: int, k: int) -> tuple[float, str, int, int, float]:
    """(duration, outcome, input tokens, output tokens, cost) of one attempt, run without interruption."""
    agent, task = inp.agents[a], inp.tasks[t]
    rng = rng_for(inp.seed, inp.run_id, inp.content, "slot", a, t, k)
    task_offset = unit("task", task.name) * 1.6 - 0.8
    logit = (
        model_skill(agent.model)
        + HARNESS_OFFSET.get(agent.harness or "", 0.0)
        - DIFFICULTY_LEVEL.get(task.difficulty, 0.4)
        - inp.difficulty_offset
        - task_offset
    )
    p_pass = 1.0 / (1.0 + math.exp(-logit))
    errored = rng.random() < ERROR_RATE * (0.35 ** max(inp.max_retries, 0))
    passed = rng.random() < p_pass
    length = inp.base_duration * DIFFICULTY_LENGTH.get(task.difficulty, 1.1) * rng.lognormvariate(0.0, 0.45)
    if passed:
        length *= 0.8
    timeout = inp.timeout_seconds * inp.timeout_multiplier
    outcome = "passed" if passed else "failed"
    if errored:
        outcome, length = "errored", length * 0.3
    elif length >= timeout:
        outcome, length = "failed", timeout  # timed out
    duration = round(max(length, 5.0), 3)
    input_tokens = int(duration * rng.uniform(250.0, 600.0))
    output_tokens = int(input_tokens * rng.uniform(0.04, 0.12))
    price_in, price_out = model_price(agent.model)
    cost = round((input_tokens * price_in + output_tokens * price_out) / 1e6, 6)
    return duration, outcome, input_tokens, output_tokens, cost


def result_id(run_id: str, a: int, t: int, k: int) -> str:
    return "r" + hashlib.sha256(f"{run_id}|{a}|{t}|{k}".encode()).hexdigest()[:15]


def _fails(inp: SimInput, force: str | None, rate: float, *parts: object) -> bool:
    if force == RunStatus.FAILED:
        return True
    if force == RunStatus.FINISHED:
        return False
    return unit(inp.seed, inp.run_id, inp.content, *parts) < rate


def build_schedule(inp: SimInput) -> Schedule:
    """Every slot's start, end and outcome, and the run's and agents' final states."""
    rng = rng_for(inp.seed, inp.run_id, inp.content, "phases")
    queued_at = round(20.0 + 20.0 * rng.random(), 3)
    running_at = round(queued_at + 10.0 + 30.0 * rng.random(), 3)
    # never more lanes than attempts: a concurrency of 10**18 must not become a list of that size
    concurrency = max(1, min(inp.max_concurrent, inp.attempts * max(1, len(inp.tasks)) * max(1, len(inp.agents))))
    free = [running_at] * concurrency
    heapq.heapify(free)
    slots: list[Slot] = []
    for k in range(1, inp.attempts + 1):
        for t in range(len(inp.tasks)):
            for a in range(len(inp.agents)):
                duration, outcome, tin, tout, cost = _attempt(inp, a, t, k)
                start = heapq.heappop(free)
                end = round(start + duration, 3)
                heapq.heappush(free, end)
                slots.append(Slot(a, t, k, start, end, outcome, tin, tout, cost, result_id(inp.run_id, a, t, k)))

    agent_end: list[float] = []
    agent_status: list[str] = []
    agent_failure: list[str | None] = []
    for a, agent in enumerate(inp.agents):
        mine = [s for s in slots if s.agent == a]
        first = min((s.start for s in mine if s.start is not None), default=running_at)
        last = max((s.end for s in mine), default=running_at)
        if _fails(inp, agent.force, AGENT_FAILURE_RATE, "agent-fail", a):
            at = round(first + (last - first) * (0.2 + 0.6 * unit(inp.seed, inp.run_id, "agent-at", a)), 3)
            slots = [s.cut(at, "errored") if s.agent == a and s.end > at else s for s in slots]
            agent_end.append(at)
            agent_status.append(RunStatus.FAILED)
            agent_failure.append(AGENT_FAILURES[int(unit(inp.run_id, "agent-why", a) * len(AGENT_FAILURES))])
        else:
            agent_end.append(last)
            agent_status.append(RunStatus.FINISHED)
            agent_failure.append(None)

    end_at = max(agent_end, default=running_at)
    failure: str | None = None
    final_status = RunStatus.FINISHED
    if _fails(inp, inp.force, RUN_FAILURE_RATE, "run-fail"):
        at = round(running_at + (end_at - running_at) * (0.1 + 0.8 * unit(inp.seed, inp.run_id, "run-at")), 3)
        slots = [s.cut(at, "errored") if s.end > at else s for s in slots]
        for a in range(len(agent_end)):
            if agent_end[a] > at:
                agent_end[a], agent_status[a] = at, RunStatus.FAILED
                agent_failure[a] = agent_failure[a] or "the run failed"
        end_at, final_status = at, RunStatus.FAILED
        failure = RUN_FAILURES[int(unit(inp.run_id, "run-why") * len(RUN_FAILURES))]
    elif agent_status and all(s == RunStatus.FAILED for s in agent_status):
        final_status, failure = RunStatus.FAILED, "every agent failed"
    elif RunStatus.FAILED in agent_status:
        failed = [a for a, status in enumerate(agent_status) if status == RunStatus.FAILED]
        final_status = RunStatus.FAILED
        failure = "; ".join(f"agent {a} ({inp.agents[a].model}) failed: {agent_failure[a]}" for a in failed)
    return Schedule(
        queued_at=queued_at,
        running_at=running_at,
        end_at=end_at,
        final_status=final_status,
        failure=failure,
        agent_end=tuple(agent_end),
        agent_status=tuple(agent_status),
        agent_failure=tuple(agent_failure),
        max_concurrent=concurrency,
        slots=tuple(slots),
    )
