"""Drift: the betting e-process (known values, validity on seeded null streams) and attribution."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judges.calibration import CalibrationInputError
from judges.calibration.drift import betting_e_process, drift_test


def test_the_e_process_bets_with_agrapa_and_rejects_at_one_over_level() -> None:
    # First bet: mean 1/2 against m = 0.2, variance 1/4: lambda = 0.3 / (0.25 + 0.09), capped
    # at 0.5 / 0.2; wealth after one 1: 1 + lambda * 0.8.
    e = betting_e_process([1.0], null=0.2, level=0.05, keep_path=True)
    lam = min(0.3 / (0.25 + 0.09), 0.5 / 0.2)
    assert e.path[0] == pytest.approx(1 + lam * 0.8)
    assert betting_e_process([1] * 20, null=0.2, level=0.05).crossed_at == 5
    zeros = betting_e_process([0] * 200, null=0.2, level=0.05)
    assert not zeros.rejected and zeros.e_max == 1.0  # never bets on a mean below the null
    low = betting_e_process([0] * 30, null=0.6, alternative="less", level=0.05)
    assert low.rejected and low.alternative == "less"
    with pytest.raises(CalibrationInputError, match=r"\[0, 1\]"):
        betting_e_process([2.0], null=0.5, level=0.05)


def test_under_the_null_it_rarely_rejects_at_any_time() -> None:
    rng = np.random.default_rng(11)
    rejected = sum(betting_e_process(rng.uniform(size=400) < 0.3, null=0.3, level=0.1).rejected
                   for _ in range(300))
    # Ville: P(sup K >= 10) <= 0.1; 300 streams, 3 SE above 0.1 would be 0.152.
    assert rejected / 300 <= 0.15


def _anchor(n: int, up: int, down: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` anchor rows: ``up`` moved fail -> pass, ``down`` pass -> fail, the rest kept."""
    before = np.r_[np.zeros(up), np.ones(down), np.arange(n - up - down) % 2].astype(int)
    after = np.r_[np.ones(up), np.zeros(down), np.arange(n - up - down) % 2].astype(int)
    order = np.random.default_rng(0).permutation(n)
    return before[order], after[order]


def test_drift_is_attributed_to_the_judge_the_system_or_neither() -> None:
    ref = (700, 1000)
    rng = np.random.default_rng(3)
    same = rng.uniform(size=3000) < 0.7
    holds = drift_test(anchor_recorded=_anchor(200, 4, 4)[0],
                       anchor_rescored=_anchor(200, 4, 4)[1], tolerance=0.1, new_pass=same,
                       reference=ref)
    assert holds.which == "none" and holds.sentence.startswith("No drift")
    assert holds.judge_shift["estimate"] == 0.0
    # A lenient new model: 30 rows fail -> pass, 2 back; fewer than the tolerance allows in
    # number, but all in one direction.
    before, after = _anchor(200, 30, 2)
    lenient = drift_test(anchor_recorded=before, anchor_rescored=after, tolerance=0.2,
                         new_pass=same, reference=ref)
    assert lenient.which == "judge" and "30 rows moved fail -> pass" in lenient.sentence
    # A regression: the anchors hold, the new rows pass 55 % of the time.
    worse = rng.uniform(size=3000) < 0.55
    system = drift_test(anchor_recorded=_anchor(200, 3, 3)[0],
                        anchor_rescored=_anchor(200, 3, 3)[1], tolerance=0.1, new_pass=worse,
                        reference=ref)
    assert system.which == "system" and system.sentence.startswith("The system drifted")
    assert system.judge_shift["bound"] < 0.15
    nobody = drift_test(new_pass=worse, reference=ref)
    assert nobody.which == "undetermined" and "--anchor" in nobody.sentence
    # Ten anchor rows cannot rule out a judge change of 15 points.
    few = drift_test(anchor_recorded=_anchor(10, 0, 0)[0], anchor_rescored=_anchor(10, 0, 0)[1],
                     tolerance=0.1, new_pass=worse, reference=ref)
    assert few.which == "undetermined" and "cannot rule out" in few.sentence
    # A lenient judge too mild for the anchor tests to reject (12 rows fail -> pass, 2 back):
    # its +5 points on the anchors explain new rows moved +9 points within the noise of both.
    # The old rule compared the move alone with the anchors' bound (8.6 points) and called it
    # the system's; the same anchors with new rows down 15 points are the system's.
    before, after = _anchor(200, 12, 2)
    up = rng.uniform(size=3000) < 0.79
    mild = drift_test(anchor_recorded=before, anchor_rescored=after, tolerance=0.1,
                      new_pass=up, reference=ref)
    assert not any(t.rejected for t in mild.tests if t.name.startswith("anchor"))
    assert mild.judge_shift["estimate"] == pytest.approx(0.05)
    assert up.mean() - 0.7 > mild.judge_shift["bound"]
    assert mild.which == "undetermined" and "cannot rule out" in mild.sentence
    down = drift_test(anchor_recorded=before, anchor_rescored=after, tolerance=0.1,
                      new_pass=worse, reference=ref)
    assert down.which == "system"
    # Alpha is split over the families: two of them here, the anchor's over its three tests,
    # the new rows' over the reference's interval and the two directions.
    assert [t.level for t in holds.tests] == pytest.approx(
        [0.0125, 0.00625, 0.00625, 0.025 / 3, 0.025 / 3])
    assert math.isclose(sum(t.level for t in holds.tests) + 0.025 / 3, 0.05)


def test_the_card_error_rates_are_tested_on_new_expert_labels() -> None:
    ok = drift_test(human_pass_judged_pass=np.arange(200) % 10 != 0,
                    human_fail_judged_fail=np.arange(100) % 5 != 0,
                    sensitivity=(0.9, 0.02), specificity=(0.8, 0.04))
    assert ok.which == "none"
    bad = drift_test(anchor_recorded=[1] * 100, anchor_rescored=[1] * 100,
                     human_pass_judged_pass=np.arange(300) % 2 == 0,
                     human_fail_judged_fail=np.arange(100) % 5 != 0,
                     sensitivity=(0.9, 0.02), specificity=(0.8, 0.04))
    assert bad.which == "system" and "sensitivity" in bad.sentence
    with pytest.raises(CalibrationInputError, match="nothing to test"):
        drift_test()
