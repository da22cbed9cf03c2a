"""The embedded Osmosis platform: a Starlette app over one SQLite file, with a run simulator.

`create_app` builds it (see `app.py`); `reconciler platform serve` serves it over HTTP.
"""

from __future__ import annotations

from .app import create_app
from .faults import Faults

__all__ = ["Faults", "create_app"]
