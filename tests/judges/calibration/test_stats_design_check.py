"""Design decisions from provenance and the verdict check; contradicting overrides are refused."""

from __future__ import annotations

import pytest

from judges.calibration import (
    CalibrationInputError,
    resolve_design,
    selection_check,
)

POP = ["fail"] * 200 + ["pass"] * 800


def test_verdict_check_flags_a_by_verdict_sample() -> None:
    c = selection_check(["fail"] * 50 + ["pass"] * 50, POP)
    assert not c.consistent_with_random and c.p_value is not None and c.p_value < 1e-6
    assert c.message == (
        "not a random sample: the labelled rows are 50% judge fail while the dataset is 20% -- "
        "treated as drawn by verdict"
    )
    ok = selection_check(["fail"] * 19 + ["pass"] * 81, POP)
    assert ok.consistent_with_random and ok.message.startswith("consistent with a random sample")


def test_automatic_choice_follows_the_evidence() -> None:
    other_run = resolve_design(None, labelled_in_target=False, selections={"random": 50})
    assert (other_run.design, other_run.estimator) == ("separate_calibration", "lee_stratified")
    active = resolve_design(
        None, labelled_in_target=True, selections={"active": 50}, has_probabilities=True
    )
    assert active.estimator == "active_ipw"
    unknown = resolve_design(
        None,
        labelled_in_target=True,
        selections={"unknown": 100},
        check=selection_check(["fail"] * 50 + ["pass"] * 50, POP),
    )
    assert unknown.design == "same_run_stratified"
    assert any("not a random sample" in w for w in unknown.warnings)
    random = resolve_design(None, labelled_in_target=True, selections={"random": 100})
    assert random.design == "same_run_random" and random.estimator == "verdict_stratified"


@pytest.mark.parametrize(
    ("requested", "kwargs", "why"),
    [
        ("same_run_random", {"labelled_in_target": False, "selections": {"random": 9}},
         "not rows of the target run"),
        ("same_run_stratified", {"labelled_in_target": False, "selections": {"random": 9}},
         "not rows of the target run"),
        ("same_run_random", {"labelled_in_target": True, "selections": {"by_verdict": 9}},
         "recorded provenance says labels were chosen by_verdict"),
        ("same_run_random", {"labelled_in_target": True, "selections": {"unknown": 100},
                             "check": selection_check(["fail"] * 50 + ["pass"] * 50, POP)},
         "not a random sample"),
        ("active", {"labelled_in_target": True, "selections": {"random": 9}},
         "no recorded inclusion probabilities"),
        ("same_run_stratified", {"labelled_in_target": True, "selections": {"active": 9},
                                 "has_probabilities": True}, "active queue"),
    ],
)  # fmt: skip
def test_contradicting_overrides_are_refused_with_the_reason(
    requested: str, kwargs: dict, why: str
) -> None:
    d = resolve_design(requested, **kwargs)
    assert d.refused and d.design is None and why in d.reason


def test_separate_calibration_is_always_allowed_and_bad_names_raise() -> None:
    d = resolve_design("separate_calibration", labelled_in_target=True, selections={"random": 5})
    assert not d.refused and d.estimator == "lee_stratified"
    with pytest.raises(CalibrationInputError):
        resolve_design("bogus", labelled_in_target=True, selections={})
    with pytest.raises(CalibrationInputError):
        resolve_design(None, labelled_in_target=True, selections={"guess": 3})
