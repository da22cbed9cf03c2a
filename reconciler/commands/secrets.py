from __future__ import annotations

import click

from ._common import platform_options


@click.group("secrets", invoke_without_command=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@platform_options
@click.pass_context
def command(ctx: click.Context, fmt: str, platform: str | None, workspace: str | None) -> None:
    """Show every secret record the specs need and where it exists.

    One row per spec and record (model, harness, judge and verifier keys, and
    the benchmark's implicit `required_secret_names`): present in the
    workspace, in your personal records, or missing. Values are never shown.
    Create a missing record with `reconciler secrets set NAME`.
    """
    ctx.obj = {"platform": platform, "workspace": workspace}
    if ctx.invoked_subcommand is not None:
        return
    from ..engine.secrets_view import secret_needs
    from ..engine.session import open_session
    from ..reports.secrets import needs_json, render_needs
    from ..settings import load_project
    from ._common import run_async

    project = load_project()

    async def go() -> str:
        async with open_session(project, platform_flag=platform, workspace_flag=workspace) as session:
            needs = await secret_needs(session)
        return needs_json(needs) if fmt == "json" else render_needs(needs)

    click.echo(run_async(go()), nl=False)


@command.command(
    "set",
    short_help="Create or update a record; the value from stdin or --from-env.",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
)
@click.argument("name")
@click.option(
    "--scope",
    type=click.Choice(["workspace", "personal"]),
    default="personal",
    show_default=True,
    help="workspace: shared with members who submit runs; personal: yours only.",
)
@click.option("--from-env", "from_env", metavar="VAR", help="Read the value from this environment variable.")
@platform_options
@click.pass_context
def set_command(
    ctx: click.Context,
    name: str,
    scope: str,
    from_env: str | None,
    platform: str | None,
    workspace: str | None,
) -> None:
    """Create or update the secret record NAME; the value is never an argument.

    The value comes from standard input (typed hidden on a terminal, or piped:
    `printf %s "$KEY" | reconciler secrets set NAME`) or from --from-env VAR.
    Prints only the name and scope.
    """
    import os
    import sys

    from ..engine.connection import open_client
    from ..engine.secrets_view import check_name, set_secret
    from ..errors import UsageError
    from ..settings import load_project
    from ._common import run_async

    if ctx.args:
        # never echo it: a value typed as an argument is already in the shell history, not on the platform
        raise UsageError(
            "secrets set takes NAME, --scope and --from-env only; the value comes from standard input"
            " or --from-env, never from an argument",
            hint=f'printf %s "$VALUE" | reconciler secrets set {name}',
        )
    check_name(name)
    if from_env is not None:
        value = os.environ.get(from_env, "")
        source = f"${from_env}"
    elif sys.stdin.isatty():
        value = click.prompt(f"Value for {name}", hide_input=True, default="", show_default=False)
        source = "the prompt"
    else:
        source = "standard input"
        try:
            value = sys.stdin.buffer.read().decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            raise UsageError(
                f"the value for {name} on {source} is not UTF-8 text; the platform stores text values",
                hint=f"base64-encode binary values: base64 < FILE | reconciler secrets set {name}",
            ) from None
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):  # an environment variable of raw bytes
        raise UsageError(
            f"the value for {name} in {source} is not UTF-8 text; the platform stores text values",
            hint=f"base64-encode binary values: base64 < FILE | reconciler secrets set {name}",
        )
    if not value:
        raise UsageError(
            f"no value for {name}: {source} is empty", hint=f'printf %s "$VALUE" | reconciler secrets set {name}'
        )
    parent = ctx.parent.obj if ctx.parent and ctx.parent.obj else {}
    project = load_project()

    async def go() -> None:
        async with open_client(
            project,
            platform_flag=platform or parent.get("platform"),
            workspace_flag=workspace or parent.get("workspace"),
        ) as conn:
            await set_secret(conn.client, name, value, "workspace" if scope == "workspace" else "personal")

    run_async(go())
    click.echo(f"set {name} ({scope})")
