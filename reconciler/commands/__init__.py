"""One module per subcommand; each exposes `command`, a click command, and imports its work lazily."""
