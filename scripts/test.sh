#!/usr/bin/env bash
# Install the package with its dev tools into .venv, then run every gate: ruff, mypy, import layers, workflows, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]'
export PATH="$PWD/.venv/bin:$PATH"
echo "== ruff"; ruff check . && ruff format --check .
echo "== mypy"; mypy
echo "== import layers"; lint-imports --no-cache
echo "== actionlint"; actionlint && actionlint reconciler/scaffold/workflows/*.yml  # with shellcheck on every run: script
# -n auto: one worker per core; loadscope keeps a module's tests (and its module-scoped world) on one worker
echo "== pytest"; pytest -q -n auto --dist loadscope "$@"
