"""require_smoke against the real local platform: only the agents a FINISHED smoke run's own
config ran count as smoke-tested, whatever the smoke spec says now."""

from __future__ import annotations

import asyncio
from pathlib import Path

from reconciler.core.plan import Action, plan
from reconciler.core.world import Policy
from reconciler.engine.apply import Applier
from reconciler.engine.session import RepoSession, load_desired
from reconciler.engine.state import State
from reconciler.localplatform.app import create_app
from reconciler.settings import load_project
from tests.inprocess_client import inprocess_client

AGENT = """
[[agents]]
harness = "codex"
[agents.model]
type = "provider"
model = "{model}"
api_key_secret = "{secret}"
"""
GPT = AGENT.format(model="openai/gpt-5.2", secret="OPENAI_API_KEY")
CLAUDE = AGENT.format(model="anthropic/claude-sonnet-4", secret="ANTHROPIC_API_KEY")
SMOKE = """
[experiment]
benchmark = "terminal-bench-2-1"
[tasks]
task_names = ["terminal-bench/git-multibranch"]
[env]
LOCALPLATFORM_FORCE_STATUS = "finished"
"""
FULL = '[experiment]\nbenchmark = "terminal-bench-2-1"\n'
POLICY = '[benchmark]\nref = "terminal-bench-2-1"\n[policy]\nrequire_smoke = true\n'
LATER = 10_000_000.0  # simulated seconds: long enough for any run to end


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.now = 1_700_000_000.0
        self.app = create_app(root / "platform.sqlite3", speed=1.0, clock=lambda: self.now)
        self.state = State()
        for name, text in {
            "benchmarks/tb.toml": POLICY,
            "runs/smoke.toml": SMOKE + GPT,
            "runs/full.toml": FULL + GPT + CLAUDE,
        }.items():
            self.write(name, text)
        (root / "reconciler.toml").write_text('workspace = "smoke"\n')

    def write(self, name: str, text: str) -> None:
        path = self.root / "specs" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def step(self, *, apply: bool) -> dict[str, Action]:
        """Plan (and apply) once with everything read fresh from the files and the platform."""

        async def go() -> dict[str, Action]:
            project = load_project(self.root)
            desired, specs = load_desired(project)
            client = inprocess_client(self.app, "smoke")
            async with client:
                session = RepoSession(project, "local", "acme/evals", client, desired, specs, self.state)
                observed = await session.observe()
                p = plan(desired, observed, Policy())
                if apply:
                    await Applier(session, observed).run(p)
            return {a.spec_id or "": a for a in p.actions}

        return asyncio.run(go())


def test_an_agent_added_to_a_finished_smoke_spec_is_not_smoke_tested_until_its_own_smoke_run_finishes(
    tmp_path: Path,
) -> None:
    world = World(tmp_path)
    assert world.step(apply=True)["runs/full"].blocked_by == "smoke_required"
    world.now += LATER
    # gpt-5.2 is smoke-tested; then the smoke spec gains claude-sonnet-4
    world.write("runs/smoke.toml", SMOKE + GPT + CLAUDE)
    first = world.step(apply=True)
    assert first["runs/full"].blocked_by == "smoke_required" and "claude-sonnet-4" in first["runs/full"].reason
    assert first["runs/smoke"].kind.value == "submit"
    # the new smoke run is live: the full run still waits for it
    running = world.step(apply=False)
    assert running["runs/smoke"].kind.value == "wait"
    assert running["runs/full"].blocked_by == "smoke_required"
    world.now += LATER
    assert world.step(apply=False)["runs/full"].kind.value == "submit"


def test_the_agents_a_finished_run_ran_are_cached_in_the_state_file(tmp_path: Path) -> None:
    world = World(tmp_path)
    world.step(apply=True)
    world.now += LATER
    world.step(apply=False)
    (ran,) = world.state.run_agents.values()
    assert ran.selection and ran.agents == (("codex", "openai/gpt-5.2"),)
