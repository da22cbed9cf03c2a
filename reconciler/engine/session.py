"""Everything a command needs to talk about the repository and the platform, opened in one place."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..core.identity import fingerprint
from ..core.world import Desired, DesiredRun, Observed
from ..errors import SpecError
from ..osmosis.client import OsmosisClient
from ..safe_paths import writable_path
from ..settings import Project
from ..specs.loader import LoadResult, discover, load_specs
from .adoption import with_adoptions
from .machine_cache import MachineCache
from .observe import Ownership, observe
from .render_inputs import templates_digest
from .state import SpecRecord, State, load_state, save_state


def load_desired(project: Project) -> tuple[Desired, LoadResult]:
    """Every spec under the specs dir; any validation error stops here with every diagnostic."""
    result = load_specs(discover([project.existing_specs_path()]), project.root, project.settings.specs_dir)
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
    ownership: Ownership = field(init=False)

    def __post_init__(self) -> None:
        cache = self.machine or MachineCache.in_memory()
        self.ownership = Ownership(self.client, self.state, cache, self.owner, legacy_owner=self.legacy_owner)

    @property
    def state_path(self) -> Path:
        return self.project.root / self.project.settings.state_file

    @property
    def outputs_root(self) -> Path:
        return self.project.root / self.project.settings.outputs_dir

    async def observe(self, *, unmanaged: bool = False) -> Observed:
        """What the platform has; `unmanaged` keeps runs that are not ours as models too (status lists them)."""
        observed = await observe(self.ownership, self.desired, outputs_root=self.outputs_root, unmanaged=unmanaged)
        observed = await with_adoptions(self.client, self.desired, observed, self.state, self.outputs_root)
        self.adopted = settle_intents(self.state, observed)
        return observed.model_copy(update={"templates_digest": templates_digest(self.project.root)})

    def save_state(self) -> bool:
        return save_state(writable_path(self.project.root, self.project.settings.state_file), self.state)


def settle_intents(state: State, observed: Observed) -> tuple[str, ...]:
    """Adopt runs whose submit was interrupted after the platform accepted it; returns their names."""
    adopted = []
    for intent in list(state.intents):
        match = [
            r
            for r in observed.runs
            if r.marker is not None
            and r.marker.owner == observed.owner
            and (r.marker.spec_id, r.marker.fingerprint) == (intent.spec_id, intent.fingerprint)
        ]
        if match:
            run = max(match, key=lambda r: (r.created_at or "", r.id))
            state.specs[intent.spec_id] = SpecRecord(
                run_id=run.id, run_name=run.name, fingerprint=intent.fingerprint, benchmark_id=run.benchmark_id
            )
            state.intents.remove(intent)
            adopted.append(run.name)
    return tuple(adopted)


@asynccontextmanager
async def open_session(
    project: Project, *, platform_flag: str | None = None, workspace_flag: str | None = None
) -> AsyncIterator[RepoSession]:
    from .connection import connect_project

    desired, specs = load_desired(project)
    connection = connect_project(project, platform_flag=platform_flag, workspace_flag=workspace_flag)
    client, platform, owner = connection.client, connection.platform, connection.owner
    workspace, identity = connection.workspace, connection.identity
    state = load_state(project.root / project.settings.state_file)
    machine = MachineCache.open(platform=platform, scope=workspace or identity or "", owner=owner)
    # earlier versions let a named workspace win over the repository identity as the owner
    legacy = workspace if workspace and not project.settings.owner and workspace != owner else None
    async with client:
        yield RepoSession(project, platform, owner, client, desired, specs, state, machine=machine, legacy_owner=legacy)
