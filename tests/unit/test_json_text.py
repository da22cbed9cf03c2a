"""Every reader of JSON from outside the process refuses a document nested too deeply to parse
the way it refuses any malformed one: never an internal error."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler import json_text
from reconciler.engine.machine_cache import CACHE_DIR_ENV, MachineCache
from reconciler.engine.operations import read_plan_file
from reconciler.engine.state import load_state
from reconciler.errors import ConfigError, UsageError
from reconciler.github.event import read_event
from reconciler.osmosis.client import OsmosisClient
from reconciler.osmosis.errors import ProtocolError
from reconciler.osmosis.retry import RetryPolicy
from reconciler.osmosis.transport import Response
from reconciler.outputs.bookkeeping import ledger_path, load_ledger
from tests.fake_transport import FakeTransport, Sent, reply

DEEP = "[" * 100_000 + "]" * 100_000


def test_loads_reads_ordinary_json_as_the_standard_library_does() -> None:
    assert json_text.loads('{"a": [1, 2.5, null, "x"]}') == {"a": [1, 2.5, None, "x"]}


def test_loads_calls_too_deep_a_document_malformed() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        json_text.loads(DEEP)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@given(JSON_VALUES)
def test_a_platform_answer_reads_as_the_standard_library_reads_it(value: object) -> None:
    for body in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert json_text.loads_answer(body.encode()) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [b"", b"{", b'{"a": 1} x', b"\xff", b'{"a": "\x01"}', DEEP.encode()],
    ids=["empty", "truncated", "trailing", "not-utf8", "control-character", "too-deep"],
)
def test_a_malformed_platform_answer_is_a_value_error(body: bytes) -> None:
    with pytest.raises(ValueError):
        json_text.loads_answer(body)


@pytest.mark.parametrize(
    ("read", "error", "message"),
    [
        (read_event, ConfigError, "is not a JSON event payload"),
        (load_state, ConfigError, "unreadable"),
        (read_plan_file, UsageError, "nested too deeply"),
    ],
    ids=["github-event", "state-file", "saved-plan"],
)
def test_a_deep_file_is_refused_with_the_readers_own_clear_error(
    tmp_path: Path, read: Callable[[Path], object], error: type[Exception], message: str
) -> None:
    path = tmp_path / "file.json"
    path.write_text(DEEP)
    with pytest.raises(error, match=message):
        read(path)


def test_a_deep_download_ledger_reads_as_none_recorded(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    ledger = ledger_path(run_dir)
    ledger.parent.mkdir(parents=True)
    ledger.write_text(DEEP)
    assert load_ledger(run_dir).types == frozenset()


def test_a_deep_machine_cache_reads_as_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path))
    cache = MachineCache.open(platform="p", scope="s", owner="o")
    assert cache.path is not None
    cache.path.write_text(DEEP)
    again = MachineCache.open(platform="p", scope="s", owner="o")
    assert again.not_ours == set() and again.ours == {}


def test_a_deep_answer_from_the_platform_is_a_protocol_error() -> None:
    def handler(request: Sent) -> Response:
        return reply(200, content=DEEP.encode(), headers={"content-type": "application/json"})

    async def main() -> None:
        async with OsmosisClient(
            "https://p.example",
            token="t",
            workspace="w",
            transport=FakeTransport(handler),
            retry=RetryPolicy.disabled(),
        ) as client:
            await client.get_run("r1")

    with pytest.raises(ProtocolError, match="Invalid JSON response"):
        asyncio.run(main())
