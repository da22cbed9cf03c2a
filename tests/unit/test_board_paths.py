"""Where a leaderboard may be written (specs/board_paths.py): one rule for the loader and the render."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from reconciler.safe_paths import overlaps, write_refusal
from reconciler.specs.board_paths import board_path_problems, board_write_problems
from reconciler.specs.models import BenchmarkSpec, BenchmarkTable, LeaderboardTable, PolicyTable, ProjectSettings

SETTINGS = ProjectSettings()


def board(spec_id: str, output: str, chart: str | None = None) -> BenchmarkSpec:
    return BenchmarkSpec(
        id=spec_id,
        path=f"specs/{spec_id}.toml",
        benchmark=BenchmarkTable(ref="terminal-bench-2-1"),
        leaderboard=LeaderboardTable(output=output, chart=chart),
        policy=PolicyTable(),
    )


def test_boards_with_files_of_their_own_have_no_problem() -> None:
    specs = [board("benchmarks/a", "boards/a.md", "boards/a.svg"), board("benchmarks/b", "boards/b.md")]
    assert board_path_problems(specs, SETTINGS) == []


def test_a_board_on_the_state_file_names_the_state_file_at_its_output_key() -> None:
    (problem,) = board_path_problems([board("benchmarks/a", ".reconciler/state.json")], SETTINGS)
    assert (problem.spec_id, problem.key, problem.what) == ("benchmarks/a", "output", "the state file")


def test_two_boards_on_one_file_are_each_told() -> None:
    problems = board_path_problems(
        [board("benchmarks/a", "boards/x.md"), board("benchmarks/b", "Boards/X.md")], SETTINGS
    )
    assert [(p.spec_id, p.what) for p in problems] == [
        ("benchmarks/a", "the leaderboard of benchmarks/b"),
        ("benchmarks/b", "the leaderboard of benchmarks/a"),
    ]


def test_a_chart_inside_the_outputs_folder_is_told_at_its_chart_key() -> None:
    (problem,) = board_path_problems([board("benchmarks/a", "boards/a.md", ".osmosis/benchmarks/a.svg")], SETTINGS)
    assert (problem.key, problem.other) == ("chart", ".osmosis/benchmarks")


def test_a_board_the_work_tree_would_refuse_is_told_at_its_key_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "boards").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "charts" / "b.svg").mkdir(parents=True)  # a folder where the file goes
    specs = [board("benchmarks/a", "boards/a.md"), board("benchmarks/b", "ok/b.md", "charts/b.svg")]

    problems = board_write_problems(specs, lambda rel: write_refusal(tmp_path, rel))

    assert [(spec_id, key) for spec_id, key, _ in problems] == [("benchmarks/a", "output"), ("benchmarks/b", "chart")]
    assert "boards is a symlink" in problems[0][2] and "charts/b.svg is not a regular file" in problems[1][2]


def test_a_path_the_file_system_cannot_even_look_up_is_a_refusal_not_a_crash(tmp_path: Path) -> None:
    too_long = "/".join(["d" * 250] * 20) + "/board.md"  # each name fits; the whole path does not
    assert (write_refusal(tmp_path, too_long) or "").startswith("cannot check where")


def test_a_board_already_told_at_a_key_is_not_told_twice() -> None:
    specs = [board("benchmarks/a", "boards/a.md", "boards/a.svg")]
    problems = board_write_problems(specs, lambda rel: "refused", skip=frozenset({("benchmarks/a", "output")}))
    assert problems == [("benchmarks/a", "chart", "refused")]


NAMES = st.sampled_from(["boards", "specs", "templates", ".reconciler", "a.md", "b.md", "x"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)


@given(first=PATHS, second=PATHS)
def test_two_boards_clash_exactly_when_their_files_overlap_or_one_lands_on_a_reserved_path(
    first: str, second: str
) -> None:
    problems = {p.spec_id for p in board_path_problems([board("a", first), board("b", second)], SETTINGS)}
    reserved = [SETTINGS.specs_dir, SETTINGS.state_file, SETTINGS.outputs_dir, ".reconciler", "templates"]
    for spec_id, mine, theirs in (("a", first, second), ("b", second, first)):
        expected = overlaps(mine, theirs) or any(overlaps(mine, r) for r in reserved)
        assert (spec_id in problems) == expected
