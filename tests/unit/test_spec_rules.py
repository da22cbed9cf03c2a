"""The platform's config rules (`reconciler.specs.rules.check`) and the key-position scanner.

Each rule test builds the smallest config that breaks (or just keeps) one rule and states the
findings as `(dotted key, code)` pairs, so a test reads like a line of the contract.
"""

from __future__ import annotations

import copy
import tomllib
from typing import Any

import pytest

from reconciler.specs.diagnostics import Severity, dotted
from reconciler.specs.rules import BenchmarkFacts, Finding, TaskInfo, check, looks_like_credential, redact
from reconciler.specs.run_config import RunConfig
from reconciler.specs.toml_positions import key_positions, locate

Doc = dict[str, Any]


def provider(key: str = "OPENAI_API_KEY") -> Doc:
    return {"type": "provider", "model": "openai/gpt-5.2", "api_key_secret": key}


def endpoint(key: str = "ACME_API_KEY", headers: dict[str, str] | None = None) -> Doc:
    model: Doc = {
        "type": "endpoint",
        "base_url": "https://llm.example.com/v1",
        "model": "acme/coder",
        "api_key_secret": key,
    }
    if headers is not None:
        model["extra_headers"] = headers
    return model


def hosted() -> Doc:
    return {"type": "hosted", "base_model": "Qwen/Qwen3-8B", "lora_model_name": "acme-lora"}


def agent(harness: str | None = "codex", model: Doc | None = None, **extra: Any) -> Doc:
    out: Doc = {"model": model or provider(), **extra}
    if harness is not None:
        out["harness"] = harness
    return out


def config(*agents: Doc, benchmark: str = "terminal-bench-2-1", **tables: Any) -> Doc:
    return {"experiment": {"benchmark": benchmark}, "agents": list(agents) or [agent()], **tables}


def run(doc: Doc, facts: BenchmarkFacts | None = None) -> list[Finding]:
    return check(RunConfig.model_validate(doc), facts)


def findings(doc: Doc, facts: BenchmarkFacts | None = None) -> list[tuple[str, str]]:
    return [(dotted(f.path), f.code) for f in run(doc, facts)]


def facts(**kw: Any) -> BenchmarkFacts:
    return BenchmarkFacts(key="bench", name="Bench", **kw)


# --- the documented smoke example ----------------------------------------------------------------

OFFICIAL_SMOKE: Doc = {
    "experiment": {"benchmark": "terminal-bench-2-1"},
    "tasks": {"task_names": ["terminal-bench/git-multibranch"]},
    "agents": [agent("codex", provider("OPENAI_API_KEY"))],
    "execution": {"attempts_per_task": 1, "max_concurrent_attempts": 1, "timeout_multiplier": 1.0, "max_retries": 0},
}


def test_the_official_smoke_example_breaks_no_rule() -> None:
    assert findings(OFFICIAL_SMOKE) == []


def test_the_official_smoke_example_breaks_no_rule_with_benchmark_facts() -> None:
    tb = facts(tasks=(TaskInfo(name="terminal-bench/git-multibranch", category="git"),), task_sets=("parity",))
    assert findings(OFFICIAL_SMOKE, tb) == []


# --- agent count ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "expected"), [(0, [("agents", "AGENT_COUNT")]), (1, []), (8, []), (9, [("agents", "AGENT_COUNT")])]
)
def test_a_config_has_one_to_eight_agents(count: int, expected: list[tuple[str, str]]) -> None:
    doc = config()
    doc["agents"] = [agent() for _ in range(count)]
    assert findings(doc) == expected


# --- task selection ------------------------------------------------------------------------------


def test_task_set_other_than_parity_is_refused() -> None:
    assert findings(config(tasks={"task_set": "full"})) == [("tasks.task_set", "TASK_SET")]


def test_task_set_parity_is_accepted_offline() -> None:
    assert findings(config(tasks={"task_set": "parity"})) == []


def test_task_set_parity_is_refused_when_the_benchmark_publishes_none() -> None:
    assert findings(config(tasks={"task_set": "parity"}), facts()) == [("tasks.task_set", "TASK_SET_UNKNOWN")]


@pytest.mark.parametrize("field", ["task_names", "categories"])
@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_a_blank_task_name_or_category_is_refused(field: str, blank: str) -> None:
    assert findings(config(tasks={field: ["git", blank]})) == [(f"tasks.{field}[1]", "TASK_SELECTION")]


@pytest.mark.parametrize("field", ["task_names", "categories"])
def test_a_task_name_or_category_listed_twice_is_refused_at_its_second_place(field: str) -> None:
    assert findings(config(tasks={field: ["a", "b", "a"]})) == [(f"tasks.{field}[2]", "TASK_SELECTION")]


def test_task_names_and_categories_must_exist_in_the_benchmark() -> None:
    bench = facts(tasks=(TaskInfo(name="t/one", category="git"),))
    by_name = config(tasks={"task_names": ["t/one", "t/two"]})
    by_category = config(tasks={"categories": ["git", "web"]})
    assert findings(by_name, bench) == [("tasks.task_names[1]", "TASK_NOT_FOUND")]
    assert findings(by_category, bench) == [("tasks.categories[1]", "TASK_NOT_FOUND")]


# --- secret fields hold record names -------------------------------------------------------------

SECRET_FIELDS = [
    pytest.param("agents[0].model.api_key_secret", config(agent("codex", provider("{}"))), id="provider"),
    pytest.param("agents[0].model.api_key_secret", config(agent("codex", endpoint("{}"))), id="endpoint"),
    pytest.param(
        "agents[0].harness_api_key_secret", config(agent("cursor-cli", harness_api_key_secret="{}")), id="harness"
    ),
    pytest.param("execution.judge_api_key_secret", config(execution={"judge_api_key_secret": "{}"}), id="judge"),
    pytest.param("verifier.required[0]", config(verifier={"required": ["{}"]}), id="verifier"),
    pytest.param("secrets.required[0]", config(secrets={"required": ["{}"]}), id="secrets"),
]


def _with_secret(template: Doc, value: str) -> Doc:
    doc = copy.deepcopy(template)

    def fill(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        return value if node == "{}" else node

    filled: Doc = fill(doc)
    return filled


CREDENTIALS = [
    "sk-proj-Zq81vTnW0cY5pLr3Xe7uKd2Hm9Bs4Ga6",
    "sk_live_51Hq5Lw8Rt2Yx6Vb0Nm4Kp7Jd",
    "ghp_R4nd0mL00k1ngT0k3nVa1u3Xy9Qw2Ez7Pk5Mb",
    "github_pat_11ABCDEFG0123456789_abcdefghij",
    "xoxb-1234-5678-abcdefghijkl",
    "hf_XyZ12AbC34dEf56GhI78jKl90MnO",
    "AKIAIOSFODNN7EXAMPLE",
    "AIzaSyA1b2C3d4E5f6G7h8I9j0K",
    "eyJhbGciOiJIUzI1NiJ9.e30.x",
    "glpat-Ab12Cd34Ef56Gh78Ij90",
    "a8F3kQ9zL2mX7vB4nR6tY1wE5uJ0oP",  # no known prefix, but long, random and with digits
]


@pytest.mark.parametrize("value", CREDENTIALS)
@pytest.mark.parametrize(("key", "template"), SECRET_FIELDS)
def test_a_credential_value_in_any_secret_field_is_refused(key: str, template: Doc, value: str) -> None:
    assert (key, "CREDENTIAL_VALUE") in findings(_with_secret(template, value))


@pytest.mark.parametrize("value", CREDENTIALS)
def test_a_credential_finding_shows_only_a_redacted_prefix_and_points_to_osmosis_secret_set(value: str) -> None:
    (finding,) = [f for f in run(config(agent("codex", provider(value)))) if f.code == "CREDENTIAL_VALUE"]
    assert value not in finding.message
    assert value[-8:] not in finding.message
    assert f"{value[:3]}… ({len(value)} chars)" in finding.message
    assert finding.hint is not None and "osmosis secret set" in finding.hint


@pytest.mark.parametrize(
    ("value", "suggestion"),
    [("openai_api_key", "OPENAI_API_KEY"), ("OPENAI-KEY", "OPENAI_KEY"), ("my key", "MY_KEY"), ("_KEY", "KEY")],
)
def test_a_name_with_lowercase_dashes_or_spaces_is_refused_with_a_suggested_record_name(
    value: str, suggestion: str
) -> None:
    (finding,) = run(config(agent("codex", provider(value))))
    assert (dotted(finding.path), finding.code) == ("agents[0].model.api_key_secret", "SECRET_NAME")
    assert finding.hint is not None and f"osmosis secret set {suggestion}" in finding.hint


@pytest.mark.parametrize("value", ["1PASSWORD_KEY", "", "A" * 256])
def test_a_name_that_starts_with_a_digit_is_empty_or_too_long_is_refused(value: str) -> None:
    assert findings(config(agent("codex", provider(value)))) == [("agents[0].model.api_key_secret", "SECRET_NAME")]


@pytest.mark.parametrize("value", ["OPENAI_API_KEY", "A", "K8S_TOKEN", "A" * 255])
def test_a_record_name_is_accepted(value: str) -> None:
    assert findings(config(agent("codex", provider(value)))) == []


@pytest.mark.parametrize(
    "value",
    [
        "OPENAI_API_KEY",
        "HLE_JUDGE_API_KEY",
        "ANTHROPIC_API_KEY_2",
        "ANTHROPIC_API_KEY_TEAM_2",
        "OPENAI_API_KEY_PRODUCTION_2024",
        "MY_ENDPOINT_KEY_20250101",
        "AZURE_OPENAI_KEY_EASTUS2_PROD",
        "ASIA_PACIFIC_KEY",
        "AKIA_KEY",
    ],
)
def test_record_names_do_not_look_like_credentials(value: str) -> None:
    # contract 4: names match ^[A-Z][A-Z0-9_]*$; a long name of short words is still a name
    assert not looks_like_credential(value)
    assert findings(config(agent("codex", provider(value)))) == []


@pytest.mark.parametrize(
    "value",
    [
        "AKIAIOSFODNN7EXAMPLE",
        "ASIAY34FZKBOKMUTVV7A",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
        "K7Q2X9PLM4R8T1VZ_B3N6W5YHJ0CDFG",  # random words joined by an underscore
        "AKIAIOSFODNN7EXAMPLE_PROD",
    ],
)
def test_key_shaped_upper_case_values_still_look_like_credentials(value: str) -> None:
    # an AWS key id, and one long random word, are spelled like record names but are keys
    assert findings(config(agent("codex", provider(value)))) == [("agents[0].model.api_key_secret", "CREDENTIAL_VALUE")]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("abc", "… (3 chars)"),
        ("abcdef", "… (6 chars)"),
        ("abcdefg", "abc… (7 chars)"),
        ("sk-proj-0123", "sk-… (12 chars)"),
    ],
)
def test_redact_shows_at_most_three_characters_and_the_length(value: str, shown: str) -> None:
    assert redact(value) == shown


@pytest.mark.parametrize("table", ["verifier", "secrets"])
def test_a_secret_list_holds_at_most_sixteen_names(table: str) -> None:
    names = [f"NAME_{i}" for i in range(17)]
    sixteen: dict[str, Any] = {table: {"required": names[:16]}}
    seventeen: dict[str, Any] = {table: {"required": names}}
    assert findings(config(**sixteen)) == []
    assert findings(config(**seventeen)) == [(f"{table}.required", "SECRET_LIST_SIZE")]


# --- env names -----------------------------------------------------------------------------------


def _env_doc(scope: str, name: str, value: str = "x") -> Doc:
    if scope == "env":
        return config(env={name: value})
    return config(agent(env={name: value}))


ENV_SCOPES = {"env": "env", "agents.env": "agents[0].env"}


@pytest.mark.parametrize("scope", ENV_SCOPES)
@pytest.mark.parametrize("name", ["1BAD", "my-var", "lower", "A B", "É"])
def test_an_invalid_env_name_is_refused(scope: str, name: str) -> None:
    assert findings(_env_doc(scope, name)) == [(f"{ENV_SCOPES[scope]}.{name}", "ENV_NAME")]


@pytest.mark.parametrize("scope", ENV_SCOPES)
def test_the_osmosis_prefix_is_reserved_in_env(scope: str) -> None:
    assert findings(_env_doc(scope, "_OSMOSIS_RUN")) == [(f"{ENV_SCOPES[scope]}._OSMOSIS_RUN", "ENV_RESERVED")]


@pytest.mark.parametrize("scope", ENV_SCOPES)
def test_hf_token_is_reserved_in_env(scope: str) -> None:
    (finding,) = run(_env_doc(scope, "HF_TOKEN", "hf_XyZ12AbC34dEf56GhI78jKl90MnO"))
    assert (dotted(finding.path), finding.code) == (f"{ENV_SCOPES[scope]}.HF_TOKEN", "HF_TOKEN_RESERVED")
    assert "hf_XyZ" not in finding.message


@pytest.mark.parametrize("scope", ENV_SCOPES)
@pytest.mark.parametrize("name", ["LOG_LEVEL", "_PRIVATE", "A1", "_"])
def test_a_valid_env_name_is_accepted(scope: str, name: str) -> None:
    assert findings(_env_doc(scope, name)) == []


# --- reserved model keys -------------------------------------------------------------------------


@pytest.mark.parametrize("model", [provider, endpoint])
@pytest.mark.parametrize("key", ["HF_TOKEN", "DAYTONA_API_KEY", "DAYTONA_API_URL"])
def test_a_runner_reserved_name_is_never_a_model_key(model: Any, key: str) -> None:
    assert findings(config(agent("codex", model(key)))) == [("agents[0].model.api_key_secret", "MODEL_KEY_RESERVED")]


def test_daytona_names_may_be_other_secrets() -> None:
    assert findings(config(secrets={"required": ["DAYTONA_API_KEY"]})) == []


# --- harnesses -----------------------------------------------------------------------------------

KNOWN = ["codex", "claude-code", "terminus-2", "openhands", "cursor-cli", "mini-swe-agent", "gemini-cli", "opencode"]


@pytest.mark.parametrize("harness", [h for h in KNOWN if h not in ("cursor-cli", "mini-swe-agent")])
def test_a_known_harness_is_accepted(harness: str) -> None:
    assert findings(config(agent(harness))) == []


@pytest.mark.parametrize("harness", ["aider", "Codex", "claude_code", ""])
def test_an_unknown_harness_is_refused(harness: str) -> None:
    assert findings(config(agent(harness))) == [("agents[0].harness", "HARNESS_UNKNOWN")]


@pytest.mark.parametrize(
    ("harness", "secret", "expected"),
    [
        ("codex", "OPENAI_API_KEY", [("agents[0].harness_api_key_secret", "HARNESS_SECRET")]),
        ("claude-code", "CURSOR_API_KEY", [("agents[0].harness_api_key_secret", "HARNESS_SECRET")]),
        (None, "CURSOR_API_KEY", [("agents[0].harness_api_key_secret", "HARNESS_SECRET")]),
        (None, "MSWEA_API_KEY", [("agents[0].harness_api_key_secret", "HARNESS_SECRET")]),
        ("cursor-cli", None, [("agents[0]", "HARNESS_SECRET")]),
        ("cursor-cli", "CURSOR_API_KEY", []),
        ("cursor-cli", "CURSOR_KEY", [("agents[0].harness_api_key_secret", "HARNESS_SECRET")]),
        # "Set that agent's `harness_api_key_secret` to `CURSOR_API_KEY` for Cursor CLI, or to
        # `MSWEA_API_KEY` for Mini SWE-agent." (the CLI page, Secrets)
        ("mini-swe-agent", None, [("agents[0]", "HARNESS_SECRET")]),
        ("mini-swe-agent", "MSWEA_API_KEY", []),
        ("mini-swe-agent", "MINI_SWE_KEY", [("agents[0].harness_api_key_secret", "HARNESS_SECRET")]),
    ],
)
def test_only_cursor_cli_and_mini_swe_agent_take_their_own_harness_secret(
    harness: str | None, secret: str | None, expected: list[tuple[str, str]]
) -> None:
    extra: dict[str, Any] = {"harness_api_key_secret": secret} if secret is not None else {}
    assert findings(config(agent(harness, **extra))) == expected


def test_a_badly_named_harness_secret_is_reported_once_as_a_name_problem() -> None:
    doc = config(agent("cursor-cli", harness_api_key_secret="cursor_api_key"))
    assert findings(doc) == [("agents[0].harness_api_key_secret", "SECRET_NAME")]


@pytest.mark.parametrize("scope", ENV_SCOPES)
def test_cursor_cli_may_not_set_its_own_key_in_env(scope: str) -> None:
    cursor = agent("cursor-cli", harness_api_key_secret="CURSOR_API_KEY")
    if scope == "env":
        doc = config(cursor, env={"CURSOR_API_KEY": "x"})
    else:
        doc = config({**cursor, "env": {"CURSOR_API_KEY": "x"}})
    assert findings(doc) == [(f"{ENV_SCOPES[scope]}.CURSOR_API_KEY", "ENV_SHADOWS_SECRET")]


def test_mini_swe_agent_with_a_provider_model_may_not_set_mswea_api_key_in_env() -> None:
    doc = config(agent("mini-swe-agent", env={"MSWEA_API_KEY": "x"}, harness_api_key_secret="MSWEA_API_KEY"))
    assert findings(doc) == [("agents[0].env.MSWEA_API_KEY", "ENV_SHADOWS_SECRET")]


def test_mini_swe_agent_with_a_hosted_model_may_set_mswea_api_key_in_env() -> None:
    mini = agent("mini-swe-agent", hosted(), env={"MSWEA_API_KEY": "x"}, harness_api_key_secret="MSWEA_API_KEY")
    assert findings(config(mini)) == []


def test_benchmark_without_harness_support_refuses_every_harness() -> None:
    assert findings(config(agent("codex")), facts(supports_harness=False)) == [
        ("agents[0].harness", "HARNESS_NOT_SUPPORTED")
    ]


def test_benchmark_that_requires_a_harness_refuses_an_agent_without_one() -> None:
    doc = config(agent("codex"), agent(None))
    assert findings(doc, facts(requires_harness=True)) == [("agents[1]", "HARNESS_REQUIRED")]


# --- env may not redefine an injected secret ----------------------------------------------------


@pytest.mark.parametrize("scope", ENV_SCOPES)
def test_env_may_not_set_the_agents_model_key(scope: str) -> None:
    assert findings(_env_doc(scope, "OPENAI_API_KEY")) == [
        (f"{ENV_SCOPES[scope]}.OPENAI_API_KEY", "ENV_SHADOWS_SECRET")
    ]


def test_env_may_set_another_agents_model_key() -> None:
    doc = config(agent("codex", env={"ANTHROPIC_API_KEY": "x"}), agent("claude-code", provider("ANTHROPIC_API_KEY")))
    assert findings(doc) == []


@pytest.mark.parametrize("scope", ENV_SCOPES)
def test_env_may_not_set_the_judge_secret(scope: str) -> None:
    doc = _env_doc(scope, "JUDGE_KEY")
    doc["execution"] = {"judge_api_key_secret": "JUDGE_KEY"}
    assert findings(doc) == [(f"{ENV_SCOPES[scope]}.JUDGE_KEY", "ENV_SHADOWS_SECRET")]


@pytest.mark.parametrize("scope", ENV_SCOPES)
def test_env_may_not_set_a_verifier_secret(scope: str) -> None:
    doc = _env_doc(scope, "GRADER_KEY")
    doc["verifier"] = {"required": ["OTHER", "GRADER_KEY"]}
    assert findings(doc) == [(f"{ENV_SCOPES[scope]}.GRADER_KEY", "ENV_SHADOWS_SECRET")]


def test_env_may_set_a_name_listed_only_under_secrets() -> None:
    assert findings(config(env={"DATASET_TOKEN": "x"}, secrets={"required": ["DATASET_TOKEN"]})) == []


def test_a_hosted_model_has_no_key_for_env_to_shadow() -> None:
    assert findings(config(agent("codex", hosted(), env={"OPENAI_API_KEY": "x"}))) == []


def test_an_agent_env_overrides_the_shared_env_so_only_the_agent_entry_is_reported() -> None:
    doc = config(agent(env={"OPENAI_API_KEY": "x"}), env={"OPENAI_API_KEY": "y"})
    assert findings(doc) == [("agents[0].env.OPENAI_API_KEY", "ENV_SHADOWS_SECRET")]


# --- endpoint headers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "header", ["Authorization", "authorization", "AUTHORIZATION", "AuThOrIzAtIoN", " Authorization", "authorization\t"]
)
def test_an_endpoint_may_not_send_an_authorization_header(header: str) -> None:
    doc = config(agent("codex", endpoint(headers={"X-Org": "evals", header: "Bearer x"})))
    assert findings(doc) == [(f"agents[0].model.extra_headers.{header}", "ENDPOINT_AUTH_HEADER")]


def test_an_endpoint_may_send_other_headers() -> None:
    assert (
        findings(config(agent("codex", endpoint(headers={"X-Org": "evals", "Proxy-Authorization-Hint": "no"})))) == []
    )


# --- HLE-like benchmarks: a warning, not an error ------------------------------------------------


@pytest.mark.parametrize("benchmark", ["hle", "HLE", "hle-2025", "cais/hle"])
def test_an_hle_benchmark_without_the_parity_set_is_warned_about(benchmark: str) -> None:
    (finding,) = run(config(benchmark=benchmark))
    assert (dotted(finding.path), finding.code, finding.severity) == (
        "experiment.benchmark",
        "HLE_PARITY_RECOMMENDED",
        Severity.WARNING,
    )


def test_the_hle_warning_points_at_the_tasks_table_when_there_is_one() -> None:
    assert findings(config(benchmark="hle", tasks={"task_names": ["q1"]})) == [("tasks", "HLE_PARITY_RECOMMENDED")]


def test_an_hle_benchmark_on_the_parity_set_is_not_warned_about() -> None:
    assert findings(config(benchmark="hle", tasks={"task_set": "parity"})) == []


@pytest.mark.parametrize("benchmark", ["terminal-bench-2-1", "athlete-bench", "hlex"])
def test_other_benchmarks_are_not_warned_about(benchmark: str) -> None:
    assert findings(config(benchmark=benchmark)) == []


def test_with_benchmark_facts_the_recommended_task_set_decides_the_warning() -> None:
    assert findings(config(benchmark="anything"), facts(recommended_task_set="parity")) == [
        ("experiment.benchmark", "HLE_PARITY_RECOMMENDED")
    ]
    assert findings(config(benchmark="hle"), facts()) == []


# --- judge (needs the benchmark's facts) ---------------------------------------------------------


def test_judge_rules_need_benchmark_facts_and_are_skipped_offline() -> None:
    assert findings(config(execution={"judge_api_key_secret": "JUDGE_KEY", "judge_model": "openai/gpt-5.2"})) == []


def test_a_judged_benchmark_needs_the_judge_secret() -> None:
    judged = facts(requires_judge_api_key=True, requires_judge_model=True)
    assert findings(config(), judged) == [("experiment.benchmark", "JUDGE_REQUIRED")]
    assert findings(config(execution={"attempts_per_task": 1}), judged) == [("execution", "JUDGE_REQUIRED")]


def test_a_judged_benchmark_takes_an_optional_judge_model() -> None:
    judged = facts(requires_judge_api_key=True, requires_judge_model=True)
    assert findings(config(execution={"judge_api_key_secret": "JUDGE_KEY"}), judged) == []
    assert findings(config(execution={"judge_api_key_secret": "JUDGE_KEY", "judge_model": "m"}), judged) == []


def test_a_pinned_grader_benchmark_refuses_a_judge_model() -> None:
    pinned = facts(requires_judge_api_key=True)
    doc = config(execution={"judge_api_key_secret": "JUDGE_KEY", "judge_model": "m"})
    assert findings(doc, pinned) == [("execution.judge_model", "JUDGE_NOT_USED")]


def test_a_benchmark_without_a_judge_refuses_both_judge_fields() -> None:
    doc = config(execution={"judge_api_key_secret": "JUDGE_KEY", "judge_model": "m"})
    assert findings(doc, facts()) == [
        ("execution.judge_api_key_secret", "JUDGE_NOT_USED"),
        ("execution.judge_model", "JUDGE_NOT_USED"),
    ]


# --- several rules at once -----------------------------------------------------------------------


def test_every_broken_rule_is_reported_in_one_pass() -> None:
    doc = config(
        agent("aider", provider("sk-proj-Zq81vTnW0cY5pLr3Xe7uKd2Hm9Bs4Ga6")),
        tasks={"task_set": "full"},
        env={"HF_TOKEN": "x"},
    )
    assert sorted(findings(doc)) == [
        ("agents[0].harness", "HARNESS_UNKNOWN"),
        ("agents[0].model.api_key_secret", "CREDENTIAL_VALUE"),
        ("env.HF_TOKEN", "HF_TOKEN_RESERVED"),
        ("tasks.task_set", "TASK_SET"),
    ]


# === key_positions: where each key of a TOML document sits =======================================


def positions(text: str) -> dict[tuple[str | int, ...], tuple[int, int]]:
    tomllib.loads(text)  # the scanner only ever sees valid TOML
    return key_positions(text)


def test_table_headers_and_their_keys_are_recorded_1_based() -> None:
    pos = positions('[experiment]\nbenchmark = "x"\n\n[tasks]\n  task_set = "parity"\n')
    assert pos[("experiment",)] == (1, 1)
    assert pos[("experiment", "benchmark")] == (2, 1)
    assert pos[("tasks",)] == (4, 1)
    assert pos[("tasks", "task_set")] == (5, 3)


def test_arrays_of_tables_are_indexed_like_the_parser_indexes_them() -> None:
    text = (
        "[[agents]]\n"
        'harness = "codex"\n'
        "[agents.model]\n"
        'type = "provider"\n'
        "[[agents]]\n"
        "[agents.model]\n"
        'type = "hosted"\n'
        "[agents.env]\n"
        'A = "1"\n'
    )
    pos = positions(text)
    assert pos[("agents",)] == (1, 1)
    assert pos[("agents", 0)] == (1, 1)
    assert pos[("agents", 0, "harness")] == (2, 1)
    assert pos[("agents", 0, "model", "type")] == (4, 1)
    assert pos[("agents", 1)] == (5, 1)
    assert pos[("agents", 1, "model")] == (6, 1)
    assert pos[("agents", 1, "model", "type")] == (7, 1)
    assert pos[("agents", 1, "env", "A")] == (9, 1)


def test_array_elements_are_recorded_where_each_starts() -> None:
    pos = positions('names = ["a", "b"]\nmore = [\n  "c",\n  # a comment ] with a bracket\n  "d",\n]\n')
    assert pos[("names", 0)] == (1, 10)
    assert pos[("names", 1)] == (1, 15)
    assert pos[("more", 0)] == (3, 3)
    assert pos[("more", 1)] == (5, 3)


def test_inline_table_keys_are_recorded_where_each_is_written() -> None:
    pos = positions('[m]\nextra_headers = { X-Org = "a", "Authorization" = "b" }\n')
    assert pos[("m", "extra_headers")] == (2, 1)
    assert pos[("m", "extra_headers", "X-Org")] == (2, 19)
    assert pos[("m", "extra_headers", "Authorization")] == (2, 32)


def test_inline_tables_inside_arrays_are_indexed() -> None:
    pos = positions('agents = [\n  { harness = "codex" },\n  { model = { type = "hosted" } },\n]\n')
    assert pos[("agents", 0, "harness")] == (2, 5)
    assert pos[("agents", 1, "model", "type")] == (3, 15)


def test_dotted_keys_record_every_prefix() -> None:
    pos = positions('[[agents]]\nmodel.type = "provider"\nmodel . api_key_secret = "K"\n')
    assert pos[("agents", 0, "model")] == (2, 1)
    assert pos[("agents", 0, "model", "type")] == (2, 7)
    assert pos[("agents", 0, "model", "api_key_secret")] == (3, 9)


def test_quoted_keys_and_headers_are_recorded_by_their_name() -> None:
    pos = positions('["env"]\n"MY_VAR" = "1"\n\'LIT\' = "2"\n[ agents . model ]\n')
    assert pos[("env", "MY_VAR")] == (2, 1)
    assert pos[("env", "LIT")] == (3, 1)
    assert pos[("agents", "model")] == (4, 1)


def test_strings_that_look_like_syntax_do_not_confuse_the_scanner() -> None:
    text = (
        'a = "[not] # a = header"\n'
        "b = '''\n[fake]\nx = 1\n'''\n"
        'c = """\n[[fake]]\n"""\n'
        'd = "say \\"hi\\" # ok" # comment [x]\n'
        "[real]\n"
        "e = 1\n"
    )
    pos = positions(text)
    assert ("fake",) not in pos
    assert pos[("d",)] == (9, 1)
    assert pos[("real",)] == (10, 1)
    assert pos[("real", "e")] == (11, 1)


def test_crlf_line_endings_count_lines_the_same() -> None:
    pos = positions('[experiment]\r\nbenchmark = "x"\r\n\r\n[env]\r\nA = "1"\r\n')
    assert pos[("experiment", "benchmark")] == (2, 1)
    assert pos[("env", "A")] == (5, 1)


def test_escapes_in_quoted_keys_are_decoded_like_the_parser_decodes_them() -> None:
    pos = positions('[env]\n"HF\\u005fTOKEN" = "x"\n"TAB\\tNAME" = "y"\n')
    assert pos[("env", "HF_TOKEN")] == (2, 1)
    assert pos[("env", "TAB\tNAME")] == (3, 1)


def test_every_key_the_parser_sees_has_a_position() -> None:
    text = (
        '[experiment]\nbenchmark = "tb"\n[tasks]\ntask_names = ["a", "b"]\n'
        '[[agents]]\nharness = "codex"\n[agents.model]\ntype = "endpoint"\nbase_url = "u"\nmodel = "m"\n'
        'api_key_secret = "K"\nextra_headers = { X = "1" }\n[agents.env]\nA = "1"\n'
        '[[agents]]\n[agents.model]\ntype = "hosted"\nbase_model = "b"\nlora_model_name = "l"\n'
        '[execution]\nattempts_per_task = 2\n[verifier]\nrequired = []\n[env]\nB = "2"\n'
    )

    def paths(node: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
        out = [prefix] if prefix else []
        if isinstance(node, dict):
            for k, v in node.items():
                out += paths(v, (*prefix, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                out += paths(v, (*prefix, i))
        return out

    pos = positions(text)
    assert [p for p in paths(tomllib.loads(text)) if p not in pos] == []


def test_locate_falls_back_to_the_closest_recorded_ancestor() -> None:
    pos = positions('[experiment]\nbenchmark = "x"\n\n[[agents]]\n[agents.model]\ntype = "provider"\n')
    assert locate(pos, ("agents", 0, "model", "api_key_secret")) == (5, 1)
    assert locate(pos, ("agents", 0, "harness")) == (4, 1)
    assert locate(pos, ("experiment", "benchmark")) == (2, 1)


def test_locate_points_at_the_start_of_the_file_when_nothing_is_recorded() -> None:
    assert locate(positions(""), ("experiment",)) == (1, 1)
    assert locate(positions('[tasks]\ntask_set = "parity"\n'), ("agents",)) == (1, 1)
