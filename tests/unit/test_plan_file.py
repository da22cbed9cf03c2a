"""`apply PLAN.json` reads only what `plan --out` writes: any other shape is a usage error naming it,
and a workspace name no HTTP header can carry is refused before anything is sent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.engine.operations import PLAN_FILE_VERSION, read_plan_file
from reconciler.errors import ConfigError, UsageError
from reconciler.osmosis.client import OsmosisClient


def saved(actions: Any) -> dict[str, Any]:
    return {"plan_file_version": PLAN_FILE_VERSION, "policy": {}, "plan": {"actions": actions}}


@pytest.mark.parametrize("actions", [None, 1, "x", {"a": 1}, [1], ["x"], [[]], [None]])
def test_a_plan_file_whose_actions_are_not_a_list_of_objects_is_refused_by_name(tmp_path: Path, actions: Any) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(saved(actions)))
    with pytest.raises(UsageError, match=r"plan\.actions is not a list of objects"):
        read_plan_file(path)


def test_a_plan_file_with_no_actions_is_read(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(saved([])))
    assert read_plan_file(path)[1]["actions"] == []


@pytest.mark.parametrize("name", ["💥", "ワークスペース", "a\u2028b"])
def test_a_workspace_name_no_http_header_can_carry_is_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="workspace name"):
        OsmosisClient("https://platform.example", token="t", workspace=name)
