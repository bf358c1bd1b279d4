"""Paired corrected difference between two versions judged by one calibrated judge."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, norm
from statsmodels.stats.contingency_tables import mcnemar

from judges.calibration import (
    CalibrationCounts,
    CalibrationInputError,
    ConfusionMatrix,
    JudgeErrorRates,
    align_pairs,
    estimate_pass_rate,
    mcnemar_test,
    paired_difference,
    paired_table,
    simulate_paired,
)

Z = norm.ppf(0.975)
CM = ConfusionMatrix(tp=85, fn=15, fp=25, tn=75)  # sensitivity 0.85, specificity 0.75
# 100 rows: 55 pass in both, 5 lost (baseline only), 20 gained (candidate only), 20 fail in both
BASE = ["pass"] * 60 + ["fail"] * 40
CAND = ["pass"] * 55 + ["fail"] * 5 + ["pass"] * 20 + ["fail"] * 20


def test_hand_worked_difference_and_fieller_bounds() -> None:
    r = paired_difference(BASE, CAND, calibration=CM)
    t = r.table
    assert (t.both_pass, t.baseline_only, t.candidate_only, t.both_fail) == (55, 5, 20, 20)
    assert paired_table(BASE, CAND) == t and t.n_discordant == 25
    # Point: d = (20 - 5)/100 = 0.15, J = 0.85 + 0.75 - 1 = 0.6 -> 0.25.
    assert r.difference.estimate == pytest.approx(0.25)
    assert r.difference.observed == pytest.approx(0.15)
    # Interval by hand: Agresti-Min 0.5 per cell -> gain 20.5/102, loss 5.5/102;
    # d~ = 15/102; Var d = (26/102 - (15/102)^2) / 102.
    d = 15 / 102
    var_d = (26 / 102 - d * d) / 102
    # Lee +1/+2: q1~ = 86/102, q0~ = 76/102, J~ = 60/102, Var J = sum q(1-q)/102.
    q1, q0 = 86 / 102, 76 / 102
    j = q1 + q0 - 1
    var_j = q1 * (1 - q1) / 102 + q0 * (1 - q0) / 102
    # Fieller: (J^2 - z^2 Var J) D^2 - 2 d J D + (d^2 - z^2 Var d) <= 0.
    a, b, c = j * j - Z * Z * var_j, -2 * d * j, d * d - Z * Z * var_d
    root = math.sqrt(b * b - 4 * a * c)
    assert r.difference.low == pytest.approx((-b - root) / (2 * a), rel=1e-12)
    assert r.difference.high == pytest.approx((-b + root) / (2 * a), rel=1e-12)
    assert r.difference.low == pytest.approx(0.0898, abs=1e-4)
    assert r.difference.high == pytest.approx(0.4284, abs=1e-4)
    # The Fieller interval is asymmetric around the ratio (the denominator is uncertain).
    assert r.difference.high - d / j > d / j - r.difference.low
    # McNemar: exact two-sided binomial on the 25 discordant rows.
    assert r.mcnemar_p == pytest.approx(binomtest(5, 25, 0.5).pvalue, rel=1e-9)
    assert r.mcnemar_p == pytest.approx(0.004077, abs=1e-6)
    assert r.mcnemar_method == "exact" and r.n_paired == 100
    # The two rates are Lee et al.'s on the paired rows (60 and 75 judge passes of 100).
    for rate, k in ((r.baseline, 60), (r.candidate, 75)):
        ref = estimate_pass_rate(CalibrationCounts(CM, k, 100), method="lee")
        assert (rate.estimate, rate.low, rate.high) == (ref.estimate, ref.low, ref.high)
    assert r.baseline.estimate == pytest.approx((0.6 + 0.75 - 1) / 0.6)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, -2]), st.sampled_from([0, 1, -1])),
                min_size=1, max_size=150))
def test_mcnemar_p_is_statsmodels_exact_and_table_counts_exclusions(
    rows: list[tuple[int, int]],
) -> None:
    b, c = (np.array(x) for x in zip(*rows, strict=True))
    r = paired_difference(b, c, calibration=CM)
    ok = (b >= 0) & (c >= 0)
    assert r.table.n == int(ok.sum()) and r.table.n_excluded == len(rows) - r.table.n
    if not ok.any():
        assert r.mcnemar_p is None and r.difference.refused
        return
    bb, cc = b[ok], c[ok]
    table = [[int(((bb == 1) & (cc == 1)).sum()), int(((bb == 1) & (cc == 0)).sum())],
             [int(((bb == 0) & (cc == 1)).sum()), int(((bb == 0) & (cc == 0)).sum())]]
    assert r.table.as_array().tolist() == table
    assert r.mcnemar_p == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12)
    d = r.difference
    assert d.low is not None and d.high is not None and -1 <= d.low <= d.high <= 1
    # Interval and test agree: 0 is inside whenever the exact test does not reject.
    if r.mcnemar_p >= 0.05:
        assert d.low <= 0 <= d.high


def test_perfect_judge_reduces_to_the_agresti_min_paired_interval() -> None:
    rng = np.random.default_rng(3)
    b = (rng.random(300) < 0.6).astype(int)
    c = np.where(rng.random(300) < 0.7, b, (rng.random(300) < 0.75).astype(int))
    perfect = JudgeErrorRates(sensitivity=1.0, specificity=1.0, var_sensitivity=0.0,
                              var_specificity=0.0)
    r = paired_difference(b, c, calibration=perfect)
    # mcnemar_test's accuracy difference with an all-pass "human" is p_c - p_b (Agresti-Min).
    ref = mcnemar_test(np.ones(300, dtype=int), c, b).difference
    assert r.difference.estimate == pytest.approx(ref.estimate)
    assert r.difference.low == pytest.approx(ref.low, rel=1e-12)
    assert r.difference.high == pytest.approx(ref.high, rel=1e-12)
    assert r.baseline.method == "rogan-gladen" and r.baseline.estimate == pytest.approx(b.mean())


def test_calibration_uncertainty_grows_with_the_size_of_the_change() -> None:
    small = ConfusionMatrix(tp=17, fn=3, fp=5, tn=15)  # same rates, 5x fewer labels
    big = ConfusionMatrix(tp=1700, fn=300, fp=500, tn=1500)
    null_b = ["pass"] * 50 + ["fail"] * 50
    null_c = ["pass"] * 40 + ["fail"] * 10 + ["pass"] * 10 + ["fail"] * 40
    changed = paired_difference(BASE, CAND, calibration=small).difference
    changed_big = paired_difference(BASE, CAND, calibration=big).difference
    null = paired_difference(null_b, null_c, calibration=small).difference
    null_big = paired_difference(null_b, null_c, calibration=big).difference
    assert changed.estimate == pytest.approx(0.25) and null.estimate == pytest.approx(0.0)
    widen_changed = (changed.high - changed.low) / (changed_big.high - changed_big.low)
    widen_null = (null.high - null.low) / (null_big.high - null_big.low)
    # 40 instead of 4,000 calibration labels: a 0.25 change's interval widens by 57 %
    # (Var J enters multiplied by the squared change); no change widens by 23 %, only through
    # the scale 1/J (J~ = 12/22 instead of 0.6, and J^2 - z^2 Var J in Fieller's denominator).
    assert widen_changed == pytest.approx(1.5675, abs=1e-3)
    assert widen_null == pytest.approx(1.2304, abs=1e-3)


def test_given_error_rates_with_covariance() -> None:
    rates = JudgeErrorRates(sensitivity=0.9, specificity=0.8, var_sensitivity=0.001,
                            var_specificity=0.002, covariance=-0.0005, n_labelled=300,
                            method="stratified")
    assert rates.youden == pytest.approx(0.7)
    assert rates.var_youden == pytest.approx(0.002)
    r = paired_difference(BASE, CAND, calibration=rates)
    assert r.difference.estimate == pytest.approx(0.15 / 0.7)
    # Rogan-Gladen with the delta method: theta = (p + q0 - 1)/J and the covariance term.
    theta = (0.6 + 0.8 - 1) / 0.7
    var = (0.6 * 0.4 / 100 + (1 - theta) ** 2 * 0.002 + theta**2 * 0.001
           - 2 * theta * (1 - theta) * -0.0005) / 0.49
    assert r.baseline.estimate == pytest.approx(theta)
    assert r.baseline.low == pytest.approx(theta - Z * math.sqrt(var))


def test_refusals_and_uninformative() -> None:
    chance = ConfusionMatrix(tp=5, fn=5, fp=5, tn=5)
    r = paired_difference(BASE, CAND, calibration=chance)
    assert r.difference.refused and "no better than chance" in (r.difference.reason or "")
    with pytest.raises(CalibrationInputError, match="label at least one failing"):
        paired_difference(BASE, CAND, calibration=ConfusionMatrix(tp=5, fn=1, fp=0, tn=0))
    weak = ConfusionMatrix(tp=4, fn=2, fp=2, tn=3)  # J = 0.27 on 11 rows: not significant
    w = paired_difference(BASE, CAND, calibration=weak).difference
    assert w.uninformative and not w.claims and (w.low, w.high) == (-1.0, 1.0)
    none = paired_difference(["unscored"] * 3, ["pass"] * 3, calibration=CM)
    assert none.difference.refused and none.mcnemar_p is None and none.table.n_excluded == 3
    with pytest.raises(CalibrationInputError, match="aligned"):
        paired_difference(["pass"], ["pass", "fail"], calibration=CM)


def test_align_pairs_counts_rows_on_one_side() -> None:
    a = align_pairs(["q1", "q2", "q3", "q4"], ["q4", "q9", "q1"])
    assert a.baseline_index.tolist() == [0, 3] and a.candidate_index.tolist() == [2, 0]
    assert (a.n_paired, a.n_baseline_only, a.n_candidate_only) == (2, 2, 1)
    with pytest.raises(CalibrationInputError, match="unique"):
        align_pairs(["q1", "q1"], ["q1"])


def test_documents_singletons_and_copies() -> None:
    rng = np.random.default_rng(11)
    b = (rng.random(200) < 0.6).astype(int)
    c = np.where(rng.random(200) < 0.5, b, (rng.random(200) < 0.7).astype(int))
    flat = paired_difference(b, c, calibration=CM)
    single = paired_difference(b, c, calibration=CM, documents=np.arange(200))
    assert single.design_effect == 1.0 and single.n_documents == 200
    assert single.difference.low == pytest.approx(flat.difference.low)
    t = single.table.as_array().tolist()
    # Durkalski's statistic with one row per document is McNemar's chi-square (no correction).
    assert single.mcnemar_p == pytest.approx(mcnemar(t, exact=False, correction=False).pvalue)
    assert single.mcnemar_method == "durkalski-clustered"
    assert single.mcnemar_p_exact == pytest.approx(flat.mcnemar_p)
    # Four identical copies of each row in one document carry the information of one row.
    copies = paired_difference(np.repeat(b, 4), np.repeat(c, 4), calibration=CM,
                               documents=np.repeat(np.arange(200), 4))
    assert copies.design_effect == pytest.approx(4 * (200 / 199) * (799 / 800))
    assert copies.difference.low == pytest.approx(flat.difference.low, rel=0.03)
    assert copies.difference.high == pytest.approx(flat.difference.high, rel=0.03)
    assert copies.mcnemar_p == pytest.approx(single.mcnemar_p)
    assert copies.mcnemar_p_exact < single.mcnemar_p  # the unclustered test overstates


def test_segments_partition_the_rows() -> None:
    seg = ["en"] * 30 + ["de"] * 70
    r = paired_difference(BASE, CAND, calibration=CM, segments=seg)
    assert [s.segment for s in r.segments] == ["de", "en"]
    assert sum(s.table.n for s in r.segments) == r.table.n == 100
    total = sum((s.table.as_array() for s in r.segments), np.zeros((2, 2), dtype=int))
    assert total.tolist() == r.table.as_array().tolist()
    de = r.segments[0]
    assert de.table.candidate_only == 20 and de.table.baseline_only == 5  # rows 30-99
    assert de.difference.estimate == pytest.approx((15 / 70) / 0.6)
    en = r.segments[1]
    assert en.table.as_array().tolist() == [[30, 0], [0, 0]] and en.difference.estimate == 0


def test_simulate_paired_hits_its_marginal_rates() -> None:
    rng = np.random.default_rng(0)
    b, c, docs = simulate_paired(rng, n_rows=200_000, theta_baseline=0.6, theta_candidate=0.7,
                                 sensitivity=1.0, specificity=1.0, unchanged=0.5,
                                 n_documents=500)
    assert b.mean() == pytest.approx(0.6, abs=0.02) and c.mean() == pytest.approx(0.7, abs=0.02)
    assert docs is not None and docs.max() < 500
    with pytest.raises(CalibrationInputError, match="cannot be reached"):
        simulate_paired(rng, n_rows=10, theta_baseline=0.2, theta_candidate=0.9,
                        sensitivity=0.9, specificity=0.9, unchanged=0.8)


def _cell(theta_b: float, theta_c: float, reps: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    covered = claims = rejected = 0
    for _ in range(reps):
        t = 0.85  # calibration rows from another run (label shift)
        probs = [t * 0.85, t * 0.15, (1 - t) * 0.25, (1 - t) * 0.75]
        tp, fn, fp, tn = rng.multinomial(150, probs)
        cm = ConfusionMatrix(tp=int(tp), fn=int(fn), fp=int(fp), tn=int(tn))
        b, c, _ = simulate_paired(rng, n_rows=400, theta_baseline=theta_b,
                                  theta_candidate=theta_c, sensitivity=0.85, specificity=0.75)
        d = paired_difference(b, c, calibration=cm).difference
        if d.claims:
            claims += 1
            covered += d.covers(theta_c - theta_b)
            rejected += not d.covers(0.0)
    return covered / claims, rejected / reps


def test_seeded_coverage_and_null_rejection() -> None:
    coverage, _ = _cell(0.6, 0.7, reps=300, seed=1)
    assert coverage >= 0.92  # nominal 0.95; Monte Carlo SE 0.013 at 300 replicates
    null_coverage, rejected = _cell(0.6, 0.6, reps=300, seed=2)
    assert null_coverage >= 0.92 and rejected <= 0.075


@pytest.mark.slow
def test_coverage_bars_of_the_bench_block() -> None:
    # 4,000 replicates: Monte Carlo SE 0.0034, so 0.94 is 3 SE below the nominal 0.95.
    coverage, _ = _cell(0.8, 0.72, reps=4000, seed=3)
    null_coverage, rejected = _cell(0.3, 0.3, reps=4000, seed=4)
    assert coverage >= 0.94 and null_coverage >= 0.94 and rejected <= 0.05
