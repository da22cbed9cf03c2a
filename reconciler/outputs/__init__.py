"""Run outputs on disk: the platform's fixed layout, and the download engine that fills it."""
