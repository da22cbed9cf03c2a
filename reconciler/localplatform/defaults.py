"""Where `reconciler platform serve` listens unless told otherwise, in one place: the command's
defaults and the links the in-process platform writes into leaderboards must name the same address.
Importing this loads nothing else, so `reconciler platform --help` stays cheap."""

from __future__ import annotations

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_PUBLIC_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
