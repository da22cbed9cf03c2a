"""The field-level diff of two parsed spec files, in the dotted key style of diagnostics."""

from __future__ import annotations

import math
import tomllib

from reconciler.core.review import MISSING, field_diff, format_value


def diff_lines(old: str, new: str) -> list[str]:
    return [c.line() for c in field_diff(tomllib.loads(old), tomllib.loads(new))]


AGENTS = """
[experiment]
benchmark = "terminal-bench-2-1"

[[agents]]
[agents.model]
type = "provider"
model = "openai/gpt-5.2"

[[agents]]
[agents.model]
type = "provider"
model = "{second}"
"""


def test_a_changed_model_in_the_second_agent_is_one_line() -> None:
    old = AGENTS.format(second="openai/gpt-5.2")
    new = AGENTS.format(second="anthropic/claude-sonnet-4")
    assert diff_lines(old, new) == ["agents[1].model.model: openai/gpt-5.2 -> anthropic/claude-sonnet-4"]


def test_identical_documents_have_no_changes() -> None:
    assert diff_lines(AGENTS.format(second="x"), AGENTS.format(second="x")) == []


def test_reordered_keys_and_comments_are_not_changes() -> None:
    assert diff_lines("a = 1\nb = 2\n", "# note\nb = 2\na = 1\n") == []


def test_an_added_key_shows_unset_before() -> None:
    assert diff_lines("[execution]\n", "[execution]\nmax_retries = 2\n") == ["execution.max_retries: (unset) -> 2"]


def test_a_removed_key_shows_unset_after() -> None:
    assert diff_lines("[execution]\nmax_retries = 2\n", "[execution]\n") == ["execution.max_retries: 2 -> (unset)"]


def test_an_added_table_lists_each_leaf() -> None:
    assert diff_lines("", "[verifier]\ntimeout = 10\nname = 'x'\n") == [
        "verifier.timeout: (unset) -> 10",
        "verifier.name: (unset) -> x",
    ]


def test_an_added_agent_lists_its_fields_by_index() -> None:
    old = '[[agents]]\nharness = "codex"\n'
    new = old + '[[agents]]\nharness = "terminus-2"\n'
    assert diff_lines(old, new) == ["agents[1].harness: (unset) -> terminus-2"]


def test_a_list_of_scalars_is_compared_whole() -> None:
    assert diff_lines('[tasks]\ntask_names = ["a"]\n', '[tasks]\ntask_names = ["a", "b"]\n') == [
        "tasks.task_names: [a] -> [a, b]"
    ]


def test_a_type_change_is_a_change_even_when_equal_in_python() -> None:
    assert diff_lines("x = 1\n", "x = 1.0\n") == ["x: 1 -> 1.0"]
    assert diff_lines("x = 1\n", "x = true\n") == ["x: 1 -> true"]


def test_a_value_that_becomes_a_table_lists_both_sides() -> None:
    assert diff_lines("env = 'x'\n", "[env]\nA = 'b'\n") == ["env: x -> (unset)", "env.A: (unset) -> b"]


def test_strings_that_look_like_other_values_are_quoted() -> None:
    assert [format_value(v) for v in ["true", "12", "", "a b", "openai/gpt-5.2"]] == [
        '"true"',
        '"12"',
        '""',
        '"a b"',
        "openai/gpt-5.2",
    ]


def test_a_newline_in_a_value_stays_on_one_line() -> None:
    assert format_value("a\n```\nb") == '"a\\n```\\nb"'


def test_special_floats_and_unset_have_names() -> None:
    assert [format_value(v) for v in [math.inf, -math.inf, math.nan, MISSING]] == ["inf", "-inf", "nan", "(unset)"]


def test_a_key_with_a_newline_stays_on_one_line() -> None:
    [change] = field_diff({}, {"a\nb": 1})
    assert "\n" not in change.line()
