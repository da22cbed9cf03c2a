"""The platform's config rules (docs/platform-api.md §4), as one table.

Each rule is a function over a parsed `RunConfig` that yields `Finding`s. `validate` runs the
offline rules; `plan` and the local platform pass `BenchmarkFacts` as well, which switches on
the rules that need the benchmark's manifest (judge, harness support, task selection).
The local platform rejects a submit with the same findings, so the two cannot drift.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from .diagnostics import KeyPath, Severity
from .run_config import EndpointModel, HostedModel, RunConfig

SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")
RESERVED_ENV_PREFIX = "_OSMOSIS_"
MAX_AGENTS = 8
MAX_SECRET_LIST = 16
MAX_SECRET_NAME_LENGTH = 255
PUBLISHED_TASK_SETS = ("parity",)
HF_TOKEN = "HF_TOKEN"
RUNNER_RESERVED_MODEL_KEYS = ("DAYTONA_API_KEY", "DAYTONA_API_URL")
KNOWN_HARNESSES = (
    "codex",
    "claude-code",
    "terminus-2",
    "openhands",
    "cursor-cli",
    "mini-swe-agent",
    "gemini-cli",
    "opencode",
)


@dataclass(frozen=True)
class HarnessSecret:
    name: str
    required: bool


# The harnesses that authenticate separately from the model, and the variable each reads.
HARNESS_SECRETS: dict[str, HarnessSecret] = {
    "cursor-cli": HarnessSecret("CURSOR_API_KEY", required=True),
    # "Set that agent's `harness_api_key_secret` to `CURSOR_API_KEY` for Cursor CLI, or to
    # `MSWEA_API_KEY` for Mini SWE-agent" (the CLI page): both are required alike.
    "mini-swe-agent": HarnessSecret("MSWEA_API_KEY", required=True),
}

# Prefixes of well-known credential formats; a secret field holding one is a pasted key.
CREDENTIAL_PREFIXES = (
    "sk-",
    "sk_",
    "ghp_",
    "gho_",
    "ghs_",
    "ghu_",
    "github_pat_",
    "xox",
    "hf_",
    "AIza",
    "eyJ",
    "glpat-",
    "pk_",
    "rk_",
)

# AWS access key ids: spelled like a record name, so matched by their whole shape, not a prefix
_AWS_KEY_ID = re.compile(r"(?:AKIA|ASIA)[A-Z0-9]{16}")

SECRET_HINT = "store the value with `osmosis secret set NAME` and put only NAME here"


class TaskInfo(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    category: str | None = None
    difficulty: str | None = None


class BenchmarkFacts(BaseModel):
    """What the rules need to know about the benchmark a config names."""

    model_config = ConfigDict(frozen=True)

    key: str
    name: str
    supports_harness: bool = True
    requires_harness: bool = False
    requires_judge_model: bool = False
    requires_judge_api_key: bool = False
    task_sets: tuple[str, ...] = ()
    recommended_task_set: str | None = None
    tasks: tuple[TaskInfo, ...] = ()
    required_secret_names: tuple[str, ...] = Field(default_factory=tuple)
    default_harness: str | None = None  # the harness the benchmark's published scores were measured on


@dataclass(frozen=True)
class Finding:
    path: KeyPath
    code: str
    message: str
    severity: Severity = Severity.ERROR
    hint: str | None = None


Check = Callable[[RunConfig, BenchmarkFacts | None], Iterator[Finding]]


@dataclass(frozen=True)
class Rule:
    code: str
    summary: str
    check: Check
    needs_benchmark: bool = False


# --- helpers ----------------------------------------------------------------


def looks_like_credential(value: str) -> bool:
    """True for values that are almost surely a pasted key rather than a record name.

    A value spelled like a record name (`ANTHROPIC_API_KEY_TEAM_2`) is judged by its words: it is
    a key when it holds an AWS key id, or when its random-looking words (12 or more characters,
    letters and digits mixed at a key's entropy) add up to a key's length; a long name made of
    ordinary words is a name, however varied its letters. Anything else is judged whole.
    """
    if value.startswith(CREDENTIAL_PREFIXES) or _AWS_KEY_ID.search(value):
        return True
    if not SECRET_NAME.match(value):
        return len(value) >= 24 and _random_looking(value, 3.5)
    return sum(len(w) for w in value.split("_") if len(w) >= 12 and _random_looking(w, 3.2)) >= 24


def redact(value: str) -> str:
    """Enough of a value to recognise it, never enough to use it."""
    if len(value) <= 6:
        return "…" + f" ({len(value)} chars)"
    return f"{value[:3]}… ({len(value)} chars)"


def _random_looking(word: str, bits: float) -> bool:
    """Letters and digits mixed, at `bits` of entropy per character or more."""
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word) and _entropy(word) >= bits


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _suggest_secret_name(value: str) -> str:
    candidate = re.sub(r"[^A-Z0-9_]", "_", value.upper()).strip("_")
    if candidate and candidate[0].isalpha() and len(candidate) <= 40:
        return candidate
    return "NAME"


def _merged_env(config: RunConfig, agent_index: int) -> dict[str, tuple[KeyPath, str]]:
    """An agent's effective env (`[env]` overlaid by `agents.env`), with where each name is set."""
    merged: dict[str, tuple[KeyPath, str]] = {k: (("env", k), v) for k, v in config.env.items()}
    for k, v in config.agents[agent_index].env.items():
        merged[k] = (("agents", agent_index, "env", k), v)
    return merged


# --- the rules ----------------------------------------------------------------


def _agent_count(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    n = len(config.agents)
    if not 1 <= n <= MAX_AGENTS:
        yield Finding(("agents",), "AGENT_COUNT", f"needs 1 to {MAX_AGENTS} [[agents]] tables, got {n}")


def _task_set(config: RunConfig, facts: BenchmarkFacts | None) -> Iterator[Finding]:
    if config.tasks is None or config.tasks.task_set is None:
        return
    value = config.tasks.task_set
    if value not in PUBLISHED_TASK_SETS:
        yield Finding(
            ("tasks", "task_set"),
            "TASK_SET",
            f'only "parity" is allowed, got {value!r} (the platform would silently run every task);'
            " omit [tasks] for the full benchmark",
        )
    elif facts is not None and value not in facts.task_sets:
        yield Finding(
            ("tasks", "task_set"),
            "TASK_SET_UNKNOWN",
            f"benchmark {facts.key!r} publishes no task set {value!r}",
        )


TASK_SELECTORS = ("task_set", "task_names", "categories")
"""The [tasks] keys, each an alternative to the others ("every task, a named task set,
categories, or explicit task names", the Benchmarks page)."""


def _one_task_selector(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    if config.tasks is None:
        return
    given = config.tasks.selectors
    if len(given) > 1:
        yield Finding(
            ("tasks", given[1]),
            "TASK_SELECTOR_COMBINED",
            f"[tasks] selects by {' and '.join(sorted(given, key=TASK_SELECTORS.index))}; the platform takes one of task_set, task_names or"
            " categories (it would run only one of them): keep one, or omit [tasks] for every task",
        )


def _task_lists(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    if config.tasks is None:
        return
    for field in ("task_names", "categories"):
        values = getattr(config.tasks, field) or []
        seen: set[str] = set()
        for i, value in enumerate(values):
            if not value.strip():
                yield Finding(("tasks", field, i), "TASK_SELECTION", "must not be empty or blank")
            elif value in seen:
                yield Finding(("tasks", field, i), "TASK_SELECTION", f"{value!r} is listed twice")
            seen.add(value)


def _secret_names(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    for path, name in config.secret_references():
        if looks_like_credential(name):
            yield Finding(
                path,
                "CREDENTIAL_VALUE",
                f"holds what looks like a credential value ({redact(name)}), not a secret record name;"
                " rotate that key if this was ever pushed",
                hint=SECRET_HINT,
            )
        elif not SECRET_NAME.match(name) or len(name) > MAX_SECRET_NAME_LENGTH:
            suggestion = _suggest_secret_name(name)
            yield Finding(
                path,
                "SECRET_NAME",
                f"{name!r} is not a secret record name (A-Z, 0-9 and _, starting with a letter)",
                hint=f"store the value with `osmosis secret set {suggestion}` and put {suggestion} here",
            )


def _secret_list_sizes(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    for table, names in (("verifier", config.verifier), ("secrets", config.secrets)):
        if names is not None and len(names.required) > MAX_SECRET_LIST:
            yield Finding(
                (table, "required"),
                "SECRET_LIST_SIZE",
                f"lists {len(names.required)} names; at most {MAX_SECRET_LIST} are allowed",
            )


def _env_names(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    scopes: list[tuple[KeyPath, dict[str, str]]] = [(("env",), config.env)]
    scopes += [(("agents", i, "env"), a.env) for i, a in enumerate(config.agents)]
    for base, env in scopes:
        for name in env:
            path = (*base, name)
            if name.startswith(RESERVED_ENV_PREFIX):
                yield Finding(path, "ENV_RESERVED", f"the prefix {RESERVED_ENV_PREFIX} is reserved by the platform")
            elif not ENV_NAME.match(name):
                yield Finding(
                    path,
                    "ENV_NAME",
                    f"{name!r} is not a valid variable name (A-Z, 0-9 and _, not starting with a digit)",
                )
            elif name == HF_TOKEN:
                yield Finding(
                    path,
                    "HF_TOKEN_RESERVED",
                    "HF_TOKEN is reserved by the benchmark runner; store it as the HF_TOKEN secret record instead",
                    hint="osmosis secret set HF_TOKEN",
                )


def _model_key_reserved(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    for i, agent in enumerate(config.agents):
        if isinstance(agent.model, HostedModel):
            continue
        key = agent.model.api_key_secret
        if key == HF_TOKEN or key in RUNNER_RESERVED_MODEL_KEYS:
            yield Finding(
                ("agents", i, "model", "api_key_secret"),
                "MODEL_KEY_RESERVED",
                f"{key} is reserved by the benchmark runner and cannot be a model's key",
            )


def _harness_known(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    for i, agent in enumerate(config.agents):
        if agent.harness is not None and agent.harness not in KNOWN_HARNESSES:
            yield Finding(
                ("agents", i, "harness"),
                "HARNESS_UNKNOWN",
                f"unknown harness {agent.harness!r}; known: {', '.join(KNOWN_HARNESSES)}",
            )


def _harness_secret(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    for i, agent in enumerate(config.agents):
        rule = HARNESS_SECRETS.get(agent.harness or "")
        given = agent.harness_api_key_secret
        path: KeyPath = ("agents", i, "harness_api_key_secret")
        if rule is None:
            if given is not None:
                harness = agent.harness or "the benchmark's default harness"
                yield Finding(
                    path,
                    "HARNESS_SECRET",
                    f"{harness} does not use harness_api_key_secret; remove it"
                    " (only cursor-cli and mini-swe-agent authenticate separately)",
                )
            continue
        if given is None:
            if rule.required:
                yield Finding(
                    ("agents", i),
                    "HARNESS_SECRET",
                    f'{agent.harness} needs harness_api_key_secret = "{rule.name}"',
                )
        elif given != rule.name and SECRET_NAME.match(given):
            yield Finding(path, "HARNESS_SECRET", f'{agent.harness} reads {rule.name}; set this to "{rule.name}"')
        env = _merged_env(config, i)
        if rule.name in env and not (rule.name == "MSWEA_API_KEY" and isinstance(agent.model, HostedModel)):
            yield Finding(
                env[rule.name][0],
                "ENV_SHADOWS_SECRET",
                f"{agent.harness} receives {rule.name} from the platform; do not set it in env",
            )


def _env_shadows_secret(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    injected: list[tuple[str, str]] = []
    if config.execution and config.execution.judge_api_key_secret:
        injected.append((config.execution.judge_api_key_secret, "the judge secret"))
    injected += [(n, "a verifier secret") for n in (config.verifier.required if config.verifier else [])]
    for i, agent in enumerate(config.agents):
        names = list(injected)
        if not isinstance(agent.model, HostedModel):
            names.insert(0, (agent.model.api_key_secret, "this agent's model key"))
        env = _merged_env(config, i)
        reported: set[KeyPath] = set()
        for name, what in names:
            if name in env and name != HF_TOKEN and env[name][0] not in reported:
                reported.add(env[name][0])
                yield Finding(
                    env[name][0],
                    "ENV_SHADOWS_SECRET",
                    f"{name} is {what}; the platform injects its value under that name, so env may not set it",
                )


def _endpoint_headers(config: RunConfig, _: BenchmarkFacts | None) -> Iterator[Finding]:
    for i, agent in enumerate(config.agents):
        if isinstance(agent.model, EndpointModel) and agent.model.extra_headers:
            for header in agent.model.extra_headers:
                if header.strip().lower() == "authorization":  # " Authorization" is still one
                    yield Finding(
                        ("agents", i, "model", "extra_headers", header),
                        "ENDPOINT_AUTH_HEADER",
                        "endpoint models may not send an Authorization header; use api_key_secret",
                    )


def _hle_parity(config: RunConfig, facts: BenchmarkFacts | None) -> Iterator[Finding]:
    selected = config.tasks.task_set if config.tasks else None
    if selected is not None:
        return
    if facts is not None:
        wants_parity = facts.recommended_task_set == "parity"
    else:
        wants_parity = re.search(r"(^|[^a-z])hle([^a-z]|$)", config.experiment.benchmark.lower()) is not None
    if wants_parity:
        yield Finding(
            ("tasks",) if config.tasks else ("experiment", "benchmark"),
            "HLE_PARITY_RECOMMENDED",
            'this benchmark recommends the published parity set; add task_set = "parity" under [tasks]',
            severity=Severity.WARNING,
        )


def _harness_not_default(config: RunConfig, facts: BenchmarkFacts | None) -> Iterator[Finding]:
    # "When a benchmark's published scores were measured on a specific harness, that harness is
    # reported as the default. ... a run on another harness is not comparable with those scores."
    assert facts is not None
    default = facts.default_harness
    if default is None:
        return
    for i, agent in enumerate(config.agents):
        if agent.harness is not None and agent.harness != default:
            yield Finding(
                ("agents", i, "harness"),
                "HARNESS_NOT_DEFAULT",
                f"{facts.name}'s published scores were measured on {default}; a run on {agent.harness}"
                " is not comparable with them (omit harness to use the default)",
                severity=Severity.WARNING,
            )


def _judge(config: RunConfig, facts: BenchmarkFacts | None) -> Iterator[Finding]:
    assert facts is not None
    execution = config.execution
    judge_key = execution.judge_api_key_secret if execution else None
    judge_model = execution.judge_model if execution else None
    if facts.requires_judge_api_key and judge_key is None:
        yield Finding(
            ("execution",) if execution else ("experiment", "benchmark"),
            "JUDGE_REQUIRED",
            f"benchmark {facts.key!r} is judged by an LLM: set judge_api_key_secret under [execution]",
        )
    if not facts.requires_judge_api_key and judge_key is not None:
        yield Finding(
            ("execution", "judge_api_key_secret"),
            "JUDGE_NOT_USED",
            f"benchmark {facts.key!r} has no judge; remove judge_api_key_secret",
        )
    if not facts.requires_judge_model and judge_model is not None:
        yield Finding(
            ("execution", "judge_model"),
            "JUDGE_NOT_USED",
            f"benchmark {facts.key!r} does not take a judge_model; remove it",
        )


def _harness_support(config: RunConfig, facts: BenchmarkFacts | None) -> Iterator[Finding]:
    assert facts is not None
    for i, agent in enumerate(config.agents):
        if not facts.supports_harness and agent.harness is not None:
            yield Finding(
                ("agents", i, "harness"),
                "HARNESS_NOT_SUPPORTED",
                f"benchmark {facts.key!r} runs without a harness; remove harness",
            )
        if facts.requires_harness and agent.harness is None:
            yield Finding(("agents", i), "HARNESS_REQUIRED", f"benchmark {facts.key!r} needs a harness")


def _task_selection_exists(config: RunConfig, facts: BenchmarkFacts | None) -> Iterator[Finding]:
    assert facts is not None
    if config.tasks is None:
        return
    names = {t.name for t in facts.tasks}
    categories = {t.category for t in facts.tasks if t.category}
    for field, known in (("task_names", names), ("categories", categories)):
        for i, value in enumerate(getattr(config.tasks, field) or []):
            if value.strip() and value not in known:
                what = "task" if field == "task_names" else "category"
                yield Finding(
                    ("tasks", field, i),
                    "TASK_NOT_FOUND",
                    f"benchmark {facts.key!r} has no {what} {value!r}",
                )


RULES: tuple[Rule, ...] = (
    Rule("AGENT_COUNT", "1 to 8 [[agents]] tables", _agent_count),
    Rule("TASK_SET", 'task_set is only "parity" (and one the benchmark publishes)', _task_set),
    Rule("TASK_SELECTOR_COMBINED", "[tasks] uses one of task_set, task_names, categories", _one_task_selector),
    Rule("TASK_SELECTION", "task names and categories are non-blank and unique", _task_lists),
    Rule("SECRET_NAME", "secret fields hold record names, never credential values", _secret_names),
    Rule("SECRET_LIST_SIZE", "[verifier] and [secrets] list at most 16 names", _secret_list_sizes),
    Rule("ENV_NAME", "env names are valid, not _OSMOSIS_-prefixed, never HF_TOKEN", _env_names),
    Rule("MODEL_KEY_RESERVED", "HF_TOKEN and DAYTONA_* are never a model key", _model_key_reserved),
    Rule("HARNESS_UNKNOWN", "harness names are ones the platform knows", _harness_known),
    Rule("HARNESS_SECRET", "only cursor-cli and mini-swe-agent take harness_api_key_secret", _harness_secret),
    Rule("ENV_SHADOWS_SECRET", "env never redefines an injected secret", _env_shadows_secret),
    Rule("ENDPOINT_AUTH_HEADER", "endpoint extra_headers carry no Authorization", _endpoint_headers),
    Rule("HLE_PARITY_RECOMMENDED", "warn when a parity-set benchmark runs without it", _hle_parity),
    Rule("JUDGE", "judge fields match the benchmark's judge requirement", _judge, needs_benchmark=True),
    Rule(
        "HARNESS_SUPPORT",
        "harness matches the benchmark's harness support",
        _harness_support,
        needs_benchmark=True,
    ),
    Rule(
        "HARNESS_NOT_DEFAULT",
        "warn when an agent's harness is not the one the benchmark's published scores used",
        _harness_not_default,
        needs_benchmark=True,
    ),
    Rule(
        "TASK_NOT_FOUND",
        "task names and categories exist in the benchmark",
        _task_selection_exists,
        needs_benchmark=True,
    ),
)


def check(config: RunConfig, facts: BenchmarkFacts | None = None) -> list[Finding]:
    """Every finding of every applicable rule, in rule order."""
    findings: list[Finding] = []
    for rule in RULES:
        if rule.needs_benchmark and facts is None:
            continue
        findings.extend(rule.check(config, facts))
    return findings
