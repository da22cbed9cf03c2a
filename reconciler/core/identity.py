"""Who a run belongs to and which exact config it runs.

- The fingerprint is a hash of the canonical submit payload: key order, comments and
  formatting in the TOML do not change it; anything that reaches the platform does.
- The ownership marker travels in the run's own environment (`env_config`), so ownership
  can be read back from the platform itself, even when every local file is lost:

      RECONCILER_OWNER=<owner>             the repository (owner/repo) or workspace that owns it
      RECONCILER_SPEC=<spec id>@<fingerprint>

  The spec id may itself hold `@` (it can come from a file name), so the value is split at
  its LAST `@`: the fingerprint is always 16 lowercase hex digits and never holds one.
  A run without both, or with another owner, is unmanaged and never touched.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, NamedTuple

from ..specs.models import MARKER_ENV_PREFIX
from ..specs.run_config import RunConfig
from ..specs.spec_ids import marker_spec_id_problem
from ..values import Value

OWNER_ENV = "RECONCILER_OWNER"
SPEC_ENV = "RECONCILER_SPEC"
# the commit the submitting checkout stood on: not part of the marker (a run is ours and of its
# config whatever commit sent it), but what tells a checkout that is behind from one that is not
COMMIT_ENV = "RECONCILER_COMMIT"
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")  # SHA-1, or SHA-256 object names
RESERVED_ENV_PREFIX = MARKER_ENV_PREFIX
FINGERPRINT_LENGTH = 16
_FINGERPRINT = re.compile(r"[0-9a-f]{" + str(FINGERPRINT_LENGTH) + r"}")


class Marker(Value):
    owner: str
    spec_id: str
    fingerprint: str

    @property
    def ref(self) -> str:
        """`<spec id>@<fingerprint>`: the marker's RECONCILER_SPEC value."""
        return f"{self.spec_id}@{self.fingerprint}"

    @classmethod
    def from_ref(cls, owner: str, ref: str) -> Marker | None:
        """The marker `ref` (a RECONCILER_SPEC value) names for `owner`; None when it is malformed."""
        spec_id, at, fp = ref.rpartition("@")
        if not owner or not at or _FINGERPRINT.fullmatch(fp) is None or marker_spec_id_problem(spec_id) is not None:
            return None
        return cls(owner=owner, spec_id=spec_id, fingerprint=fp)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def fingerprint(config: RunConfig) -> str:
    """sha256 over the canonical submit payload, shortened to 16 hex digits (64 bits)."""
    digest = hashlib.sha256(canonical_json(config.to_payload()).encode()).hexdigest()
    return digest[:FINGERPRINT_LENGTH]


def marked_payload(config: RunConfig, marker: Marker, commit: str | None = None) -> dict[str, Any]:
    """The submit body with the ownership marker (and the submitting checkout's commit, when it
    has one) added to `env_config`."""
    payload = config.to_payload()
    env = dict(payload.get("env_config", {}))
    env[OWNER_ENV] = marker.owner
    env[SPEC_ENV] = marker.ref
    if commit is not None:
        env[COMMIT_ENV] = commit
    payload["env_config"] = env
    return payload


def read_commit(env: dict[str, Any] | None) -> str | None:
    """The commit a run was submitted from (COMMIT_ENV), or None: not recorded, or malformed."""
    value = env.get(COMMIT_ENV) if env else None
    return value if isinstance(value, str) and _COMMIT.fullmatch(value) else None


def read_marker(env: dict[str, Any] | None) -> Marker | None:
    """The marker in a run's environment, or None when it is not one of ours (or is malformed)."""
    if not env:
        return None
    owner = env.get(OWNER_ENV)
    spec = env.get(SPEC_ENV)
    if not isinstance(owner, str) or not isinstance(spec, str):
        return None
    return Marker.from_ref(owner, spec)


def claim_problem(actual: Marker | None, believed: Marker | None, owner: str) -> str | None:
    """Why a run must not be acted on (stopped, downloaded, ranked) as the plan believed, judged
    on `actual`, the marker the platform gave this process; None when it may be.

    `believed` is what the plan took the run for, perhaps on the word of the state file or the
    per-machine cache alone: either can be edited by hand or outlive a recreated platform."""
    if actual is None or actual.owner != owner:
        return "is not owned by this repository"
    if believed is not None and actual != believed:
        return "runs another config than the plan saw"
    return None


class StopRefusal(NamedTuple):
    code: str  # the plan's `blocked_by`: "stale_checkout" or "shared_owner"
    reason: str


def stop_refusal(
    owner: str, shared: bool, *, submitted_here: bool = False, behind: str | None = None
) -> StopRefusal | None:
    """Why this repository must not stop a run marked with `owner`, whatever its marker says
    (claim_problem judges the marker); None when it may. The one rule of every stop: the plan's
    (core.plan), apply's of a planned stop, and apply's of a concurrent duplicate.

    `behind`: the commit the run was submitted from (COMMIT_ENV), when this checkout is behind
    it (engine/stale_checkout.py). The run's config is then newer than these specs (another
    clone pushed it, CI applied it), and stopping it would undo a change this checkout has not
    seen.

    `shared` (settings.Owner.shared): every repository of the workspace without a GitHub origin
    or an owner of its own writes that name, so a run marked with it may be another's, and none
    is stopped, except one this very process submitted (`submitted_here`: a duplicate of its own
    submit, which it stops if another copy is kept)."""
    if behind is not None:
        return StopRefusal(
            "stale_checkout",
            f"it was submitted from commit {behind[:12]}, which this checkout is behind (a newer commit, or a"
            " branch not merged yet), so its config is newer than these specs. Update the checkout (`git pull`)"
            " and plan again",
        )
    if not shared or submitted_here:
        return None
    return StopRefusal(
        "shared_owner",
        f"reconciler stops no run marked with owner {owner!r}: every repository of this workspace without a"
        " GitHub origin or an owner writes that name, so the run may be another's."
        f' Set owner = "{owner}" in reconciler.toml if no other such repository submits here'
        " (or a name of its own: runs already submitted keep the shared one)",
    )
