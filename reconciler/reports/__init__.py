"""What a command reports about the engine's results: the text tables and the versioned JSON documents
of `apply`, `runs`, `benchmarks`, `secrets`, `wait`, `render`, `reconcile` and `init`. Above the engine, below
the commands; `reconciler.render` below the engine turns plain values into text."""
