"""Everything a command needs to talk about the repository and the platform, opened in one place."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Container, Iterable
from contextlib import asynccontextmanager
from dataclasses import InitVar, dataclass, field
from pathlib import Path

from ..core.identity import Marker, fingerprint
from ..core.world import Desired, DesiredRun, Observed, ObservedRun, keeper
from ..errors import ReconcilerError, SpecError
from ..osmosis.client import OsmosisClient
from ..safe_paths import writable_path
from ..settings import LOCAL_PLATFORM, Project, resolve_platform
from ..specs.loader import LoadResult, discover
from ..values import shared_equal
from .adoption import with_adoptions
from .machine_cache import MachineCache
from .observe import EarlyReads, Ownership, observe
from .other_core import Elsewhere
from .render_inputs import templates_digest
from .stale_checkout import CheckoutHistory
from .state import SpecRecord, State, load_state, save_state


def load_desired(project: Project) -> tuple[Desired, LoadResult]:
    """Every spec under the specs dir; any validation error stops here with every diagnostic."""
    specs = discover([project.existing_specs_path()])
    result = project.load_specs(specs)
    if result.errors:
        lines = "\n".join(d.render() for d in result.errors)
        raise SpecError(f"specs are invalid:\n{lines}", hint="fix them (see `reconciler validate`) and run again")
    runs = tuple(DesiredRun(spec=s, fingerprint=fingerprint(s.config)) for s in result.run_specs)
    return Desired(runs=runs, benchmarks=tuple(result.benchmark_specs)), result


def git_identity(root: Path) -> str | None:
    from ..vcs.origin import github_identity

    return github_identity(root)


@dataclass
class RepoSession:
    project: Project
    platform: str
    owner: str
    client: OsmosisClient
    desired: Desired
    specs: LoadResult
    state: State
    adopted: tuple[str, ...] = ()
    machine: MachineCache | None = None  # None: remembered for this process only
    legacy_owner: str | None = None
    shared_owner: bool = False  # settings.Owner.shared: the plan stops no run, nor does apply
    # the reads open_session started before the specs were loaded, used by the first observe only
    early: EarlyReads | None = None
    ownership: Ownership = field(init=False)
    history: CheckoutHistory = field(init=False)  # which runs are newer than this checkout
    known_owners: InitVar[Ownership | None] = None  # built already (for the early reads)

    def __post_init__(self, known_owners: Ownership | None) -> None:
        self.history = CheckoutHistory(self.project.root)
        cache = self.machine or MachineCache.in_memory()
        self.ownership = known_owners or Ownership(
            self.client, self.state, cache, self.owner, legacy_owner=self.legacy_owner
        )

    @property
    def state_path(self) -> Path:
        return self.project.root / self.project.settings.state_file

    @property
    def outputs_root(self) -> Path:
        return self.project.root / self.project.settings.outputs_dir

    async def observe(self, *, unmanaged: bool = False) -> Observed:
        """What the platform has; `unmanaged` keeps runs that are not ours as models too (status lists them)."""
        early, self.early = self.early, None  # read once: a later observe must see the platform anew
        try:
            observed = await observe(
                self.ownership, self.desired, outputs_root=self.outputs_root, unmanaged=unmanaged, early=early
            )
        finally:
            if early is not None:
                await early.close()
        # one turn of the event loop: the done-callbacks of the reads just gathered still hold
        # their results (a run listing: 2.5 MiB at 10,000 runs) until the loop runs them, and a
        # plan computes its actions without yielding to it
        await asyncio.sleep(0)
        observed = await with_adoptions(self.client, self.desired, observed, self.state, self.outputs_root)
        self.adopted = settle_intents(self.state, observed)
        restore_records(self.state, observed, self.desired, unconfirmed=self.ownership.unconfirmed)
        return observed.model_copy(
            update={"templates_digest": templates_digest(self.project.root), "shared_owner": self.shared_owner}
        )

    async def ours_now(self, observed: Observed, run_ids: Iterable[str]) -> dict[str, Marker]:
        """run id -> our marker, for each of `run_ids` that is ours as the platform says to this
        process: read now unless read already, or claimed by a spec's `adopt` (read when observed).
        The one rule before a run is downloaded or shown as this repository's."""
        adopted = observed.adopted_markers()
        wanted = list(dict.fromkeys(run_ids))
        read = await self.ownership.confirmed(r for r in wanted if r not in adopted)
        return {r: adopted.get(r) or read[r] for r in wanted if r in adopted or r in read}

    def save_state(self) -> bool:
        root = self.project.root
        return save_state(
            writable_path(root, self.project.settings.state_file), self.ownership.committed_state(), below=root
        )


def settle_intents(state: State, observed: Observed) -> tuple[str, ...]:
    """Adopt runs whose submit was interrupted after the platform accepted it; returns their names."""
    ours = _ours_by_config(observed)
    adopted = []
    for intent in list(state.intents):
        runs = ours.get((intent.spec_id, intent.fingerprint))
        if runs:
            run = _record(state, intent.spec_id, intent.fingerprint, runs)
            state.intents.remove(intent)
            adopted.append(run.name)
    return tuple(adopted)


def _ours_by_config(observed: Observed, unconfirmed: Container[str] = ()) -> dict[tuple[str, str], list[ObservedRun]]:
    """(spec id, fingerprint) -> our runs of that config; none whose marker is in `unconfirmed`."""
    ours: dict[tuple[str, str], list[ObservedRun]] = {}
    for run in observed.runs:
        marker = run.marker
        if marker is not None and marker.owner == observed.owner and run.id not in unconfirmed:
            ours.setdefault((marker.spec_id, marker.fingerprint), []).append(run)
    return ours


def _record(state: State, spec_id: str, fingerprint: str, runs: list[ObservedRun]) -> ObservedRun:
    """Record the run every plan keeps (core.world.keeper) of `runs` as the spec's; returns it."""
    run = keeper(runs)
    state.specs[spec_id] = SpecRecord(
        run_id=run.id, run_name=run.name, fingerprint=fingerprint, benchmark_id=run.benchmark_id
    )
    return run


@asynccontextmanager
async def open_session(
    project: Project,
    *,
    platform_flag: str | None = None,
    workspace_flag: str | None = None,
    early_reads: bool = False,
) -> AsyncIterator[RepoSession]:
    """The specs, the platform client, the state file and this machine's cache, opened together.

    Invalid specs are reported before anything else is looked at, as `validate` would. With
    `early_reads` (for a command that observes at once) and a platform URL, the reads the state
    file (or this machine's cache) names are started before the spec files load
    (engine/observe.EarlyReads): a plan of 1,000 specs against 10,000 runs then reads its run
    listing while it parses the specs.
    """
    if early_reads:
        project.existing_specs_path()  # no specs folder: said before anything else is opened
        # the local platform answers in this thread and creates its database when first opened:
        # reading early would gain nothing and would write before the specs were checked
        with contextlib.suppress(ReconcilerError):  # an unresolvable platform is reported below
            early_reads = resolve_platform(project, platform_flag) != LOCAL_PLATFORM
    if not early_reads:
        async with _opened(project, platform_flag, workspace_flag, load_desired(project)) as session:
            yield session
        return
    # spec files load on another core (or a worker thread) while the event loop serves the early reads
    # equal values made one before they cross (values.shared_equal): 1,000 specs then unpickle
    # in half the time and are held in half the memory (7 ms and 1.7 MiB, not 14 ms and 3.4 MiB)
    loading = Elsewhere(functools.partial(load_desired, project), to_send=shared_equal)
    try:
        async with _opened(project, platform_flag, workspace_flag, loading) as session:
            yield session
    finally:
        loading.cancel()  # a child still running when the session failed to open; what the fork froze thaws


@asynccontextmanager
async def _opened(
    project: Project,
    platform_flag: str | None,
    workspace_flag: str | None,
    loaded: tuple[Desired, LoadResult] | Elsewhere[tuple[Desired, LoadResult]],
) -> AsyncIterator[RepoSession]:
    """The session around specs already loaded, or still loading elsewhere (early reads start then)."""
    from .connection import connect_project

    loading = loaded if isinstance(loaded, Elsewhere) else None
    try:
        connection = connect_project(project, platform_flag=platform_flag, workspace_flag=workspace_flag)
        state = load_state(project.root / project.settings.state_file)
    except ReconcilerError:
        if loading is not None:
            await loading.result()  # a spec error is still the one reported
        raise
    client, platform, owner = connection.client, connection.platform, connection.owner
    workspace = connection.workspace
    machine = connection.machine_cache()
    # earlier versions let a named workspace win over the repository identity as the owner
    legacy = workspace if workspace and not project.settings.owner and workspace != owner else None
    async with client:
        owners = Ownership(client, state, machine, owner, legacy_owner=legacy)
        early = EarlyReads(owners) if loading is not None else None
        try:
            desired, specs = await loaded.result() if isinstance(loaded, Elsewhere) else loaded
            session = RepoSession(
                project, platform, owner, client, desired, specs, state, machine=machine, legacy_owner=legacy,
                shared_owner=connection.shared_owner, early=early, known_owners=owners,
            )  # fmt: skip
            yield session
        finally:
            if early is not None:
                await early.close()


def restore_records(state: State, observed: Observed, desired: Desired, *, unconfirmed: Container[str]) -> None:
    """Rebuild the record of each spec whose current config runs as ours but is not recorded.

    The state file is a cache (docs: "rebuilt from the platform when lost"): a record lost to a
    deleted state file, or to a push retry that kept the other job's copy, comes back from the
    runs' markers: the run every plan keeps (core.world.keeper) of the spec's current
    fingerprint. A record of another config is replaced the same way. A marker only this
    machine's cache claims (`unconfirmed`) restores nothing: the state file commits no such
    claim. The commit that submitted the run is not known again, so such a run gets no results
    comment."""
    ours = _ours_by_config(observed, unconfirmed)
    for d in desired.runs:
        spec_id, fingerprint = d.spec.id, d.fingerprint
        runs = ours.get((spec_id, fingerprint))
        record = state.specs.get(spec_id)
        if not runs or (record is not None and record.fingerprint == fingerprint):
            continue
        if any(i.spec_id == spec_id for i in state.intents):
            continue  # settle_intents decides that spec
        _record(state, spec_id, fingerprint, runs)
