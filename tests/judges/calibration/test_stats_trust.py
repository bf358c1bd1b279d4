"""The plain-language verdict and the certification rule (judges.calibration.trust)."""

from __future__ import annotations

import pytest

from judges.calibration.planning import labels_for_proportion
from judges.calibration.rates import wilson_interval
from judges.calibration.trust import SMALL_SAMPLE, CertificationRule, trust_verdict


def test_headline_reports_the_complements_with_flipped_intervals_and_kappas() -> None:
    sens, spec = wilson_interval(27, 63), wilson_interval(29, 32)
    kappa = wilson_interval(28, 100)  # any Estimate: only its point is quoted
    human = wilson_interval(73, 100)
    v = trust_verdict(sens, spec, kappa=kappa, human_kappa=human)
    fpr_low, fpr_high = 1 - spec.high, 1 - spec.low  # type: ignore[operator]
    assert v.headline == (
        f"Passes 9 % [{100 * fpr_low:.0f}–{100 * fpr_high:.0f} %] of failing answers and misses "
        "57 % [45–69 %] of passing ones; agreement 0.28 vs the experts' 0.73."
    )
    assert "None" not in v.headline


def test_certified_only_when_both_lower_bounds_clear_the_bar() -> None:
    assert trust_verdict(wilson_interval(290, 300), wilson_interval(285, 300)).status == "certified"
    # Specificity's upper bound below 0.80: decided, not certified, whatever sensitivity does.
    v = trust_verdict(wilson_interval(290, 300), wilson_interval(30, 60))
    assert v.status == "not certified"
    assert "specificity is at most" in v.certification
    assert v.more_failing is None and v.more_passing is None


def test_undecided_asks_for_the_planned_number_of_failing_rows() -> None:
    spec = wilson_interval(50, 58)  # 0.862 [0.75, 0.93]: straddles 0.80
    v = trust_verdict(wilson_interval(55, 60), spec)
    assert v.status == "undecided"
    expected = labels_for_proportion(50 / 58 - 0.8, p=50 / 58) - 58
    assert v.more_failing == expected
    assert v.more_passing is None
    assert f"label about {expected:,} more failing rows to decide" in v.certification


def test_a_stricter_rule_changes_the_decision() -> None:
    sens, spec = wilson_interval(290, 300), wilson_interval(285, 300)
    strict = CertificationRule(min_sensitivity=0.95, min_specificity=0.95)
    assert trust_verdict(sens, spec, rule=strict).status != "certified"
    assert "0.95" in trust_verdict(sens, spec, rule=strict).certification


@pytest.mark.parametrize("n_fail", [0, 11])
def test_small_or_missing_classes_are_flagged(n_fail: int) -> None:
    v = trust_verdict(wilson_interval(60, 63), wilson_interval(n_fail, n_fail))
    assert v.small_sample
    assert v.small_sample_note is not None
    assert f"only {n_fail} failing rows" in v.small_sample_note
    assert str(SMALL_SAMPLE) in v.small_sample_note
    if n_fail == 0:
        assert v.status == "undecided"
        assert "no human-fail rows are labelled" in v.certification
        assert "unknown share" in v.headline
