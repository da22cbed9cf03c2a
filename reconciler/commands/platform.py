from __future__ import annotations

from pathlib import Path

import click

from ..localplatform.defaults import DEFAULT_HOST, DEFAULT_PORT
from ._params import SECONDS

DEFAULT_DB = ".osmosis/local-platform.sqlite3"  # what `platform = "local"` uses in process too


@click.group("platform")
def command() -> None:
    """Run the embedded Osmosis platform (serve)."""


@command.command("serve")
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Interface to listen on.")
@click.option(
    "--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port."
)
@click.option(
    "--db",
    "db",
    default=Path(DEFAULT_DB),
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The SQLite file that holds the platform's state.",
)
@click.option("--token", default=None, help="Bearer token clients must send (default: a random one, printed).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of run ids, names and outcomes.")
@click.option(
    "--speed",
    default=600.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Simulated seconds per second.",
)
@click.option("--latency-ms", default=0.0, type=click.FloatRange(min=0), help="Fault: added latency per request.")
@click.option(
    "--output-latency-ms",
    default=0.0,
    type=click.FloatRange(min=0),
    help="Fault: added latency per output file GET only (a WAN-like bucket).",
)
@click.option(
    "--error-rate", default=0.0, type=click.FloatRange(0, 1), help="Fault: fraction of requests answered 503."
)
@click.option(
    "--rate-limit",
    default=None,
    type=click.FloatRange(min=0, min_open=True),
    help="Fault: requests per second before 429.",
)
@click.option(
    "--truncate-rate", default=0.0, type=click.FloatRange(0, 1), help="Fault: fraction of downloads cut short."
)
@click.option(
    "--stop-cleanup",
    default=0.0,
    show_default=True,
    type=SECONDS,
    help="Simulated seconds a stopped run keeps its status before it shows stopped (sandbox cleanup).",
)
@click.option("--test-hooks", is_flag=True, help="Enable /_test routes (e.g. serve a hostile manifest for a run).")
@click.option(
    "--bench-artifacts",
    default=None,
    metavar="COUNT:SIZE",
    help="Every run also carries COUNT artifacts of SIZE bytes.",
)
def serve(
    host: str,
    port: int,
    db: Path,
    token: str | None,
    seed: int,
    speed: float,
    latency_ms: float,
    output_latency_ms: float,
    error_rate: float,
    rate_limit: float | None,
    truncate_rate: float,
    stop_cleanup: float,
    test_hooks: bool,
    bench_artifacts: str | None,
) -> None:
    """Serve the local platform over HTTP until interrupted.

    Prints one line, `serving on http://HOST:PORT token=TOKEN`, once it accepts connections.
    Point reconciler at it with OSMOSIS_PLATFORM_URL and OSMOSIS_TOKEN. A workspace is created,
    with the seeded catalog and secret records, the first time a new X-Osmosis-Workspace name or
    X-Osmosis-Git identity is seen.
    """
    import secrets

    from ..localplatform.faults import Faults
    from ..localplatform.serve import serve as run_server

    faults = Faults(
        latency_ms=latency_ms,
        output_latency_ms=output_latency_ms,
        error_rate=error_rate,
        rate_limit_per_second=rate_limit,
        truncate_rate=truncate_rate,
        seed=seed,
    )
    bulk = None
    if bench_artifacts:
        try:
            count, size = (int(part) for part in bench_artifacts.split(":", 1))
        except ValueError:
            raise click.BadParameter("expected COUNT:SIZE, e.g. 2000:100000", param_hint="--bench-artifacts") from None
        bulk = (count, size)
    if db == Path(DEFAULT_DB):  # not a path the user chose: a repository file, written by the rule of every other
        from ..safe_paths import writable_database

        writable_database(Path.cwd(), DEFAULT_DB)
    run_server(
        test_hooks=test_hooks,
        bench_artifacts=bulk,
        host=host,
        port=port,
        db=db,
        token=token or secrets.token_urlsafe(24),
        seed=seed,
        speed=speed,
        faults=faults,
        stop_cleanup=stop_cleanup,
    )
