"""How the scheduled reconcile splits into GitHub Actions matrix jobs: the shards and their targets.

Two ways to cut, both stable so a spec keeps its shard (and its concurrency group) from one
scheduled run to the next:

- by benchmark (the default): one shard per benchmark ref the run specs name, in ref order;
  every run of one benchmark is reconciled by one job, so its submits share one lane. The shard
  is named after its ref alone (`benchmark_shard_name`), never after the other refs;
- `count` shards by spec id: spec `s` goes to shard `int(sha256(s)[:8], 16) mod count`, so adding
  or deleting a spec never moves another one; empty shards are left out. Shard `i` is named
  `shard-i-of-count`: distinct, lowercase, and the same whichever specs exist.

The matrix is GitHub's `{"include": [{"shard": NAME, "ids": IDS, "targets": OLD_WORKFLOW_TARGET}]}`,
IDS the shard's spec ids one a line; a job turns each line into one `--target ID` flag. Lines,
because a spec id may hold spaces (it comes from a file name: `runs/smoke tb-smoke`) but never a
newline (the spec id rules refuse control characters): split on spaces, that id targeted
`runs/smoke` and `tb-smoke`, specs of other shards, and was itself never reconciled.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

_UNSAFE = re.compile(r"[^a-z0-9]+")


class Shard(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    targets: tuple[str, ...]


def benchmark_shard_name(ref: str) -> str:
    """The shard name of benchmark `ref`: the ref cleaned for a concurrency group and an artifact
    name (lowercase letters, digits, `-`), then 8 hex digits of the SHA-256 of the exact ref.

    The name is the group `reconcile-<repo>-<name>` and the artifact `state-<name>`. Two refs must
    never share one (two jobs in one group, one state artifact lost), and GitHub compares group
    names ignoring case, so the cleaned part is lowercase and the hash tells apart refs that clean
    alike (`a/b`, `a-b`, `A-B`; two would need the same first 32 bits of SHA-256 too). And a ref's
    name must not depend on the other refs: numbering clashes in ref order renamed `harbor/x@1` from `harbor-x-1` to `harbor-x-1-2` when `harbor/x-1`
    came, so a job of an earlier run and one of the next ran in two groups at once and both
    submitted its specs.
    """
    cleaned = _UNSAFE.sub("-", ref.lower()).strip("-") or "benchmark"
    return f"{cleaned}-{hashlib.sha256(ref.encode('utf-8')).hexdigest()[:8]}"


def by_benchmark(specs: Iterable[tuple[str, str]]) -> list[Shard]:
    """(spec id, benchmark ref) pairs -> one shard per benchmark ref, spec ids sorted."""
    groups: dict[str, list[str]] = {}
    for spec_id, ref in specs:
        groups.setdefault(ref, []).append(spec_id)
    return [Shard(name=benchmark_shard_name(ref), targets=tuple(sorted(groups[ref]))) for ref in sorted(groups)]


def shard_of(spec_id: str, count: int) -> int:
    return int(hashlib.sha256(spec_id.encode("utf-8")).hexdigest()[:8], 16) % count


def by_spec_id(spec_ids: Iterable[str], count: int) -> list[Shard]:
    """`count` shards by a hash of each spec id; shards with no spec are left out."""
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1, not {count}")
    buckets: list[list[str]] = [[] for _ in range(count)]
    for spec_id in sorted(set(spec_ids)):
        buckets[shard_of(spec_id, count)].append(spec_id)
    width = len(str(count - 1))
    return [Shard(name=f"shard-{i:0{width}d}-of-{count}", targets=tuple(ids)) for i, ids in enumerate(buckets) if ids]


# What an older sharded workflow finds in `matrix.targets`: it split that value on spaces and
# read only its first line, so given the ids one a line it would reconcile one spec a shard and
# say nothing. Given this (one word: no spec id, as `.github` is a hidden folder), its job stops
# at once, and `reconcile` says which line of the workflow to change (engine/operations.check_targets).
OLD_WORKFLOW_TARGET = "matrix.targets-is-now-matrix.ids:update-.github/workflows/reconcile.yml"


def matrix_json(shards: Iterable[Shard]) -> str:
    """The `strategy.matrix` value for `fromJSON`, on one line: each shard's spec ids in `ids`,
    one id a line (an id may hold spaces, never a newline)."""
    include = [{"shard": s.name, "ids": "\n".join(s.targets), "targets": OLD_WORKFLOW_TARGET} for s in shards]
    return json.dumps({"include": include}, separators=(",", ":"))
