"""`downloader_for(session)`: what `reconciler apply` runs for a DOWNLOAD action."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from reconciler.core.plan import Action, ActionKind
from reconciler.engine.apply import ActionResult
from reconciler.engine.downloads import downloader_for

from .download_fake import RUN_ID, RUN_NAME, FakePlatform, sample_files


def apply_download(fake: FakePlatform, root: Path, **action: Any) -> ActionResult:
    async def go() -> ActionResult:
        async with fake.client() as client:
            session = SimpleNamespace(
                client=client, outputs_root=root / ".osmosis" / "benchmarks", project=SimpleNamespace(root=root)
            )
            download = downloader_for(session)  # type: ignore[arg-type]
            fields = {
                "kind": ActionKind.DOWNLOAD,
                "reason": "finished",
                "spec_id": "runs/smoke",
                "run_id": RUN_ID,
                "run_name": RUN_NAME,
            }
            return await download(Action(**(fields | action)))

    return asyncio.run(go())


def test_a_download_action_fetches_its_types_into_the_repository(tmp_path: Path) -> None:
    result = apply_download(FakePlatform(sample_files()), tmp_path, download_types=("summary", "logs"))
    assert result.ok and result.run_id == RUN_ID and result.run_name == RUN_NAME
    assert result.message == "downloaded 2 files (922 B) to .osmosis/benchmarks/tb-smoke-7"
    assert sorted(p.name for p in (tmp_path / ".osmosis" / "benchmarks" / "tb-smoke-7").iterdir()) == [
        "logs.txt",
        "summary.csv",
    ]


def test_a_partial_download_fails_the_action_with_the_first_error(tmp_path: Path) -> None:
    fake = FakePlatform(sample_files(), faults={"logs.txt": ["404"]})
    result = apply_download(fake, tmp_path, download_types=("summary", "logs"))
    assert not result.ok
    assert result.message.endswith("; 1 failed (first: logs.txt: The download failed with HTTP 404.)")


def test_a_pending_run_fails_the_action_with_the_official_message(tmp_path: Path) -> None:
    result = apply_download(FakePlatform(sample_files(), status="pending"), tmp_path, download_types=("summary",))
    assert not result.ok and result.message == "Outputs are not yet available for pending or queued benchmark runs."
