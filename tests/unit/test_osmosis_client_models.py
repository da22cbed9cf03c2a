"""The platform's answers as typed models: defaults, fallbacks, normalisation, alternate keys."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from reconciler.osmosis.models import (
    BenchmarkDetail,
    BenchmarkEntry,
    DownloadUrls,
    Manifest,
    ManifestFile,
    RunDetail,
    RunItem,
    SecretRecord,
    Task,
)

ENTRY = {"id": "b1", "name": "Terminal-Bench", "source_type": "managed", "source_ref": "tb", "task_count": 3}
DETAIL = {
    **ENTRY,
    "category_count": 1,
    "runner_family": "harbor",
    "supports_harness": True,
    "requires_harness": False,
    "requires_judge_model": False,
    "pass_threshold": 1,
}


@pytest.mark.parametrize(
    ("given", "normalised"),
    [("easy", "easy"), ("Medium", "medium"), (" HARD ", "hard"), ("expert", None), (3, None), (None, None)],
)
def test_task_difficulty_is_easy_medium_hard_or_none(given: Any, normalised: str | None) -> None:
    assert Task.model_validate({"name": "t", "difficulty": given}).difficulty == normalised


def test_a_benchmark_entry_takes_the_documented_defaults() -> None:
    entry = BenchmarkEntry.model_validate({**ENTRY, "category_count": 1, "task_sets": None, "sync_status": None})
    assert entry.sync_status == "ready"
    assert entry.task_sets == ()
    assert entry.key == "tb"
    assert entry.run_count is None


def test_a_benchmark_entry_without_a_required_field_is_invalid() -> None:
    with pytest.raises(pydantic.ValidationError):
        BenchmarkEntry.model_validate(ENTRY)  # no category_count


def test_fields_the_platform_adds_later_are_ignored() -> None:
    entry = BenchmarkEntry.model_validate({**ENTRY, "category_count": 1, "brand_new_field": {"x": 1}})
    assert not hasattr(entry, "brand_new_field")


def test_models_are_frozen() -> None:
    item = RunItem(id="r1")
    with pytest.raises(pydantic.ValidationError):
        item.id = "r2"  # type: ignore[misc]


def test_benchmark_detail_defaults_for_our_additions() -> None:
    detail = BenchmarkDetail.model_validate(DETAIL)
    assert detail.requires_judge_api_key is False
    assert detail.required_secret_names == ()
    assert detail.unavailable_tasks is None
    assert detail.leaderboard == ()


def test_benchmark_detail_reads_sync_state_and_unavailable_tasks() -> None:
    detail = BenchmarkDetail.model_validate(
        {
            **DETAIL,
            "sync_status": "failed",
            "sync_error": "registry unreachable",
            "required_secret_names": ["HF_TOKEN"],
            "unavailable_tasks": {"reason": "sync failed", "tasks": [{"name": "a", "difficulty": "Hard"}], "n": 1},
        }
    )
    assert (detail.sync_status, detail.sync_error) == ("failed", "registry unreachable")
    assert detail.required_secret_names == ("HF_TOKEN",)
    assert detail.unavailable_tasks is not None
    assert detail.unavailable_tasks.tasks[0].difficulty == "hard"
    assert detail.unavailable_tasks.model_extra == {"n": 1}


def test_an_unavailable_reason_that_is_not_text_is_kept_as_json() -> None:
    # the wire reference: `unavailable_tasks` is "any object"; one odd key must not lose the benchmark
    detail = BenchmarkDetail.model_validate({**DETAIL, "unavailable_tasks": {"reason": {"code": "X"}, "tasks": []}})
    assert detail.unavailable_tasks is not None
    assert detail.unavailable_tasks.reason == '{"code":"X"}'


def test_the_typed_leaderboard_view_tolerates_odd_values() -> None:
    entry = {
        "rank": "first",
        "tied": 1,
        "task_set": "parity",
        "pass_at_1": {"value": 0.42, "ci_low": 0.3, "ci_high": 0.5, "n": 89, "method": "wilson"},
        "pass_at_k": [{"k": 1, "value": 0.42}, {"k": 4, "value": float("nan")}, "junk"],
        "cost_per_task": True,
        "run": {"id": "r1", "name": "bright-otter", "platform_url": None},
    }
    view = BenchmarkDetail.model_validate({**DETAIL, "leaderboard": [entry]}).leaderboard_entries()[0]
    assert view.rank is None
    assert view.tied is True
    assert view.pass_at_1 is not None and view.pass_at_1.method == "wilson"
    assert [(p.k, p.value) for p in view.pass_at_k] == [(1, 0.42), (4, None)]
    assert view.cost_per_task is None
    assert view.run is not None and view.run.name == "bright-otter"


def test_a_run_item_falls_back_to_benchmark_run_name_and_the_nested_benchmark() -> None:
    item = RunItem.model_validate({"id": "r1", "benchmark_run_name": "otter", "benchmark": {"id": "b1", "name": "TB"}})
    assert (item.name, item.benchmark_id, item.benchmark_name) == ("otter", "b1", "TB")


def test_a_run_item_keeps_its_own_fields_over_fallbacks() -> None:
    item = RunItem.model_validate({"id": "r1", "name": "own", "benchmark_run_name": "x", "benchmark_name": "Own"})
    assert (item.name, item.benchmark_name) == ("own", "Own")


@pytest.mark.parametrize(("given", "read"), [(0.5, 0.5), (1, 1.0), (True, None), (float("inf"), None), ("0.5", None)])
def test_best_pass_at_1_is_a_finite_non_bool_number_or_none(given: Any, read: float | None) -> None:
    assert RunItem.model_validate({"id": "r1", "best_pass_at_1": given}).best_pass_at_1 == read


def test_run_status_helpers() -> None:
    assert RunItem(id="r", status="queued").is_active
    assert RunItem(id="r", status="stopped").is_terminal
    assert not RunItem(id="r", status="running").is_terminal


def test_run_detail_fills_the_run_from_configuration_agents_metrics_and_progress() -> None:
    detail = RunDetail.model_validate(
        {
            "benchmark_run": {"id": "r1", "name": "otter", "ingested_results": 1},
            "configuration": {"benchmark_name": "TB", "benchmark_id": "b1", "config": {"env_config": {"A": "1"}}},
            "agents": [{"id": "a1", "model": "m1"}, {"id": "a2", "model_display_name": "M2"}],
            "agent_metrics": [{"pass_at_1": {"value": 0.3}}, {"pass_at_1": {"value": 0.7}}, {"pass_at_1": None}],
            "progress": {"ingested": 5, "expected": 9},
            "is_internal_user": None,
        }
    )
    run = detail.benchmark_run
    assert (run.benchmark_name, run.benchmark_id, run.agent_count) == ("TB", "b1", 2)
    assert run.best_pass_at_1 == 0.7
    assert (run.ingested_results, run.expected_results) == (5, 9)
    assert detail.configuration.config == {"env_config": {"A": "1"}}
    assert [a.model_label for a in detail.agents] == ["m1", "M2"]
    assert detail.is_internal_user is False


def test_a_run_level_best_pass_at_1_wins_over_agent_metrics() -> None:
    detail = RunDetail.model_validate(
        {"benchmark_run": {"id": "r1", "best_pass_at_1": 0.2}, "agent_metrics": [{"pass_at_1": {"value": 0.9}}]}
    )
    assert detail.benchmark_run.best_pass_at_1 == 0.2


def test_run_detail_parts_default_when_absent_or_null() -> None:
    detail = RunDetail.model_validate({"benchmark_run": {"id": "r1"}, "configuration": None, "totals": None})
    assert detail.configuration.resolved_secret_scopes == {}
    assert detail.totals.passed is None
    assert detail.agents == ()
    assert (detail.progress.ingested, detail.progress.expected) == (None, None)


def test_an_agent_keeps_its_environment_verbatim() -> None:
    env = {"RECONCILER_SPEC": "runs/tb@0123456789abcdef", "RECONCILER_OWNER": "acme/evals"}
    detail = RunDetail.model_validate(
        {"benchmark_run": {"id": "r1"}, "agents": [{"id": "a", "environment_variables": env}]}
    )
    assert detail.agents[0].environment_variables == env


@pytest.mark.parametrize(
    "file",
    [
        {"path": "", "size": 1},
        {"path": "summary.csv", "size": -1},
        {"path": "summary.csv", "size": True},
        {"path": "summary.csv", "size": 1.5},
        {"path": "summary.csv", "size": "10"},
        {"path": 3, "size": 1},
    ],
)
def test_a_manifest_file_needs_a_path_and_a_non_negative_integer_size(file: dict[str, Any]) -> None:
    with pytest.raises(pydantic.ValidationError):
        ManifestFile.model_validate(file)


def test_a_manifest_keeps_tokens_and_free_form_totals() -> None:
    manifest = Manifest.model_validate(
        {
            "files": [{"path": "summary.csv", "size": 10, "token": "t1"}, {"path": "results.csv", "size": 0}],
            "totals": {"files": 2},
        }
    )
    assert [(f.path, f.size, f.token) for f in manifest.files] == [("summary.csv", 10, "t1"), ("results.csv", 0, None)]
    assert manifest.totals == {"files": 2}


@pytest.mark.parametrize("list_key", ["items", "files", "urls"])
@pytest.mark.parametrize("url_key", ["url", "presignedUrl", "presigned_url"])
def test_download_urls_accept_every_alternate_key(list_key: str, url_key: str) -> None:
    urls = DownloadUrls.model_validate({list_key: [{"path": "summary.csv", url_key: "https://b/x"}], "expires_in": 900})
    assert [(u.path, u.url) for u in urls.items] == [("summary.csv", "https://b/x")]
    assert urls.expires_in == 900


def test_download_urls_match_the_exact_token_and_path_first_then_a_unique_path() -> None:
    urls = DownloadUrls.model_validate(
        {
            "items": [
                {"path": "a.csv", "token": "t1", "url": "https://b/1"},
                {"path": "a.csv", "token": "t2", "url": "https://b/2"},
                {"path": "b.csv", "url": "https://b/3"},
            ]
        }
    )
    exact = urls.match("a.csv", "t2")
    assert exact is not None and exact.url == "https://b/2"
    assert urls.match("a.csv", None) is None  # two candidates, no exact pair
    assert urls.match("b.csv", "t9") is not None
    assert urls.match("c.csv", None) is None


def test_a_secret_record_needs_only_its_id() -> None:
    record = SecretRecord.model_validate({"id": "s1", "name": "HF_TOKEN", "scope": "workspace", "value": "never kept"})
    assert (record.id, record.name, record.scope) == ("s1", "HF_TOKEN", "workspace")
    assert "never kept" not in repr(record)
