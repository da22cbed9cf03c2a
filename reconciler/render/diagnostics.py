"""Validation results for terminals, GitHub annotations and machines."""

from __future__ import annotations

import json

from ..specs.loader import LoadResult


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def render_text(result: LoadResult, *, github_annotations: bool = False) -> str:
    lines = [d.render() for d in result.diagnostics]
    if github_annotations:
        lines += [d.github_annotation() for d in result.diagnostics]
    errors, warnings = len(result.errors), len(result.warnings)
    if errors:
        lines.append(
            f"{_plural(errors, 'error')}, {_plural(warnings, 'warning')} in {_plural(result.files, 'file')};"
            " fix them and run `reconciler validate` again"
        )
    elif result.files == 0:
        lines.append("no spec files found")
    else:
        specs = len(result.run_specs) + len(result.benchmark_specs)
        lines.append(f"{_plural(specs, 'spec')} valid ({_plural(warnings, 'warning')}); next: `reconciler plan`")
    return "\n".join(lines) + "\n"


def render_json(result: LoadResult) -> str:
    doc = {
        "schema_version": 1,
        "valid": not result.errors,
        "files": result.files,
        "errors": [d.model_dump(mode="json", exclude={"severity"}) for d in result.errors],
        "warnings": [d.model_dump(mode="json", exclude={"severity"}) for d in result.warnings],
        "specs": {
            "runs": sorted(s.id for s in result.run_specs),
            "benchmarks": sorted(s.id for s in result.benchmark_specs),
        },
    }
    return json.dumps(doc, indent=2, sort_keys=True)
