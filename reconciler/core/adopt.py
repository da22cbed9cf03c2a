"""Adopting an existing run, like a Terraform import block: `[reconcile] adopt = "<run name or id>"`.

The run becomes the spec's when its submitted config is exactly the spec's (same canonical
payload, so the same fingerprint) and it carries no other owner's marker. From then on it is
owned like a run reconciler submitted: waited on, downloaded, stopped and replaced by the spec.
Ownership is decided from git (`adopt`) and the platform (the run's config) alone, so it holds
even when every local file is lost. The plan shows `import` until the state file records it;
an import changes nothing on the platform, so it is not a change.

When the configs differ, or the run is missing or someone else's, the spec is blocked with
the reason: nothing is ever submitted in place of a run the spec says to adopt. Once the
state file records the adoption, a later edit of the spec is an ordinary config change
(the adopted run is replaced or queued behind, as `on_change` says).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from .identity import Marker
from .world import Adoption, Observed

# payload names -> the TOML tables a spec author edits
_TABLES = {
    "experiment_config": "experiment",
    "tasks_config": "tasks",
    "execution_config": "execution",
    "env_config": "env",
}
MAX_DIFFERENCES = 8


def _label(path: tuple[str | int, ...]) -> str:
    out = ""
    for i, part in enumerate(path):
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            name = _TABLES.get(part, part) if i == 0 else part
            if path[:2] == ("execution_config", "verifier_secrets") and i == 1:
                return "verifier.required"
            out += ("." if out else "") + name
    return out or "config"


def _show(value: Any) -> str:
    return "(absent)" if value is _ABSENT else repr(value)


_ABSENT = object()


def differences(run_payload: Any, spec_payload: Any, path: tuple[str | int, ...] = ()) -> list[str]:
    """Every field where the run's submitted config and the spec's differ, as `field: run has X, spec has Y`."""
    if isinstance(run_payload, dict) and isinstance(spec_payload, dict):
        out: list[str] = []
        for key in sorted(set(run_payload) | set(spec_payload)):
            out += differences(run_payload.get(key, _ABSENT), spec_payload.get(key, _ABSENT), (*path, key))
        return out
    if isinstance(run_payload, list) and isinstance(spec_payload, list) and len(run_payload) == len(spec_payload):
        out = []
        for i, (a, b) in enumerate(zip(run_payload, spec_payload, strict=True)):
            out += differences(a, b, (*path, i))
        return out
    if run_payload == spec_payload and type(run_payload) is type(spec_payload):
        return []
    return [f"{_label(path)}: run has {_show(run_payload)}, spec has {_show(spec_payload)}"]


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def comparable_payload(config: Any) -> Any:
    """A submit payload in the one shape `RunConfig.to_payload` gives, so equal configs compare equal.

    Dropped: the ownership marker and commit, provided secret values, null fields and empty optional parts
    (a client that leaves them out submits the same config); every agent has an `env`.
    """
    from .identity import COMMIT_ENV, OWNER_ENV, SPEC_ENV

    if not isinstance(config, dict):
        return config
    out = _without_nulls(config)
    env = out.get("env_config")
    if isinstance(env, dict):
        out["env_config"] = {k: v for k, v in env.items() if k not in (OWNER_ENV, SPEC_ENV, COMMIT_ENV)}
    secrets = out.get("secrets")
    if isinstance(secrets, dict) and "provided" in secrets:
        out["secrets"] = {**secrets, "provided": {}}
    for key in ("tasks_config", "execution_config", "env_config"):
        if out.get(key) == {}:
            out.pop(key)
    agents = out.get("agents")
    if isinstance(agents, list):
        out["agents"] = [{"env": {}, **a} if isinstance(a, dict) else a for a in agents]
    return out


def blocker(adoption: Adoption, owner: str) -> str | None:
    """Why the spec cannot take the run over, or None when it can."""
    if adoption.recorded and adoption.run is not None and _claimable_marker(adoption, owner):
        return None  # already this spec's: a config edit since is a change, planned as usual
    if adoption.run is None:
        return f"adopt = {adoption.ref!r}: no such run in this workspace; fix the name or drop `adopt`"
    marker = adoption.marker
    if marker is not None and (marker.owner, marker.spec_id) != (owner, adoption.spec_id):
        return (
            f"adopt = {adoption.ref!r}: {adoption.run.name} already belongs to {marker.owner} (spec {marker.spec_id})"
        )
    if adoption.differences:
        shown = "; ".join(adoption.differences[:MAX_DIFFERENCES])
        more = len(adoption.differences) - MAX_DIFFERENCES
        return (
            f"adopt = {adoption.ref!r}: {adoption.run.name}'s config differs from the spec: {shown}"
            + (f"; and {more} more" if more > 0 else "")
            + "; make the spec match the run (`reconciler import` writes it) or drop `adopt`"
            + (
                " (this run's adoption, as an older reconciler recorded it, no longer counts on its own: make the"
                " spec match the run once and apply, then edit it)"
                if adoption.recorded_by_older
                else ""
            )
        )
    return None


def _claimable_marker(adoption: Adoption, owner: str) -> bool:
    marker = adoption.marker
    return marker is None or (marker.owner, marker.spec_id) == (owner, adoption.spec_id)


class Verdict(BaseModel):
    """What the plan says about a spec's `adopt`: blocked (with why), an `import` to show, or nothing."""

    model_config = ConfigDict(frozen=True)

    blocked: bool
    reason: str
    run_id: str | None = None
    run_name: str | None = None


def verdict(spec_id: str, adopt: str | None, observed: Observed) -> Verdict | None:
    """None when the spec adopts nothing, or its adoption is recorded and needs no word."""
    if adopt is None:
        return None
    adoption = observed.adoptions.get(spec_id) or Adoption(spec_id=spec_id, ref=adopt)
    why = blocker(adoption, observed.owner)
    run = adoption.run
    if why is not None:
        return Verdict(blocked=True, reason=why, run_id=run.id if run else None, run_name=run.name if run else None)
    assert run is not None
    if adoption.recorded or adoption.marker is not None:
        return None
    return Verdict(
        blocked=False,
        reason=f"{run.name} ({run.status}) becomes this spec's: its config matches exactly; nothing is submitted",
        run_id=run.id,
        run_name=run.name,
    )


def claim(observed: Observed, fingerprints: dict[str, str]) -> Observed:
    """`observed` with every adoptable run marked as its spec's, as if reconciler had submitted it.

    `fingerprints` maps spec ids to their config's fingerprint.
    """
    claimed = {}
    for spec_id, adoption in observed.adoptions.items():
        if adoption.run is None or blocker(adoption, observed.owner) is not None or spec_id not in fingerprints:
            continue
        # the run's own config: the spec's when they match, an older one after an edit of an adopted spec
        fp = fingerprints[spec_id] if not adoption.differences else adoption.fingerprint
        if fp is None:
            continue
        marker = Marker(owner=observed.owner, spec_id=spec_id, fingerprint=fp)
        claimed[adoption.run.id] = marker
    if not claimed:
        return observed
    runs = tuple(r.model_copy(update={"marker": claimed[r.id]}) if r.id in claimed else r for r in observed.runs)
    known = {r.id for r in runs}
    extra = tuple(
        a.run.model_copy(update={"marker": claimed[a.run.id]})
        for a in observed.adoptions.values()
        if a.run is not None and a.run.id in claimed and a.run.id not in known
    )
    return observed.model_copy(update={"runs": runs + extra})
