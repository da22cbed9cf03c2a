"""Results -> text, Markdown, SVG and JSON. Data in, text out; no I/O."""
