"""Write the README's example outputs from the real commands, so they cannot drift from what users see.

Every ```console block that starts with `$ reconciler ...` is run in a fresh copy of this
repository's example (reconciler.toml, specs/, templates/, leaderboards/) on a new local
platform, and its body is replaced by what the command printed. A line
`<!-- readme: stage SOURCE as DEST -->` right above a block copies SOURCE into the copy
first (for a spec that shows an error).

    python scripts/readme.py           rewrite README.md
    python scripts/readme.py --check   exit 1, with a diff, when README.md is out of date
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ("reconciler.toml", "specs", "templates", "leaderboards")
BLOCK = re.compile(
    r"(?P<stage><!-- readme: stage (?P<source>\S+) as (?P<dest>\S+) -->\n)?"
    r"```console\n\$ (?P<command>reconciler[^\n]*)\n(?P<body>.*?)```",
    re.S,
)


def example_copy(into: Path) -> Path:
    copy = into / "example"
    copy.mkdir()
    for name in EXAMPLE:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, copy / name)
        else:
            shutil.copy(ROOT / name, copy / name)
    return copy


def user_env() -> dict[str, str]:
    """The environment of a user's shell: no platform, CI or GitHub settings leaking in from ours."""
    dropped = ("OSMOSIS_", "GITHUB_", "RECONCILER_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped) and k != "CI"}
    return env | {"COLUMNS": "120", "NO_COLOR": "1"}


def output_of(command: str, stage: tuple[str, str] | None) -> str:
    """What `command` prints (stdout, then stderr) in a fresh example copy."""
    with tempfile.TemporaryDirectory(prefix="readme-") as tmp:
        copy = example_copy(Path(tmp))
        if stage is not None:
            source, dest = stage
            (copy / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / source, copy / dest)
        args = shlex.split(command)[1:]
        done = subprocess.run(
            [sys.executable, "-m", "reconciler.cli", *args],
            cwd=copy,
            env=user_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return done.stdout + done.stderr


def regenerate(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        stage = (match["source"], match["dest"]) if match["stage"] else None
        body = output_of(match["command"], stage)
        return f"{match['stage'] or ''}```console\n$ {match['command']}\n{body}```"

    return BLOCK.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail with a diff instead of rewriting")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    options = parser.parse_args(argv)
    current = options.readme.read_text(encoding="utf-8")
    fresh = regenerate(current)
    if fresh == current:
        return 0
    if options.check:
        diff = difflib.unified_diff(
            current.splitlines(keepends=True), fresh.splitlines(keepends=True), "README.md", "README.md (regenerated)"
        )
        sys.stderr.writelines(diff)
        sys.stderr.write(
            f"{options.readme.name}: example outputs differ from what the commands print;"
            " run `python scripts/readme.py` to rewrite them\n"
        )
        return 1
    options.readme.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
