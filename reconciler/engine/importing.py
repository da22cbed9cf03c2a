"""`reconciler import RUN`: write a spec that adopts an existing run, from the run's own configuration.

The spec is the run's submitted config as TOML (secret record names only: values the run was
given at submit time are never written) plus `[reconcile] id` and `adopt`. It is checked by
loading it back: its fingerprint must be the run's, or nothing is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from ..core import adopt
from ..core.identity import fingerprint
from ..errors import SpecError, UsageError
from ..files import unlink_below
from ..osmosis.client import OsmosisClient
from ..osmosis.errors import NotFound
from ..safe_paths import create_once
from ..settings import Project
from ..specs.loader import discover, id_in_use, load_specs
from ..specs.models import SPEC_ID_PATTERN
from ..specs.run_config import payload_to_document
from .adoption import payload_fingerprint
from .observe import marker_of

_ORDER = ("experiment", "tasks", "agents", "execution", "verifier", "secrets", "env")


@dataclass(frozen=True)
class Imported:
    spec_id: str
    path: str  # relative to the repository root
    run_id: str
    run_name: str
    status: str


def default_spec_id(run_name: str) -> str:
    slug = re.sub(r"[^a-z0-9._-]+", "-", run_name.lower()).strip("-._")
    return slug or "imported"


def spec_text(document: dict[str, Any], spec_id: str, run_name: str, run_id: str, benchmark: str | None) -> str:
    doc = tomlkit.document()
    doc.add(tomlkit.comment(f"Adopted from run {run_name} ({run_id}){f' on {benchmark}' if benchmark else ''}."))
    doc.add(tomlkit.comment("`adopt` makes that run this spec's without submitting it again: keep it in git."))
    for key in _ORDER:
        if key not in document:
            continue
        value = document[key]
        if key == "agents":
            agents = tomlkit.aot()
            for agent in value:
                agents.append({k: v for k, v in agent.items() if not (k == "env" and not v)})
            doc.add("agents", agents)
        else:
            doc.add(key, value)
    doc.add("reconcile", {"id": spec_id, "adopt": run_name})
    return tomlkit.dumps(doc)


async def import_run(client: OsmosisClient, project: Project, ref: str, spec_id: str | None, owner: str) -> Imported:
    try:
        detail = await client.get_run(ref)
    except NotFound:
        raise UsageError(f"no run named {ref!r} in this workspace", hint="`reconciler runs` lists every run") from None
    run = detail.benchmark_run
    name = run.name or run.id
    marker = marker_of(detail)
    if marker is not None:
        whose = "this repository's" if marker.owner == owner else f"{marker.owner}'s"
        raise UsageError(f"{name} already belongs to {whose} spec {marker.spec_id}; there is nothing to import")
    spec_id = spec_id or default_spec_id(name)
    if not re.match(SPEC_ID_PATTERN, spec_id):
        raise UsageError(f"--id {spec_id!r} is not a spec id", hint="lowercase letters, digits, '.', '_', '-' and '/'")
    existing = load_specs(discover([project.specs_path]), project.root, project.settings.specs_dir)
    adopted_by = {s.reconcile.adopt: s.id for s in existing.run_specs if s.reconcile.adopt}
    for key in (run.id, name):
        if key in adopted_by:
            raise UsageError(f"{name} is already adopted by spec {adopted_by[key]}")
    relative = Path(project.settings.specs_dir) / "runs" / f"{spec_id.replace('/', '-')}.toml"
    # a benchmark spec's id too: validate would refuse the spec written under it
    clash = id_in_use(existing, spec_id, relative.as_posix())
    if clash is not None:
        raise UsageError(clash, hint="pick another with --id")
    target = project.root / relative
    if target.exists() or target.is_symlink():
        raise UsageError(f"{relative} already exists", hint="pick another spec id with --id")

    payload = adopt.comparable_payload(detail.configuration.config)
    if isinstance(payload, dict) and isinstance(payload.get("secrets"), dict):
        payload["secrets"] = {"required": payload["secrets"].get("required", []), "provided": {}}
    document = payload_to_document(payload)
    text = spec_text(document, spec_id, name, run.id, run.benchmark_name)
    # the rule for every file reconciler writes: inside the work tree, never through a symlink
    if not create_once(project.root, relative.as_posix(), text):
        raise UsageError(f"{relative} already exists", hint="pick another spec id with --id")
    loaded = load_specs([target], project.root, project.settings.specs_dir)
    written = next((s for s in loaded.run_specs if s.id == spec_id), None)
    if written is None or fingerprint(written.config) != payload_fingerprint(payload):
        unlink_below(project.root, target)
        problems = "; ".join(d.render() for d in loaded.diagnostics[:3]) or "its config differs from the run's"
        raise SpecError(f"{name}'s configuration cannot be written as a spec that matches it exactly: {problems}")
    return Imported(spec_id=spec_id, path=relative.as_posix(), run_id=run.id, run_name=name, status=run.status or "-")
