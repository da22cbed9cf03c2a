"""`RunConfig.to_payload` is the submit body of contract section 4; `payload_to_document` inverts it.

Payload: `{experiment_config: {benchmark}, agents: [{harness?, harness_api_key_secret?, model, env}],
tasks_config?, execution_config? (+ verifier_secrets), env_config?, secrets?: {required, provided}}`,
empty parts omitted, an agent's `env` always sent.
"""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from reconciler.specs.loader import Document, load_run_spec, read_document
from reconciler.specs.run_config import RunConfig, payload_to_document

GOOD = Path(__file__).resolve().parent.parent / "corpus" / "good"
RUN_SPECS = sorted(p.name for p in GOOD.glob("*.toml") if "experiment" in tomllib.loads(p.read_text(encoding="utf-8")))

Doc = dict[str, Any]
PROVIDER = {"type": "provider", "model": "openai/gpt-5.2", "api_key_secret": "OPENAI_API_KEY"}
MINIMAL: Doc = {"experiment": {"benchmark": "terminal-bench-2-1"}, "agents": [{"model": PROVIDER}]}
MINIMAL_PAYLOAD: Doc = {
    "experiment_config": {"benchmark": "terminal-bench-2-1"},
    "agents": [{"model": PROVIDER, "env": {}}],
}


def payload(doc: Doc) -> Doc:
    return RunConfig.model_validate(doc).to_payload()


def with_tables(**tables: Any) -> Doc:
    return {**copy.deepcopy(MINIMAL), **tables}


# --- to_payload ----------------------------------------------------------------------------------


def test_the_official_smoke_example_becomes_the_documented_body() -> None:
    doc = tomllib.loads((GOOD / "official-smoke.toml").read_text(encoding="utf-8"))
    assert payload(doc) == {
        "experiment_config": {"benchmark": "terminal-bench-2-1"},
        "tasks_config": {"task_names": ["terminal-bench/git-multibranch"]},
        "agents": [{"harness": "codex", "model": PROVIDER, "env": {}}],
        "execution_config": {
            "attempts_per_task": 1,
            "max_concurrent_attempts": 1,
            "timeout_multiplier": 1.0,
            "max_retries": 0,
        },
    }


def test_a_minimal_config_sends_only_the_experiment_and_the_agents() -> None:
    assert payload(MINIMAL) == MINIMAL_PAYLOAD


@pytest.mark.parametrize(
    "tables",
    [
        {"tasks": {}},
        {"execution": {}},
        {"verifier": {}},
        {"verifier": {"required": []}},
        {"secrets": {"required": []}},
        {"env": {}},
        {"tasks": {}, "execution": {}, "verifier": {"required": []}, "secrets": {"required": []}, "env": {}},
    ],
    ids=["tasks", "execution", "verifier", "verifier-required", "secrets", "env", "all"],
)
def test_empty_parts_are_omitted(tables: Doc) -> None:
    assert payload(with_tables(**tables)) == MINIMAL_PAYLOAD


def test_an_agents_env_is_always_sent() -> None:
    doc = with_tables()
    doc["agents"] = [{"model": PROVIDER}, {"model": PROVIDER, "env": {"A": "1"}}]
    assert [a["env"] for a in payload(doc)["agents"]] == [{}, {"A": "1"}]


def test_harness_and_harness_secret_are_sent_only_when_set() -> None:
    doc = with_tables()
    doc["agents"] = [
        {"model": PROVIDER},
        {"harness": "codex", "model": PROVIDER},
        {"harness": "cursor-cli", "harness_api_key_secret": "CURSOR_API_KEY", "model": PROVIDER},
    ]
    assert payload(doc)["agents"] == [
        {"model": PROVIDER, "env": {}},
        {"harness": "codex", "model": PROVIDER, "env": {}},
        {"harness": "cursor-cli", "harness_api_key_secret": "CURSOR_API_KEY", "model": PROVIDER, "env": {}},
    ]


@pytest.mark.parametrize(
    "model",
    [
        PROVIDER,
        {"type": "endpoint", "base_url": "https://llm.example.com/v1", "model": "m", "api_key_secret": "K"},
        {
            "type": "endpoint",
            "base_url": "https://llm.example.com/v1",
            "model": "m",
            "api_key_secret": "K",
            "extra_headers": {"X-Org": "evals"},
        },
        {"type": "hosted", "base_model": "Qwen/Qwen3-8B", "lora_model_name": "acme-lora"},
    ],
    ids=["provider", "endpoint", "endpoint-with-headers", "hosted"],
)
def test_a_model_is_sent_verbatim_without_unset_keys(model: Doc) -> None:
    doc = with_tables()
    doc["agents"] = [{"model": model}]
    assert payload(doc)["agents"][0]["model"] == model


def test_execution_sends_the_keys_that_are_set_including_zeros() -> None:
    execution = {"max_retries": 0, "pass_threshold": 0.0, "judge_api_key_secret": "JUDGE_KEY"}
    assert payload(with_tables(execution=execution))["execution_config"] == execution


def test_verifier_secrets_travel_inside_execution_config() -> None:
    body = payload(with_tables(execution={"attempts_per_task": 2}, verifier={"required": ["GRADER_KEY", "OTHER"]}))
    assert body["execution_config"] == {"attempts_per_task": 2, "verifier_secrets": ["GRADER_KEY", "OTHER"]}
    assert "verifier" not in body


def test_verifier_secrets_alone_make_an_execution_config() -> None:
    body = payload(with_tables(verifier={"required": ["GRADER_KEY"]}))
    assert body["execution_config"] == {"verifier_secrets": ["GRADER_KEY"]}


def test_secrets_are_sent_as_required_names_with_nothing_provided() -> None:
    body = payload(with_tables(secrets={"required": ["DATASET_TOKEN", "OTHER"]}))
    assert body["secrets"] == {"required": ["DATASET_TOKEN", "OTHER"], "provided": {}}


def test_env_is_sent_as_env_config() -> None:
    assert payload(with_tables(env={"LOG_LEVEL": "info"}))["env_config"] == {"LOG_LEVEL": "info"}


def test_task_selection_is_sent_as_written() -> None:
    tasks = {"task_set": "parity", "task_names": ["a"], "categories": ["git"]}
    assert payload(with_tables(tasks=tasks))["tasks_config"] == tasks


def test_a_full_config_sends_exactly_the_documented_top_level_keys() -> None:
    doc = with_tables(
        tasks={"categories": ["git"]},
        execution={"attempts_per_task": 1},
        verifier={"required": ["GRADER_KEY"]},
        secrets={"required": ["DATASET_TOKEN"]},
        env={"A": "1"},
    )
    assert set(payload(doc)) == {
        "experiment_config",
        "agents",
        "tasks_config",
        "execution_config",
        "env_config",
        "secrets",
    }


def test_the_payload_is_plain_json() -> None:
    doc = tomllib.loads((GOOD / "every-table-and-model-type.toml").read_text(encoding="utf-8"))
    del doc["reconcile"]
    body = payload(doc)
    assert json.loads(json.dumps(body)) == body


def test_the_payload_is_a_copy_that_cannot_change_the_config() -> None:
    config = RunConfig.model_validate(
        with_tables(env={"A": "1"}, verifier={"required": ["V"]}, tasks={"task_names": ["t"]})
    )
    body = config.to_payload()
    body["agents"][0]["env"]["X"] = "1"
    body["env_config"]["X"] = "1"
    body["execution_config"]["verifier_secrets"].append("W")
    body["tasks_config"]["task_names"].append("u")
    assert config.to_payload() == payload(
        with_tables(env={"A": "1"}, verifier={"required": ["V"]}, tasks={"task_names": ["t"]})
    )


def test_the_reconcile_table_is_never_sent(tmp_path: Path) -> None:
    path = tmp_path / "smoke.toml"
    text = (GOOD / "official-smoke.toml").read_text(encoding="utf-8")
    path.write_text(text + '\n[reconcile]\nid = "tb-smoke"\nprotect = true\n', encoding="utf-8")
    doc = read_document(path, "smoke.toml")
    assert isinstance(doc, Document)
    spec, diagnostics = load_run_spec(doc, "smoke")
    assert diagnostics == [] and spec is not None
    assert spec.config.to_payload() == payload(tomllib.loads(text))


# --- payload_to_document -------------------------------------------------------------------------


def test_payload_to_document_maps_wire_names_back_to_table_names() -> None:
    body = {
        "experiment_config": {"benchmark": "b"},
        "agents": [{"model": PROVIDER, "env": {}}],
        "tasks_config": {"task_set": "parity"},
        "execution_config": {"max_retries": 1, "verifier_secrets": ["V"]},
        "env_config": {"A": "1"},
        "secrets": {"required": ["S"], "provided": {}},
    }
    assert payload_to_document(body) == {
        "experiment": {"benchmark": "b"},
        "agents": [{"model": PROVIDER, "env": {}}],
        "tasks": {"task_set": "parity"},
        "execution": {"max_retries": 1},
        "verifier": {"required": ["V"]},
        "env": {"A": "1"},
        "secrets": {"required": ["S"]},
    }


def test_payload_to_document_leaves_its_input_alone() -> None:
    body = {
        **MINIMAL_PAYLOAD,
        "execution_config": {"verifier_secrets": ["V"]},
        "secrets": {"required": ["S"], "provided": {}},
    }
    before = copy.deepcopy(body)
    payload_to_document(body)
    assert body == before


def test_a_verifier_without_execution_comes_back_without_an_execution_table() -> None:
    body = payload(with_tables(verifier={"required": ["GRADER_KEY"]}))
    assert "execution" not in payload_to_document(body)


@pytest.mark.parametrize(
    "name",
    [n for n in RUN_SPECS],
)
def test_a_good_config_survives_the_round_trip_through_its_payload(name: str) -> None:
    doc = tomllib.loads((GOOD / name).read_text(encoding="utf-8"))
    doc.pop("reconcile", None)
    config = RunConfig.model_validate(doc)
    assert RunConfig.model_validate(payload_to_document(config.to_payload())) == config


def _loc_of_first_error(body: Any) -> tuple[Any, ...]:
    with pytest.raises(ValidationError) as caught:
        RunConfig.model_validate(payload_to_document(body))
    return tuple(caught.value.errors()[0]["loc"]), caught.value.errors()[0]["type"]


def test_an_unknown_wire_key_surfaces_as_an_unknown_key() -> None:
    assert _loc_of_first_error({**MINIMAL_PAYLOAD, "priority": 5}) == (("priority",), "extra_forbidden")


def test_provided_secret_values_are_dropped_on_the_way_back() -> None:
    body = {**MINIMAL_PAYLOAD, "secrets": {"required": ["S"], "provided": {"S": "value"}}}
    assert payload_to_document(body)["secrets"] == {"required": ["S"]}


def test_a_body_that_is_not_an_object_is_missing_its_experiment() -> None:
    assert payload_to_document([]) == {"experiment": None}


def test_a_secrets_part_that_is_not_an_object_surfaces_as_a_type_error() -> None:
    assert _loc_of_first_error({**MINIMAL_PAYLOAD, "secrets": ["S"]}) == (("secrets",), "model_type")


# --- the round trip for any config ---------------------------------------------------------------

NAMES = st.from_regex(r"[A-Z][A-Z0-9_]{0,10}", fullmatch=True)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
MODELS = st.one_of(
    st.fixed_dictionaries({"type": st.just("provider"), "model": TEXT, "api_key_secret": NAMES}),
    st.fixed_dictionaries(
        {"type": st.just("endpoint"), "base_url": TEXT, "model": TEXT, "api_key_secret": NAMES},
        optional={"extra_headers": st.dictionaries(TEXT, TEXT, max_size=2)},
    ),
    st.fixed_dictionaries({"type": st.just("hosted"), "base_model": TEXT, "lora_model_name": TEXT}),
)
AGENTS = st.fixed_dictionaries(
    {"model": MODELS},
    optional={
        "harness": st.sampled_from(["codex", "cursor-cli", "mini-swe-agent", "opencode"]),
        "harness_api_key_secret": NAMES,
        "env": st.dictionaries(NAMES, TEXT, max_size=3),
    },
)
SECRET_LIST = st.fixed_dictionaries({}, optional={"required": st.lists(NAMES, max_size=4)})
CONFIGS = st.fixed_dictionaries(
    {"experiment": st.fixed_dictionaries({"benchmark": TEXT}), "agents": st.lists(AGENTS, min_size=1, max_size=3)},
    optional={
        "tasks": st.fixed_dictionaries(
            {},
            optional={
                "task_set": st.just("parity"),
                "task_names": st.lists(TEXT, max_size=3),
                "categories": st.lists(TEXT, max_size=3),
            },
        ),
        "execution": st.fixed_dictionaries(
            {},
            optional={
                "attempts_per_task": st.integers(1, 10),
                "max_concurrent_attempts": st.integers(1, 64),
                "timeout_multiplier": st.floats(0.1, 10),
                "max_retries": st.integers(0, 5),
                "pass_threshold": st.floats(0, 1),
                "judge_model": TEXT,
                "judge_api_key_secret": NAMES,
            },
        ),
        "verifier": SECRET_LIST,
        "secrets": SECRET_LIST,
        "env": st.dictionaries(NAMES, TEXT, max_size=3),
    },
)


@settings(max_examples=150, database=None, deadline=None)
@given(CONFIGS)
def test_any_payload_survives_the_round_trip_through_its_document(doc: Doc) -> None:
    body = RunConfig.model_validate(doc).to_payload()
    assert RunConfig.model_validate(payload_to_document(body)).to_payload() == body
