"""Lines per package, module count and the largest function of `reconciler/` at a git revision.

    python tests/perf/module_sizes.py [REV ...]      (default: HEAD)

Reads the files with `git show`, so any two revisions can be compared in one run.
"""

from __future__ import annotations

import ast
import subprocess
import sys


def sizes(rev: str) -> str:
    files = [
        f
        for f in subprocess.run(
            ["git", "ls-tree", "-r", "--name-only", rev, "reconciler"], capture_output=True, text=True, check=True
        ).stdout.split()
        if f.endswith(".py")
    ]
    total, biggest = 0, (0, "")
    by_package: dict[str, int] = {}
    for name in files:
        source = subprocess.run(["git", "show", f"{rev}:{name}"], capture_output=True, text=True, check=True).stdout
        lines = source.count("\n")
        total += lines
        package = name.split("/")[1]
        by_package[package] = by_package.get(package, 0) + lines
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > biggest[0]:
                    biggest = (length, f"{name}:{node.name}")
    packages = ", ".join(f"{k} {v}" for k, v in sorted(by_package.items()))
    return (
        f"{rev}: {len(files)} modules, {total} lines; largest function {biggest[1]} ({biggest[0]} lines)\n  {packages}"
    )


if __name__ == "__main__":
    for rev in sys.argv[1:] or ["HEAD"]:
        print(sizes(rev))
