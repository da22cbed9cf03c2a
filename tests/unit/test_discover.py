"""Finding the spec files: a folder tree too deep to walk is an error naming it, not a crash."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from reconciler.errors import SpecError
from reconciler.specs.loader import discover


def test_folders_nested_deeper_than_python_can_walk_are_a_clear_error(tmp_path: Path) -> None:
    deep = tmp_path / "specs"
    deep.mkdir()
    for _ in range(sys.getrecursionlimit()):  # pathlib takes more than one frame per folder level
        deep = deep / "d"
        deep.mkdir()  # one level at a time: mkdir(parents=True) itself recurses
    (deep / "x.toml").write_text("")
    with pytest.raises(SpecError, match="nested too deeply to search"):
        discover([tmp_path / "specs"])
