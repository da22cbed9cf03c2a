"""How the scheduled reconcile splits into GitHub Actions matrix jobs: the shards and their targets.

Two ways to cut, both stable so a spec keeps its shard (and its concurrency group) from one
scheduled run to the next:

- by benchmark (the default): one shard per benchmark ref the run specs name, in ref order;
  every run of one benchmark is reconciled by one job, so its submits share one lane;
- `count` shards by spec id: spec `s` goes to shard `int(sha256(s)[:8], 16) mod count`, so adding
  or deleting a spec never moves another one; empty shards are left out.

The matrix is GitHub's `{"include": [{"shard": NAME, "targets": IDS}]}`, IDS the shard's spec
ids one a line; a job turns each line into one `--target ID` flag. Lines, because a spec id may
hold spaces (it comes from a file name: `runs/smoke tb-smoke`) but never a newline (the spec id
rules refuse control characters): split on spaces, that id targeted `runs/smoke` and `tb-smoke`,
specs of other shards, and was itself never reconciled.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Shard(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    targets: tuple[str, ...]


def _safe(name: str) -> str:
    """A shard name fit for a concurrency group and an artifact name."""
    return _UNSAFE.sub("-", name).strip("-") or "shard"


def by_benchmark(specs: Iterable[tuple[str, str]]) -> list[Shard]:
    """(spec id, benchmark ref) pairs -> one shard per benchmark ref, spec ids sorted."""
    groups: dict[str, list[str]] = {}
    for spec_id, ref in specs:
        groups.setdefault(ref, []).append(spec_id)
    names: dict[str, int] = {}
    shards = []
    for ref in sorted(groups):
        name = _safe(ref)
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:  # two refs that differ only in unsafe characters
            name = f"{name}-{names[name]}"
        shards.append(Shard(name=name, targets=tuple(sorted(groups[ref]))))
    return shards


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


def matrix_json(shards: Iterable[Shard]) -> str:
    """The `strategy.matrix` value for `fromJSON`, on one line: each shard's targets one id a line."""
    include = [{"shard": s.name, "targets": "\n".join(s.targets)} for s in shards]
    return json.dumps({"include": include}, separators=(",", ":"))
