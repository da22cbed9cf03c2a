"""The command line: a thin shell that parses, calls one function, renders, and exits.

Subcommands live in `reconciler.commands` and are imported only when used, so
`reconciler --help` stays fast.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import os
import sys
from typing import Any

import click

from . import __version__
from .errors import EXIT_CODES_HELP, CommandExit, ExitCode, ReconcilerError

# name -> (module, short help); the help is here so listing commands imports nothing.
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("reconciler.commands.validate", "Check specs offline: schema and every platform rule."),
    "platform": ("reconciler.commands.platform", "Run the embedded Osmosis platform (serve)."),
    "plan": ("reconciler.commands.plan", "Show what apply would submit, stop, download and render, and what it costs."),
    "apply": ("reconciler.commands.apply", "Carry out the plan without ever submitting a config twice."),
    "status": ("reconciler.commands.status", "One row per spec and per unmanaged run: status, progress, pass@1, sync."),
    "render": ("reconciler.commands.render", "Write leaderboards (Markdown, SVG) into the repository; --check for CI."),
    "reconcile": ("reconciler.commands.reconcile", "The scheduled job: apply, wait, download, render, commit, push."),
    "shards": ("reconciler.commands.shards", "List the shards of the scheduled job as a GitHub Actions matrix."),
    "wait": ("reconciler.commands.wait", "Follow owned runs with progress bars until they end."),
    "init": ("reconciler.commands.init", "Scaffold a repository: settings, example specs, templates, workflows."),
    "download": (
        "reconciler.commands.download",
        "Fetch run outputs into .osmosis/benchmarks/, resumably and path-safely.",
    ),
    "runs": (
        "reconciler.commands.runs",
        "Any run of the workspace: owner, status; per-agent rank, pass@1, pass@k, cost.",
    ),
    "logs": ("reconciler.commands.logs", "A run's lifecycle log, paged with the cursor; --follow until it ends."),
    "secrets": (
        "reconciler.commands.secrets",
        "Secret records the specs need and where they exist; `secrets set NAME`.",
    ),
    "import": ("reconciler.commands.import_", "Write a spec that adopts an existing run (`[reconcile] adopt`)."),
    "benchmarks": (
        "reconciler.commands.benchmarks",
        "List the workspace's benchmarks, or show one: tasks, sets, needs.",
    ),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = module.command
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and name not in COMMANDS:
            import difflib

            close = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            if close:
                suggestion = " or ".join(f"'{c}'" for c in close)
                ctx.fail(f"No such command '{name}'. Did you mean {suggestion}?")
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, prog_name="reconciler")
def root() -> None:
    """GitOps for Osmosis benchmark runs.

    Specs in git (specs/runs/*.toml, specs/benchmarks/*.toml) are the desired state;
    reconciler plans the difference against the platform, applies it without ever
    submitting a run twice, downloads results and renders leaderboards back into git.

    Start with `reconciler validate`, then `reconciler plan`.
    """


class _WatchedStdout:
    """sys.stdout that remembers whether a command printed anything (its JSON document)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.written = False

    def write(self, text: Any) -> Any:
        if text:
            self.written = True
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _wants_json(args: list[str]) -> bool:
    from itertools import pairwise

    return "--format=json" in args or any(a == "--format" and b == "json" for a, b in pairwise(args))


def main(argv: list[str] | None = None) -> Any:
    """Run the command line; the one place where every outcome becomes an exit code (see `ExitCode`).

    Under `--format json`, a command that fails before printing its document prints an error
    document instead (`kind: "error"`), so stdout is always one JSON document; the message
    goes to stderr as in text mode.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    watched = _WatchedStdout(sys.stdout) if _wants_json(args) else None
    if watched is not None:
        sys.stdout = watched

    def fail(code: int, message: str, hint: str | None = None) -> None:
        if watched is not None and not watched.written:
            from .render.tables import json_document

            error = {"message": message, "hint": hint, "exit_code": int(code)}
            try:
                watched.write(json_document("error", {"error": error}))
                watched.flush()
            except OSError:  # stdout closed (a reader that left): the exit code still says it
                pass
        sys.exit(code)

    if argv is None:
        # the process ends with this call: spare its last garbage collection the objects the command
        # built (a 10,000-run plan spent 60-80 ms of its exit there); the memory goes with the process
        atexit.register(gc.freeze)
    try:
        root.main(args=args, prog_name="reconciler", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except CommandExit as exc:
        sys.exit(exc.exit_code)
    except click.UsageError as exc:  # click's parser errors exit 2 by default, which means "changes pending"
        exc.show()
        fail(ExitCode.USAGE, exc.format_message())
    except click.ClickException as exc:
        exc.show()
        fail(exc.exit_code, exc.format_message())
    except click.Abort:
        click.echo("aborted", err=True)
        fail(ExitCode.ERROR, "aborted")
    except ReconcilerError as exc:
        click.echo(exc.render(), err=True)
        fail(exc.exit_code, exc.message, exc.hint)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        fail(ExitCode.INTERRUPTED, "interrupted")
    except OSError as exc:  # the machine said no (a full disk, a folder swapped in, permissions): no bug
        if os.environ.get("RECONCILER_DEBUG"):
            import traceback

            traceback.print_exc()
        where = f": {exc.filename}" if exc.filename else ""
        message = f"{exc.strerror or exc}{where}"
        hint = "check that path, its permissions and the free space, then run the command again"
        click.echo(f"error: {message}\nhint: {hint}", err=True)
        fail(ExitCode.ERROR, message, hint)
    except Exception as exc:  # anything else is a bug: say so, briefly
        if os.environ.get("RECONCILER_DEBUG"):
            import traceback  # here, not at the top: every command would pay for it

            traceback.print_exc()
        message = f"internal error: {type(exc).__name__}: {exc}"
        click.echo(f"{message}\nthis is a bug in reconciler; rerun with RECONCILER_DEBUG=1 for the traceback", err=True)
        fail(ExitCode.ERROR, message)
    sys.exit(ExitCode.OK)


if __name__ == "__main__":
    main()
