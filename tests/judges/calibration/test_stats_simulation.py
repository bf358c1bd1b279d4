"""Seeded coverage simulations: a tiny one by default, the full grid under ``-m slow``."""

from __future__ import annotations

import numpy as np
import pytest

from judges.calibration import (
    CalibrationCounts,
    ConfusionMatrix,
    counts_to_arrays,
    coverage_study,
    estimate_pass_rate,
    lee_pass_rate,
    simulate_counts,
    simulate_verdicts,
    stratified_pass_rate,
)


def test_simulate_counts_is_seeded_and_consistent() -> None:
    a = simulate_counts(np.random.default_rng(4), theta=0.3, sensitivity=0.85, specificity=0.75,
                        n_target=1000, n_labelled=200)
    b = simulate_counts(np.random.default_rng(4), theta=0.3, sensitivity=0.85, specificity=0.75,
                        n_target=1000, n_labelled=200)
    assert a == b and a.confusion.n == 200 and a.n_target == 1000
    h, j, t = counts_to_arrays(a)
    assert h.sum() == a.confusion.m1 and t.sum() == a.k_target
    assert int((h & j).sum()) == a.confusion.tp
    human, judge = simulate_verdicts(np.random.default_rng(0), n=20_000, theta=0.3,
                                     sensitivity=0.85, specificity=0.75)
    assert human.mean() == pytest.approx(0.3, abs=0.01)
    assert judge[human == 1].mean() == pytest.approx(0.85, abs=0.015)
    assert 1 - judge[human == 0].mean() == pytest.approx(0.75, abs=0.015)


def test_tiny_coverage_simulation() -> None:
    """300 seeded replicates of one cell: Lee covers, the naive rate does not."""
    kwargs = dict(reps=300, theta=0.3, sensitivity=0.85, specificity=0.75, n_target=1000,
                  n_labelled=200)
    lee = coverage_study(lambda c: estimate_pass_rate(c, method="lee"),
                         np.random.default_rng(123), **kwargs)  # type: ignore[arg-type]
    naive = coverage_study(lambda c: estimate_pass_rate(c, method="naive"),
                           np.random.default_rng(123), **kwargs)  # type: ignore[arg-type]
    assert lee.coverage is not None and lee.coverage >= 0.92
    assert naive.coverage is not None and naive.coverage <= 0.05  # p = 0.43, theta = 0.3
    assert 0.15 < lee.mean_width < 0.35
    assert lee.no_claim_rate == 0.0 and lee.n_claims == 300


def test_degenerate_judge_is_refused_or_flagged_not_confident() -> None:
    res = coverage_study(lambda c: estimate_pass_rate(c, method="lee"),
                         np.random.default_rng(7), reps=300, theta=0.6, sensitivity=0.55,
                         specificity=0.50, n_target=1000, n_labelled=200)
    assert res.no_claim_rate >= 0.8
    assert res.wrong_claim_rate <= 0.02


def _stratified_sample(rng: np.random.Generator, theta: float, per_stratum: int,
                       n_target: int) -> CalibrationCounts:
    """Label ``per_stratum`` rows drawn at random within each judge verdict of the same run."""
    human, judge = simulate_verdicts(rng, n=n_target, theta=theta, sensitivity=0.85,
                                     specificity=0.75)
    cells = {}
    for v in (0, 1):
        idx = rng.choice(np.nonzero(judge == v)[0], size=per_stratum, replace=False)
        cells[v] = human[idx]
    cm = ConfusionMatrix(tp=int(cells[1].sum()), fp=int((1 - cells[1]).sum()),
                         fn=int(cells[0].sum()), tn=int((1 - cells[0]).sum()))
    return CalibrationCounts(cm, int(judge.sum()), n_target)


@pytest.mark.slow
@pytest.mark.parametrize("theta", [0.3, 0.9])
def test_stratified_design_coverage(theta: float) -> None:
    # The estimand is the run's own pass rate; with n_target = 5000 its sampling noise around
    # theta is included in the estimator's variance term.
    rng = np.random.default_rng(99)
    hits = claims = 0
    for _ in range(3000):
        c = _stratified_sample(rng, theta, 60, 5000)
        r = estimate_pass_rate(c, method="stratified", confidence=0.95)
        assert r.method == "stratified"
        claims += 1
        hits += int(r.covers(theta))
    assert hits / claims >= 0.94


@pytest.mark.slow
@pytest.mark.parametrize("theta", [0.3, 0.6, 0.9])
@pytest.mark.parametrize("m", [50, 200])
@pytest.mark.parametrize("shift", [None, 0.7])
def test_coverage_grid(theta: float, m: int, shift: float | None) -> None:
    """Nominal-95 % coverage >= 0.94 for the estimator the chooser picks, over the bench grid."""
    method = "lee" if shift is not None else "stratified"
    res = coverage_study(
        lambda c: estimate_pass_rate(c, method=method, confidence=0.95),
        np.random.default_rng(2024), reps=2000, theta=theta, sensitivity=0.85,
        specificity=0.75, n_target=1000, n_labelled=m, calibration_theta=shift,
    )
    assert res.coverage is not None and res.coverage >= 0.94, res


def test_corrected_pass_rate_end_to_end_on_simulated_rows() -> None:
    rng = np.random.default_rng(8)
    human, judge = simulate_verdicts(rng, n=400, theta=0.7, sensitivity=0.9, specificity=0.8)
    _, target = simulate_verdicts(rng, n=20_000, theta=0.4, sensitivity=0.9, specificity=0.8)
    # Label shift (0.7 -> 0.4): Lee stays near the truth, the same-run estimator does not.
    lee = lee_pass_rate(human, judge, target)
    same_run = stratified_pass_rate(human, judge, target)
    assert lee.covers(0.4)
    assert not same_run.covers(0.4)
