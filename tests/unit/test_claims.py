"""May a run be acted on as the plan believed? One rule (`claim_problem`), judged on the marker
the platform gave: whatever the state file or this machine's cache claimed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reconciler.core.identity import Marker, claim_problem

OWNER = "acme/evals"
MARKERS = st.builds(
    Marker,
    owner=st.sampled_from([OWNER, "acme/other", "ACME/evals", ""]),
    spec_id=st.sampled_from(["tb-smoke", "runs/a", "tb-smoke "]),
    fingerprint=st.sampled_from(["0123456789abcdef", "fedcba9876543210"]),
)


@given(st.none() | MARKERS, st.none() | MARKERS)
def test_a_run_may_be_acted_on_only_when_the_platform_marks_it_ours_as_the_plan_believed(
    actual: Marker | None, believed: Marker | None
) -> None:
    allowed = claim_problem(actual, believed, OWNER) is None
    assert allowed == (actual is not None and actual.owner == OWNER and believed in (None, actual))


@given(MARKERS)
def test_a_run_without_a_marker_or_with_anothers_is_never_ours_whatever_was_believed(believed: Marker) -> None:
    assert claim_problem(None, believed, OWNER) == "is not owned by this repository"
    stranger = believed.model_copy(update={"owner": "acme/other"})
    assert claim_problem(stranger, believed, OWNER) == "is not owned by this repository"


@given(MARKERS)
def test_our_run_believed_to_run_another_config_is_named_so(actual: Marker) -> None:
    ours = actual.model_copy(update={"owner": OWNER})
    believed = ours.model_copy(update={"fingerprint": "ffffffffffffffff"})
    assert claim_problem(ours, believed, OWNER) == "runs another config than the plan saw"
