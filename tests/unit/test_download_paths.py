"""`--type` parsing and manifest path screening (reconciler.outputs.paths)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.outputs.layout import TYPES
from reconciler.outputs.paths import (
    DUPLICATE,
    NAME_MAX,
    NOT_REQUESTED,
    OUTSIDE_LAYOUT,
    RESERVED,
    SYMLINK,
    TypeSelectionError,
    parse_types,
    partial_name,
    partial_pattern,
    screen,
)

ALL = TYPES


def reasons(files: list[tuple[str, int, str | None]], run_dir: Path, types: tuple[str, ...] = ALL) -> dict[str, str]:
    _, refused = screen(files, types, run_dir)
    return {r.path: r.reason for r in refused}


# --- --type ---------------------------------------------------------------------------------


def test_type_default_is_summary_and_results() -> None:
    assert parse_types(None) == ("summary", "results")


def test_type_values_are_trimmed_lowercased_and_deduplicated_in_order() -> None:
    assert parse_types(" Logs, summary ,LOGS") == ("logs", "summary")


def test_type_all_means_every_type() -> None:
    assert parse_types("ALL") == ("summary", "results", "artifacts", "logs")


def test_type_all_cannot_be_combined() -> None:
    with pytest.raises(TypeSelectionError, match="--type all cannot be combined"):
        parse_types("all,logs")


def test_type_unknown_values_are_named_with_the_choices() -> None:
    with pytest.raises(TypeSelectionError, match=r"Unknown --type value\(s\): bogus, x\. Choose from: summary"):
        parse_types("x,summary,bogus")


def test_type_empty_item_is_refused() -> None:
    with pytest.raises(TypeSelectionError, match="comma-separated list"):
        parse_types("summary,,logs")


def test_type_accepts_repeated_options() -> None:
    assert parse_types(["summary", "results,logs"]) == ("summary", "results", "logs")


# --- screening ------------------------------------------------------------------------------


def test_layout_paths_are_accepted_with_their_types(tmp_path: Path) -> None:
    files = [
        ("summary.csv", 1, None),
        ("results.csv", 2, "t"),
        ("logs.txt", 3, None),
        ("artifacts/r1/a/b.json", 4, None),
    ]
    accepted, refused = screen(files, ALL, tmp_path)
    assert refused == []
    assert [(a.path, a.type) for a in accepted] == [
        ("summary.csv", "summary"),
        ("results.csv", "results"),
        ("logs.txt", "logs"),
        ("artifacts/r1/a/b.json", "artifacts"),
    ]
    assert accepted[3].target == tmp_path / "artifacts" / "r1" / "a" / "b.json"


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "../x",
        "artifacts/r1/../../x",
        "a\\b",
        "artifacts\\r1\\x",
        "artifacts/r1//x",
        "artifacts/./r1/x",
        "artifacts/r1/x\x00",
    ],
)
def test_unsafe_paths_are_outside_the_layout(tmp_path: Path, path: str) -> None:
    assert reasons([(path, 1, None)], tmp_path)[path].startswith(OUTSIDE_LAYOUT)


@pytest.mark.parametrize("path", ["weird.txt", "artifacts/x", "artifacts", "Summary.csv", "summary.csv/x", "logs/x/y"])
def test_paths_outside_the_fixed_layout_are_refused(tmp_path: Path, path: str) -> None:
    assert reasons([(path, 1, None)], tmp_path)[path].startswith(OUTSIDE_LAYOUT)


@pytest.mark.parametrize("path", ["artifacts/f/.git/config", "artifacts/f/.GIT/hooks/pre-commit", "artifacts/.Git/x"])
def test_a_git_folder_segment_in_any_case_is_refused_as_such(tmp_path: Path, path: str) -> None:
    """git reads `<folder>/.git/config` as a repository's own: its core.fsmonitor runs code."""
    assert reasons([(path, 1, None)], tmp_path) == {
        path: f"{OUTSIDE_LAYOUT} ('.git' segment, which git would read as a repository's own folder)."
    }


def test_a_file_named_git_is_refused_too(tmp_path: Path) -> None:
    """A `.git` file (`gitdir: <elsewhere>`) would make its folder a work tree of another repository."""
    assert "'.git' segment" in reasons([("artifacts/f/.git", 1, None)], tmp_path)["artifacts/f/.git"]


def test_a_type_that_was_not_requested_is_refused(tmp_path: Path) -> None:
    found = reasons([("logs.txt", 1, None), ("summary.csv", 1, None)], tmp_path, ("summary",))
    assert found == {"logs.txt": f"{NOT_REQUESTED} (logs was not requested)."}


def test_every_copy_of_a_repeated_path_is_refused(tmp_path: Path) -> None:
    accepted, refused = screen([("summary.csv", 1, None), ("summary.csv", 2, None)], ALL, tmp_path)
    assert accepted == []
    assert [r.reason for r in refused] == [f"{DUPLICATE}.", f"{DUPLICATE}."]


def test_paths_differing_only_in_case_are_refused(tmp_path: Path) -> None:
    found = reasons([("artifacts/r/A.txt", 1, None), ("artifacts/r/a.txt", 1, None)], tmp_path)
    assert set(found) == {"artifacts/r/A.txt", "artifacts/r/a.txt"}


def test_a_file_that_is_another_files_folder_is_refused(tmp_path: Path) -> None:
    found = reasons([("artifacts/r/x", 1, None), ("artifacts/r/x/y", 1, None)], tmp_path)
    assert list(found) == ["artifacts/r/x"]


def test_a_path_naming_another_files_partial_is_refused(tmp_path: Path) -> None:
    sneaky = f"artifacts/r/{partial_name('x', 5, None)}"
    found = reasons([("artifacts/r/x", 5, None), (sneaky, 1, None)], tmp_path)
    assert list(found) == [sneaky]


def test_a_symlinked_folder_leading_outside_is_refused(tmp_path: Path) -> None:
    run_dir, outside = tmp_path / "run", tmp_path / "outside"
    run_dir.mkdir()
    outside.mkdir()
    (run_dir / "artifacts").symlink_to(outside, target_is_directory=True)
    found = reasons([("artifacts/r1/x.txt", 1, None), ("summary.csv", 1, None)], run_dir)
    assert found == {"artifacts/r1/x.txt": f"{SYMLINK}."}


def test_a_symlinked_file_leading_outside_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "summary.csv").symlink_to(tmp_path / "elsewhere.csv")
    assert reasons([("summary.csv", 1, None)], run_dir) == {"summary.csv": f"{SYMLINK}."}


def test_a_symlink_that_stays_inside_the_run_folder_is_refused_too(tmp_path: Path) -> None:
    """Two folders that are one would let one run's file overwrite another's (`artifacts/r2 -> r1`)."""
    run_dir = tmp_path / "run"
    (run_dir / "artifacts" / "r1").mkdir(parents=True)
    (run_dir / "artifacts" / "r2").symlink_to(run_dir / "artifacts" / "r1", target_is_directory=True)
    found = reasons([("artifacts/r1/trace.json", 1, None), ("artifacts/r2/trace.json", 1, None)], run_dir)
    assert found == {"artifacts/r2/trace.json": f"{SYMLINK}."}


@pytest.mark.parametrize("name", [".x.0123abcd.partial", ".X.0123ABCD.PARTIAL", ".a b.ffffffff.partial"])
def test_a_name_shaped_like_a_partial_file_is_reserved(tmp_path: Path, name: str) -> None:
    """Cleaning up old partials must never remove an artifact: none can have a partial's name."""
    path = f"artifacts/r1/{name}"
    assert reasons([(path, 1, None)], tmp_path) == {path: f"{RESERVED}."}


def test_paths_differing_only_in_unicode_form_are_refused(tmp_path: Path) -> None:
    composed, decomposed = "artifacts/r/caf\u00e9.txt", "artifacts/r/cafe\u0301.txt"
    assert set(reasons([(composed, 1, None), (decomposed, 1, None)], tmp_path)) == {composed, decomposed}


def test_a_file_that_is_another_files_folder_in_another_case_is_refused(tmp_path: Path) -> None:
    found = reasons([("artifacts/r/X", 1, None), ("artifacts/r/x/y", 1, None)], tmp_path)
    assert list(found) == ["artifacts/r/X"]


@pytest.mark.parametrize("length", [200, 237, 238, 245, 255])
def test_a_partial_name_always_fits_one_file_name(length: int) -> None:
    name = "a" * (length - 4) + ".txt"
    partial = partial_name(name, 10, "tok")
    assert len(partial.encode()) <= NAME_MAX
    assert partial_pattern(name).match(partial)
    assert not partial_pattern("b" + name[1:]).match(partial)


def test_a_long_multibyte_name_is_cut_on_a_character_boundary() -> None:
    name = "\u00e9" * 120  # 240 bytes
    partial = partial_name(name, 1, None)
    assert len(partial.encode()) <= NAME_MAX and partial_pattern(name).match(partial)


def test_a_symlink_loop_is_refused(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "artifacts").symlink_to(run_dir / "artifacts")
    assert reasons([("artifacts/r1/x.txt", 1, None)], run_dir) == {"artifacts/r1/x.txt": f"{SYMLINK}."}


def test_partial_names_depend_on_the_manifest_entry() -> None:
    assert partial_name("x.csv", 10, None) == partial_name("x.csv", 10, None)
    assert partial_name("x.csv", 10, None) != partial_name("x.csv", 11, None)
    assert partial_name("x.csv", 10, None) != partial_name("x.csv", 10, "tok")
    assert partial_name("x.csv", 10, None).startswith(".x.csv.") and partial_name("x.csv", 10, None).endswith(
        ".partial"
    )
