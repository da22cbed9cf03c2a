"""`Value`: the base of the frozen pydantic models that are values (a spec's tables, what the
platform has, a plan's actions), kept by the thousand in a plan.

Pydantic gives every instance its own set of the field names that were given explicitly
(`model_fields_set`): 216 to 728 bytes per instance, 4 MiB of the peak of a plan of 1,000
specs with 1,000 owned runs, where each model class had one distinct such set. Instances of a
`Value` share one set per distinct content instead; the hook costs under a microsecond per
instance.

Sharing is safe because nothing can change a shared set: a frozen model refuses assignment
(the only path that adds to the set), and `model_copy` copies the set before it records the
fields it updated. Nothing in reconciler reads these sets (no `exclude_unset`); a caller that
mutated `model_fields_set` by hand would change it for every instance that shares it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

_SHARED: dict[frozenset[str], set[str]] = {}


class Value(BaseModel):
    model_config = ConfigDict(frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        given = self.__pydantic_fields_set__
        key = frozenset(given)
        shared = _SHARED.get(key)
        if shared is None:
            shared = _SHARED.setdefault(key, set(given))
        object.__setattr__(self, "__pydantic_fields_set__", shared)
