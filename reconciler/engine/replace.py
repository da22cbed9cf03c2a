"""Checking `--replace SPEC_ID` against the specs before anything is planned."""

from __future__ import annotations

from collections.abc import Sequence

from ..core.world import Policy
from ..errors import UsageError
from ..settings import Project
from .runs_view import spec_ids


def with_replace(project: Project, policy: Policy, replace: Sequence[str]) -> Policy:
    """`policy` asking to submit these specs' configs again; an unknown spec id is a usage error."""
    known = spec_ids(project)
    unknown = sorted(set(replace) - known)
    if unknown:
        raise UsageError(
            f"unknown --replace {', '.join(unknown)}", hint=f"run spec ids here: {', '.join(sorted(known)) or 'none'}"
        )
    if policy.targets and not set(replace) <= policy.targets:
        raise UsageError("--replace names a spec outside --target", hint="add it to --target as well, or drop --target")
    return policy.model_copy(update={"replace": frozenset(replace)})
