"""Spec discovery: every spec file under the specs folder, and never a folder's specs lost without
a word: a folder that cannot be listed is an error naming it, so no plan runs without its specs."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.specs.loader import discover, load_specs

GOOD_SPEC = Path(__file__).resolve().parents[1] / "corpus" / "good" / "official-smoke.toml"


def rglob_discover(paths: list[Path]) -> list[Path]:
    """Discovery as it was written before the walk (pathlib's rglob): the oracle for readable trees."""
    found: set[Path] = set()
    for p in paths:
        if p.is_dir() and p.suffix != ".toml":
            depth = len(p.parts)
            found.update(q for q in p.rglob("*.toml") if not any(part.startswith(".") for part in q.parts[depth:]))
        else:
            found.add(p)
    return sorted(found)


def _tree(specs: Path) -> None:
    """Hidden files and folders, nested folders, other files, folders named *.toml, and links."""
    for rel in [
        "runs/a.toml",
        "runs/team/b.toml",
        "runs/team/deeper/still/c.toml",
        "runs/team/notes.md",
        "runs/team/c.toml.bak",
        "runs/.draft/d.toml",
        "runs/.e.toml",
        ".archive/f.toml",
        "benchmarks/g.toml",
        "benchmarks/README",
        "odd.toml/h.toml",
        "odd.toml/.i.toml",
        "UPPER.TOML",
    ]:
        (specs / rel).parent.mkdir(parents=True, exist_ok=True)
        (specs / rel).write_text("")
    (specs / "empty").mkdir()
    (specs / "runs" / "linked.toml").symlink_to("a.toml")
    (specs / "runs" / "dangling.toml").symlink_to("nowhere.toml")
    (specs / "linked-folder").symlink_to("runs", target_is_directory=True)
    (specs / "linked-folder.toml").symlink_to("benchmarks", target_is_directory=True)


def _unlistable(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    """Listing any of `folders` fails as it does for a user without read permission on it."""
    real: Callable[..., Any] = os.scandir
    refused = {os.fspath(f) for f in folders}

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path) in refused:
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture
def specs(tmp_path: Path) -> Path:
    folder = tmp_path / "specs"
    (folder / "runs" / "team").mkdir(parents=True)
    shutil.copyfile(GOOD_SPEC, folder / "runs" / "one.toml")
    shutil.copyfile(GOOD_SPEC, folder / "runs" / "team" / "two.toml")
    return folder


def test_a_readable_tree_gives_what_rglob_gave(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    _tree(specs)
    found = discover([specs])
    assert found == rglob_discover([specs])
    assert [p.relative_to(specs).as_posix() for p in found] == [
        "benchmarks/g.toml",
        "linked-folder.toml",
        "odd.toml",
        "odd.toml/h.toml",
        "runs/a.toml",
        "runs/dangling.toml",
        "runs/linked.toml",
        "runs/team/b.toml",
        "runs/team/deeper/still/c.toml",
    ]


def test_files_named_beside_folders_are_kept_as_given(tmp_path: Path) -> None:
    specs = tmp_path / "specs"
    _tree(specs)
    given = [specs / "runs", specs / "runs" / "team" / "notes.md", specs / "odd.toml"]
    assert discover(given) == rglob_discover(given)


def test_a_folder_that_cannot_be_listed_is_an_error_at_that_folder(
    specs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unlistable(monkeypatch, specs / "runs" / "team")
    result = load_specs(discover([specs]), specs.parent, "specs")
    assert [(d.file, d.code) for d in result.errors] == [("specs/runs/team", "UNREADABLE")]
    assert "cannot be listed (Permission denied)" in result.errors[0].message
    assert "chmod u+rx" in result.errors[0].message


def test_a_specs_folder_that_cannot_be_listed_is_an_error_at_it(specs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _unlistable(monkeypatch, specs)
    result = load_specs(discover([specs]), specs.parent, "specs")
    assert [(d.file, d.code) for d in result.errors] == [("specs", "UNREADABLE")]
    assert result.run_specs == []


def test_a_hidden_folder_that_cannot_be_listed_is_still_ignored(specs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (specs / "runs" / ".drafts").mkdir()
    _unlistable(monkeypatch, specs / "runs" / ".drafts")
    result = load_specs(discover([specs]), specs.parent, "specs")
    assert result.errors == []
    assert sorted(s.id for s in result.run_specs) == ["runs/one", "runs/team/two"]


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """A specs folder and a folder 1,100 levels below it, one at a time both ways: pathlib's
    mkdir(parents=True) and pytest's clean-up (shutil.rmtree) recurse and would fail on it."""
    specs = deepest = tmp_path / "specs"
    specs.mkdir()
    for _ in range(1_100):
        deepest = deepest / "d"
        deepest.mkdir()
    yield specs, deepest
    for leftover in deepest.iterdir():
        leftover.unlink()
    while deepest != specs:
        deepest.rmdir()
        deepest = deepest.parent


def test_folders_nested_deeper_than_the_interpreter_recurses_are_searched(deep: tuple[Path, Path]) -> None:
    specs, deepest = deep
    (deepest / "x.toml").write_text("")
    assert discover([specs]) == [deepest / "x.toml"]
