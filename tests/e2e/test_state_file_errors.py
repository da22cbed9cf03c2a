"""A state file edited into something unreadable: one clear error naming the file and where
the problem is, exit 1, nothing changed, never a traceback (the CLI as a subprocess)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.local_cli import cli

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(REPO / "specs", root / "specs")
    (root / "reconciler.toml").write_text('platform = "local"\nworkspace = "state-errors"\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".reconciler").mkdir()
    return root


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"version": 1,\n "specs": {,}}\n', "line 2 column 12: Expecting property name"),
        (
            '{"version": 1, "specs": {"tb-smoke": {"run_id": 5}}}',
            "specs.tb-smoke.run_id: Input should be a valid string",
        ),
        ('{"version": 1, "markers": null}', "markers: Input should be a valid dictionary"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"version": true}', "version: Input should be a valid integer"),
        ('{"version": 1.0}', "version: Input should be a valid integer"),
    ],
    ids=["syntax", "field", "null", "deep", "version-true", "version-float"],
)
def test_an_unreadable_state_file_is_one_error_naming_where_and_changes_nothing(
    root: Path, content: str, says: str
) -> None:
    state = root / ".reconciler/state.json"
    state.write_text(content)
    done = cli(root, "apply", "--auto-approve")
    assert done.returncode == 1
    assert f"state file {state} is unreadable: {says}" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert state.read_text() == content


@pytest.mark.parametrize(
    ("content", "byte"),
    [
        (b'{"version": 1, "specs": {"\xff": {}}}', "0xff"),
        ('{"version": 1}'.encode("utf-16"), "0xff"),  # starts with its byte-order mark
        (b'{"version": 1, "specs": {"a\xed\xa0\x80": {}}}', "0xed"),  # a lone surrogate, encoded
    ],
    ids=["stray-byte", "utf-16", "surrogate"],
)
def test_a_state_file_that_is_not_utf_8_is_one_error_and_changes_nothing(root: Path, content: bytes, byte: str) -> None:
    state = root / ".reconciler/state.json"
    state.write_bytes(content)
    done = cli(root, "plan")
    assert done.returncode == 1
    assert f"state file {state} is unreadable: 'utf-8' codec can't decode byte {byte}" in done.stderr
    assert "Traceback" not in done.stderr
    assert state.read_bytes() == content


@pytest.mark.parametrize("named", ["reconciler.toml", "specs"])
def test_a_state_file_setting_that_names_a_users_file_never_advises_deleting_it(root: Path, named: str) -> None:
    settings = root / "reconciler.toml"
    settings.write_text(f'state_file = "{named}"\n' + settings.read_text())
    before = settings.read_text()
    done = cli(root, "plan")
    assert done.returncode == 1
    if named == "specs":  # refused as a setting before any file is looked at: it would write among the specs
        assert "reconciler.toml:1:1: state_file: 'specs' overlaps specs_dir 'specs'" in done.stderr
    else:
        assert f"state_file in reconciler.toml names {named}, which is not a reconciler state file" in done.stderr
    assert "delete it" not in done.stderr and "Traceback" not in done.stderr
    assert settings.read_text() == before and (root / "specs/runs").is_dir()
