"""GitOps for benchmark runs on the Osmosis platform."""

__version__ = "0.1.0"
