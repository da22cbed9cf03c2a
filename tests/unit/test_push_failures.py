"""What a failed `git push` calls for, told from what git printed (exact output of git and GitHub)."""

from __future__ import annotations

import pytest

from reconciler.vcs.commit import push_failure

OTHER = "1111111111111111111111111111111111111111"
OURS = "2222222222222222222222222222222222222222"


@pytest.mark.parametrize(
    "said",
    [
        f"remote: error: cannot lock ref 'refs/heads/main': is at {OTHER} but expected {OURS}\n"
        "To /tmp/remote.git\n ! [remote rejected] main -> main (failed to update ref)\n"
        "error: failed to push some refs to '/tmp/remote.git'",
        f" ! [remote rejected] main -> main (cannot lock ref 'refs/heads/main': is at {OTHER} but expected {OURS})",
        " ! [remote rejected] main -> main (failed to update ref)",
        " ! [remote rejected] main -> main (incorrect old value provided)",
        " ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to '/tmp/remote.git'",
        " ! [rejected]        main -> main (non-fast-forward)\nerror: failed to push some refs to '/tmp/remote.git'",
    ],
)
def test_another_push_moving_the_branch_is_a_race_to_rebase_and_retry(said: str) -> None:
    assert push_failure(said) == "raced"


@pytest.mark.parametrize(
    "said",
    [
        "remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
        "remote: error: Changes must be made through a pull request.\nTo github.com:acme/evals.git\n"
        " ! [remote rejected] main -> main (protected branch hook declined)",
        "remote: error: GH013: Repository rule violations found for refs/heads/main.\n"
        " ! [remote rejected] main -> main (push declined due to repository rule violations)",
        " ! [remote rejected] main -> main (pre-receive hook declined)",
        " ! [remote rejected] main -> main (hook declined)",
    ],
)
def test_a_hook_or_branch_protection_refusal_is_final(said: str) -> None:
    assert push_failure(said) == "refused"


def test_a_remote_rejection_for_another_reason_is_final_but_not_called_a_hook() -> None:
    assert push_failure(" ! [remote rejected] main -> main (shallow update not allowed)") == "rejected"


@pytest.mark.parametrize(
    "said",
    [
        "fatal: the remote end hung up unexpectedly",
        "ssh: connect to host github.com port 22: Connection timed out\nfatal: Could not read from remote repository.",
    ],
)
def test_a_push_that_failed_on_the_way_is_to_be_tried_again(said: str) -> None:
    assert push_failure(said) == "failed"
