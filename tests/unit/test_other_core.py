"""A computation moved to another core (engine/other_core.py) gives what it gives in process.

Each forking case runs in a fresh interpreter: `Elsewhere` forks only while its process has a
single thread, which a test process cannot promise.
"""

from __future__ import annotations

import json
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reconciler.core.identity import fingerprint
from reconciler.engine.session import load_desired
from reconciler.errors import SpecError
from reconciler.settings import load_project
from reconciler.values import shared_equal

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
REPO = Path(__file__).resolve().parents[2]


def run_script(body: str, cwd: Path) -> dict[str, object]:
    """Run `body` (which ends by printing one JSON line) in a fresh interpreter."""
    script = "import asyncio, json, os, sys, threading\nfrom reconciler.engine.other_core import Elsewhere\n"
    done = subprocess.run(
        [sys.executable, "-c", script + textwrap.dedent(body)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


@pytest.fixture
def project_with_corpus(tmp_path: Path) -> Path:
    (tmp_path / "reconciler.toml").write_text('workspace = "units"\n', encoding="utf-8")
    shutil.copytree(CORPUS / "good", tmp_path / "specs")
    return tmp_path


LOAD_ON_ANOTHER_CORE = """
from pathlib import Path
import functools
from reconciler.engine.session import load_desired
from reconciler.settings import load_project
from reconciler.values import shared_equal
project = load_project(Path("."))
async def main():
    elsewhere = Elsewhere(functools.partial(load_desired, project), to_send=shared_equal)
    return elsewhere.forked, await elsewhere.result()
forked, there = asyncio.run(main())
here = load_desired(project)
print(json.dumps({"forked": forked, "equal": there == here, "runs": len(there[0].runs)}))
"""


@pytest.mark.parametrize("where", ["test-corpus", "repository-examples"])
def test_the_specs_loaded_in_a_forked_child_equal_those_loaded_here(project_with_corpus: Path, where: str) -> None:
    root = project_with_corpus if where == "test-corpus" else REPO
    answer = run_script(LOAD_ON_ANOTHER_CORE, root)
    assert answer == {"forked": True, "equal": True, "runs": len(load_desired(load_project(root))[0].runs)}
    assert answer["runs"] != 0


def test_a_result_sent_back_keeps_every_value_the_plan_reads(project_with_corpus: Path) -> None:
    """What the child sends is what this process would have built: configs, fingerprints, ids."""
    desired, loaded = load_desired(load_project(project_with_corpus))
    sent = shared_equal(load_desired(load_project(project_with_corpus)))
    back_desired, back_loaded = pickle.loads(pickle.dumps(sent, protocol=pickle.HIGHEST_PROTOCOL))
    assert (back_desired, back_loaded) == (desired, loaded)
    for run in back_desired.runs:
        assert fingerprint(run.spec.config) == run.fingerprint
    assert [(r.spec.id, r.spec.path) for r in back_desired.runs] == [(r.spec.id, r.spec.path) for r in desired.runs]
    # the order task selectors were written in (a private attribute) is kept too
    assert [r.spec.config.tasks.selectors for r in back_desired.runs if r.spec.config.tasks] == [
        r.spec.config.tasks.selectors for r in desired.runs if r.spec.config.tasks
    ]


def test_a_spec_error_in_the_child_is_raised_here_as_loading_here_raises_it(project_with_corpus: Path) -> None:
    (project_with_corpus / "specs" / "broken.toml").write_text('[experiment]\nbenchmark = "x"\nnope = 1\n')
    with pytest.raises(SpecError) as here:
        load_desired(load_project(project_with_corpus))
    answer = run_script(
        """
        from pathlib import Path
        import functools
        from reconciler.engine.session import load_desired
        from reconciler.errors import SpecError
        from reconciler.settings import load_project
        project = load_project(Path("."))
        async def main():
            elsewhere = Elsewhere(functools.partial(load_desired, project))
            try:
                await elsewhere.result()
            except SpecError as error:
                return elsewhere.forked, str(error)
            return elsewhere.forked, None
        forked, message = asyncio.run(main())
        print(json.dumps({"forked": forked, "message": message}))
        """,
        project_with_corpus,
    )
    assert answer == {"forked": True, "message": str(here.value)}


def test_a_child_that_dies_leaves_the_computation_to_this_process(tmp_path: Path) -> None:
    answer = run_script(
        """
        import signal
        parent = os.getpid()
        def compute():
            if os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)
            return {"computed_by": os.getpid()}
        async def main():
            elsewhere = Elsewhere(compute)
            return elsewhere.forked, await elsewhere.result()
        forked, result = asyncio.run(main())
        print(json.dumps({"forked": forked, "here": result["computed_by"] == parent}))
        """,
        tmp_path,
    )
    assert answer == {"forked": True, "here": True}


def test_a_result_that_cannot_travel_is_computed_here(tmp_path: Path) -> None:
    answer = run_script(
        """
        parent = os.getpid()
        def compute():
            return (lambda: None) if os.getpid() != parent else "here"  # a lambda does not pickle
        async def main():
            elsewhere = Elsewhere(compute)
            return elsewhere.forked, await elsewhere.result()
        print(json.dumps(dict(zip(("forked", "result"), asyncio.run(main())))))
        """,
        tmp_path,
    )
    assert answer == {"forked": True, "result": "here"}


def test_a_result_computed_in_the_child_is_not_computed_again_here(tmp_path: Path) -> None:
    answer = run_script(
        """
        parent = os.getpid()
        async def main():
            elsewhere = Elsewhere(os.getpid)
            return elsewhere.forked, await elsewhere.result()
        forked, pid = asyncio.run(main())
        print(json.dumps({"forked": forked, "elsewhere": pid != parent}))
        """,
        tmp_path,
    )
    assert answer == {"forked": True, "elsewhere": True}


def test_what_a_child_sends_is_its_result_as_to_send_makes_it_and_a_result_computed_here_is_left_as_is(
    tmp_path: Path,
) -> None:
    answer = run_script(
        """
        async def main(thread):
            stop = threading.Event()
            worker = threading.Thread(target=stop.wait)
            if thread:
                worker.start()  # no fork while another thread runs: computed here
            elsewhere = Elsewhere(lambda: ["computed"], to_send=lambda value: [*value, "made to send"])
            value = await elsewhere.result()
            elsewhere.cancel()
            stop.set()
            if thread:
                worker.join()
            return elsewhere.forked, value
        print(json.dumps({"child": asyncio.run(main(False)), "here": asyncio.run(main(True))}))
        """,
        tmp_path,
    )
    assert answer == {"child": [True, ["computed", "made to send"]], "here": [False, ["computed"]]}


def test_with_another_thread_running_nothing_is_forked(tmp_path: Path) -> None:
    answer = run_script(
        """
        stop = threading.Event()
        worker = threading.Thread(target=stop.wait)
        worker.start()
        async def main():
            elsewhere = Elsewhere(os.getpid)
            return elsewhere.forked, await elsewhere.result()
        forked, pid = asyncio.run(main())
        stop.set()
        worker.join()
        print(json.dumps({"forked": forked, "here": pid == os.getpid()}))
        """,
        tmp_path,
    )
    assert answer == {"forked": False, "here": True}


def test_with_children_reaped_by_the_system_nothing_is_forked(tmp_path: Path) -> None:
    """With SIGCHLD ignored the kernel reaps a child at once: its exit status, which says whether
    its result is whole, could never be read."""
    answer = run_script(
        """
        import signal
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        async def main():
            elsewhere = Elsewhere(os.getpid)
            return elsewhere.forked, await elsewhere.result()
        forked, pid = asyncio.run(main())
        print(json.dumps({"forked": forked, "here": pid == os.getpid()}))
        """,
        tmp_path,
    )
    assert answer == {"forked": False, "here": True}


def test_a_cancelled_computation_leaves_no_child_behind(tmp_path: Path) -> None:
    answer = run_script(
        """
        import time
        elsewhere = Elsewhere(lambda: time.sleep(60))
        forked = elsewhere.forked
        elsewhere.cancel()
        try:
            os.waitpid(-1, os.WNOHANG)
            children = True
        except ChildProcessError:  # no child at all, running or exited
            children = False
        print(json.dumps({"forked": forked, "children": children}))
        """,
        tmp_path,
    )
    assert answer == {"forked": True, "children": False}


def test_what_the_fork_froze_goes_back_to_the_garbage_collector_once_cancelled(tmp_path: Path) -> None:
    """Frozen at the fork (spared the full collections of a plan), thawed by `cancel`: a
    process that keeps going after the computation can still collect its old garbage."""
    answer = run_script(
        """
        import gc
        async def main():
            elsewhere = Elsewhere(os.getpid)
            frozen = gc.get_freeze_count()
            await elsewhere.result()
            elsewhere.cancel()
            return elsewhere.forked, frozen, gc.get_freeze_count()
        forked, during, after = asyncio.run(main())
        print(json.dumps({"forked": forked, "frozen while it ran": during > 0, "frozen after": after}))
        """,
        tmp_path,
    )
    assert answer == {"forked": True, "frozen while it ran": True, "frozen after": 0}


def test_a_wait_for_the_result_cut_short_leaves_no_child_behind(tmp_path: Path) -> None:
    answer = run_script(
        """
        import time
        async def main():
            elsewhere = Elsewhere(lambda: time.sleep(60))
            waiting = asyncio.ensure_future(elsewhere.result())
            await asyncio.sleep(0.2)
            waiting.cancel()
            try:
                await waiting
            except asyncio.CancelledError:
                pass
            return elsewhere.forked
        started = time.monotonic()
        forked = asyncio.run(main())
        try:
            os.waitpid(-1, os.WNOHANG)
            children = True
        except ChildProcessError:
            children = False
        print(json.dumps({"forked": forked, "children": children, "quick": time.monotonic() - started < 30}))
        """,
        tmp_path,
    )
    assert answer == {"forked": True, "children": False, "quick": True}
