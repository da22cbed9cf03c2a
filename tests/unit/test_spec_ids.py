"""Spec ids and the ownership marker: every id the loader accepts comes back from the platform unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.core.identity import OWNER_ENV, SPEC_ENV, Marker, marked_payload, read_marker
from reconciler.specs.loader import discover, load_specs
from reconciler.specs.run_config import RunConfig
from reconciler.specs.spec_ids import marker_spec_id_problem, spec_id_problem, spec_id_warning

CONFIG = RunConfig.model_validate(
    {
        "experiment": {"benchmark": "tb"},
        "agents": [{"model": {"type": "provider", "model": "openai/gpt-5.2", "api_key_secret": "OPENAI_API_KEY"}}],
    }
)
SPEC = """
[experiment]
benchmark = "tb"
[tasks]
task_names = ["t1"]
[[agents]]
[agents.model]
type = "provider"
model = "openai/gpt-5.2"
api_key_secret = "OPENAI_API_KEY"
"""


def round_trip(spec_id: str, fp: str = "0123456789abcdef") -> Marker | None:
    marker = Marker(owner="acme/evals", spec_id=spec_id, fingerprint=fp)
    return read_marker(marked_payload(CONFIG, marker)["env_config"])


@given(st.text(min_size=1, max_size=200), st.text(alphabet="0123456789abcdef", min_size=16, max_size=16))
def test_every_spec_id_the_loader_accepts_round_trips_through_the_marker(spec_id: str, fp: str) -> None:
    if spec_id_problem(spec_id) is None:
        assert round_trip(spec_id, fp) == Marker(owner="acme/evals", spec_id=spec_id, fingerprint=fp)
    if marker_spec_id_problem(spec_id) is not None:
        assert round_trip(spec_id, fp) is None


@pytest.mark.parametrize("spec_id", ["runs/a\u200db", "runs/\u202eevil", "runs/soft\u00adhyphen"])
def test_a_marker_with_an_invisible_character_still_names_its_run_which_the_loader_would_refuse(spec_id: str) -> None:
    """Such a run was submitted by a version that accepted the id: it stays ours (never submitted
    again, never someone else's), though no spec may take that id any more."""
    assert round_trip(spec_id) == Marker(owner="acme/evals", spec_id=spec_id, fingerprint="0123456789abcdef")
    assert spec_id_problem(spec_id) is not None and marker_spec_id_problem(spec_id) is None


@pytest.mark.parametrize("spec_id", ["runs/my smoke@1", "runs/a@b@c", "runs/ünïcødé 測試", "runs/@", "@"])
def test_ids_from_file_names_with_spaces_at_signs_and_unicode_round_trip(spec_id: str) -> None:
    marker = round_trip(spec_id)
    assert marker is not None and marker.spec_id == spec_id


def test_a_marker_written_before_ids_could_hold_at_signs_still_reads() -> None:
    env = {OWNER_ENV: "acme/evals", SPEC_ENV: "runs/tb-smoke@0123456789abcdef"}
    assert read_marker(env) == Marker(owner="acme/evals", spec_id="runs/tb-smoke", fingerprint="0123456789abcdef")


@pytest.mark.parametrize(
    "value",
    [
        "runs/a",
        "runs/a@",
        "@0123456789abcdef",
        "runs/a@0123456789ABCDEF",
        "runs/a@0123456789abcde",
        "a\n@0123456789abcdef",
    ],
)
def test_a_malformed_spec_marker_is_not_ours(value: str) -> None:
    assert read_marker({OWNER_ENV: "acme/evals", SPEC_ENV: value}) is None


@pytest.mark.parametrize(
    ("spec_id", "problem"), [("", "empty"), ("   ", "empty"), ("a\tb", "U+0009"), ("a\u2028b", "U+2028")]
)
def test_ids_that_could_not_round_trip_are_named_with_the_reason(spec_id: str, problem: str) -> None:
    found = spec_id_problem(spec_id)
    assert found is not None and problem in found


@pytest.mark.parametrize(
    ("spec_id", "problem"),
    [
        ("runs/a,b", "holds a comma"),
        (" runs/a", "whitespace"),
        ("runs/a ", "whitespace"),
        ("runs/a\u00a0", "whitespace"),
    ],
    ids=["comma", "leading-space", "trailing-space", "trailing-no-break-space"],
)
def test_an_id_the_dispatch_inputs_would_split_or_trim_into_other_ids_is_refused(spec_id: str, problem: str) -> None:
    """`replace: "runs/a,b"` would replace `runs/a`, and `replace: "runs/a "` too."""
    found = spec_id_problem(spec_id)
    assert found is not None and problem in found


def write_spec(root: Path, name: str) -> Path:
    path = root / "specs" / "runs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SPEC)
    return path


def test_the_loader_accepts_a_file_named_with_a_space_and_an_at_sign(tmp_path: Path) -> None:
    write_spec(tmp_path, "my smoke@1.toml")
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    assert [s.id for s in result.run_specs] == ["runs/my smoke@1"] and not result.errors


def test_the_loader_refuses_a_file_name_with_a_control_character_naming_the_file(tmp_path: Path) -> None:
    write_spec(tmp_path, "bad\x01name.toml")
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    assert result.run_specs == []
    (error,) = result.errors
    assert error.code == "BAD_SPEC_ID" and "U+0001" in error.message and error.file.startswith("specs/runs/bad")


def test_the_loader_refuses_a_file_name_with_a_comma_naming_the_file(tmp_path: Path) -> None:
    write_spec(tmp_path, "smoke,tb.toml")
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (error,) = result.errors
    assert result.run_specs == [] and error.code == "BAD_SPEC_ID" and error.file == "specs/runs/smoke,tb.toml"
    assert "holds a comma" in error.message and "rename the file" in error.message


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u200b", "\ufeff"], ids=["rlo", "lri", "zwsp", "bom"])
def test_the_loader_refuses_a_file_name_with_an_invisible_formatting_character(tmp_path: Path, char: str) -> None:
    """A right-to-left override in `smoke\u202elmot.toml` would show a reviewer another id than the one planned."""
    write_spec(tmp_path, f"smoke{char}lmot.toml")
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (error,) = result.errors
    assert result.run_specs == [] and error.code == "BAD_SPEC_ID" and f"U+{ord(char):04X}" in error.message


def test_a_file_name_mixing_latin_and_cyrillic_letters_loads_with_a_warning_naming_the_letter(tmp_path: Path) -> None:
    """`tb-smоke` (a Cyrillic о) shows in a plan as `tb-smoke`, another spec's id."""
    write_spec(tmp_path, "tb-sm\u043eke.toml")
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (warning,) = result.warnings
    assert [s.id for s in result.run_specs] == ["runs/tb-sm\u043eke"] and not result.errors
    assert warning.code == "LOOKALIKE_ID" and warning.file == "specs/runs/tb-sm\u043eke.toml"
    assert "Latin and Cyrillic" in warning.message and "U+043E CYRILLIC SMALL LETTER O" in warning.message


@pytest.mark.parametrize(
    "spec_id",
    ["runs/tb-smoke", "runs/тест", "benchmarks/δοκιμή", "runs/тест-gpt4o", "テスト/run-1", "runs/café ñ@1", "µ-ªº-ß"],
    ids=["ascii", "russian-name", "greek-name", "russian-and-latin-words", "katakana", "accents", "latin-1-letters"],
)
def test_an_id_whose_words_each_keep_to_one_script_is_not_warned(spec_id: str) -> None:
    assert spec_id_warning(spec_id) is None


LATIN = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZéñ", min_size=1, max_size=6)
CYRILLIC = st.text(alphabet="абвгдежзийклмнопрстуфхцчшщыэюяАБВЕКМНОРСТХ", min_size=1, max_size=6)
GREEK = st.text(alphabet="αβγδεζηθικλμνξοπρστυφχψωΑΒΕΗΙΚΜΝΟΡΤΧ", min_size=1, max_size=6)
WORDS = st.lists(st.one_of(LATIN, CYRILLIC, GREEK), min_size=1, max_size=5)
SEPARATORS = st.sampled_from(["/", "-", "_", " ", ".", "@", "1"])


@given(WORDS, SEPARATORS)
def test_words_in_one_script_each_are_never_warned(words: list[str], separator: str) -> None:
    assert spec_id_warning(separator.join(words)) is None


@given(st.sampled_from([(LATIN, CYRILLIC), (LATIN, GREEK), (GREEK, CYRILLIC)]).flatmap(lambda p: st.tuples(*p)), WORDS)
def test_a_word_with_letters_of_two_lookalike_scripts_is_always_warned(
    pair: tuple[str, str], others: list[str]
) -> None:
    mixed = pair[0] + pair[1]
    assert "letters in one word" in (spec_id_warning("/".join([*others, mixed])) or "")


def test_a_run_spec_may_not_take_the_id_of_a_benchmark_spec(tmp_path: Path) -> None:
    """`--target` and the state file know one namespace of ids: `benchmarks/tb` cannot be both."""
    bench = tmp_path / "specs" / "benchmarks" / "tb.toml"
    bench.parent.mkdir(parents=True)
    bench.write_text('[benchmark]\nref = "terminal-bench-2-1"\n')
    path = write_spec(tmp_path, "smoke.toml")
    path.write_text(SPEC + '\n[reconcile]\nid = "benchmarks/tb"\n')
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (error,) = result.errors
    assert result.run_specs == [] and [b.id for b in result.benchmark_specs] == ["benchmarks/tb"]
    assert error.code == "DUPLICATE_ID" and error.file == "specs/runs/smoke.toml" and error.key == "reconcile.id"
    assert "benchmark spec specs/benchmarks/tb.toml" in error.message


SEGMENTS = st.sampled_from(
    ["", ".", "..", "specs", "runs", "a.toml", "b.c.toml", ".hidden.toml", "x.", ".x", "é ñ@1", "a b"]
)
PATHS = st.lists(SEGMENTS, min_size=1, max_size=5).map("/".join)


@given(PATHS, PATHS)
def test_a_default_spec_id_is_the_one_the_path_arithmetic_gives(path: str, specs_root: str) -> None:
    """`default_spec_id` works on plain strings where it can; it must agree with PurePosixPath."""
    from pathlib import PurePosixPath

    from reconciler.specs.models import default_spec_id

    p = PurePosixPath(path)
    try:
        rel = p.relative_to(PurePosixPath(specs_root))
    except ValueError:
        rel = p
    try:
        expected = str(rel.with_suffix(""))
    except ValueError:  # no name to drop a suffix from ("."): no file can have that path
        return
    assert default_spec_id(path, specs_root) == expected


@given(st.sampled_from(["/", "/repo", "/repo/sub", "/a b/é"]), st.lists(SEGMENTS.filter(bool), min_size=0, max_size=4))
def test_a_spec_files_shown_path_is_the_one_relative_to_gives(root: str, parts: list[str]) -> None:
    """The loader shows a path relative to the repository root by string prefix where it can."""
    from reconciler.specs.loader import _display

    path = Path(root, *parts)
    try:
        expected = path.relative_to(Path(root)).as_posix()
    except ValueError:
        expected = path.as_posix()
    assert _display(path, Path(root)) == expected


@pytest.mark.parametrize(
    ("first", "second"),
    [("café.toml", "cafe\u0301.toml"), ("Smoke.toml", "smoke.toml"), ("CON.toml", "con.toml")],
    ids=["unicode-forms", "case", "reserved-name-case"],
)
def test_two_spec_files_whose_ids_differ_only_in_case_or_unicode_form_are_one_id(
    tmp_path: Path, first: str, second: str
) -> None:
    """They print alike, are one file on macOS and Windows, and `--target` could not tell them
    apart: the second is refused as a duplicate, and only one run is planned."""
    write_spec(tmp_path, first)
    write_spec(tmp_path, second)
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (error,) = result.errors
    assert error.code == "DUPLICATE_ID" and "some file systems take the two for one name" in error.message
    assert len(result.run_specs) == 1


def test_two_benchmark_specs_whose_ids_differ_only_in_case_are_one_id(tmp_path: Path) -> None:
    folder = tmp_path / "specs" / "benchmarks"
    folder.mkdir(parents=True)
    for name in ("Tb.toml", "tb.toml"):
        (folder / name).write_text('[benchmark]\nref = "terminal-bench-2-1"\n')
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (error,) = result.errors
    assert error.code == "DUPLICATE_ID" and len(result.benchmark_specs) == 1


BENCHMARK_SPEC = '[benchmark]\nref = "tb"\n'
FORGED = "tb\n  + submit   FORGED \u202e"  # a file name that would print a forged plan line, reversed


def test_the_loader_refuses_a_benchmark_spec_file_name_that_breaks_the_spec_id_rules(tmp_path: Path) -> None:
    """Run and benchmark spec ids follow one rule: a newline or a bidi override in either would
    forge lines in a plan, a review and a commit subject."""
    path = tmp_path / "specs" / "benchmarks" / f"{FORGED}.toml"
    path.parent.mkdir(parents=True)
    path.write_text(BENCHMARK_SPEC)
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    (error,) = result.errors
    assert result.benchmark_specs == []
    assert error.code == "BAD_SPEC_ID" and error.file == f"specs/benchmarks/{FORGED}.toml" and error.line == 1
    assert "U+000A" in error.message and "rename the file" in error.message


def test_the_loader_accepts_a_benchmark_spec_file_named_with_a_space_and_an_at_sign(tmp_path: Path) -> None:
    path = tmp_path / "specs" / "benchmarks" / "tb smoke@2.toml"
    path.parent.mkdir(parents=True)
    path.write_text(BENCHMARK_SPEC)
    result = load_specs(discover([tmp_path / "specs"]), tmp_path, "specs")
    assert [b.id for b in result.benchmark_specs] == ["benchmarks/tb smoke@2"] and not result.errors
