"""Corrected pass rates vs a transcription of Lee et al.'s formulas, ppi_py and judgy; guards."""

from __future__ import annotations

import json
import math
import warnings
from types import ModuleType

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from statsmodels.stats.proportion import proportion_confint

import judges.calibration as cal


def _ppi() -> ModuleType:
    # ppi_py runs warnings.simplefilter("ignore") at import: contain it to this block.
    with warnings.catch_warnings():
        import ppi_py
    return ppi_py


# --------------------------------------------------------------- Lee reference transcription


def ref_point_estimator(p: float, q0: float, q1: float) -> float:
    """Lee et al. eq. 4, as in the reference ``point_estimator`` (then clipped)."""
    return min(1.0, max(0.0, (p + q0 - 1) / (q0 + q1 - 1)))


def ref_confidence_interval(
    p: float, q0: float, q1: float, n: int, m0: int, m1: int, alpha: float = 0.05,
    *, clip: bool = True,
) -> tuple[float, float]:
    """Lee et al. eqs. 5-7, transcribed independently from STATS.md."""
    z = norm.ppf(1 - alpha / 2)
    n_t = n + z**2
    p_t = (n * p + z**2 / 2) / (n + z**2)
    m0_t, m1_t = m0 + 2, m1 + 2
    q0_t = (m0 * q0 + 1) / (m0 + 2)
    q1_t = (m1 * q1 + 1) / (m1 + 2)
    th_t = (p_t + q0_t - 1) / (q0_t + q1_t - 1)
    dth = 2 * z**2 * (-(1 - th_t) * q0_t * (1 - q0_t) / m0_t + th_t * q1_t * (1 - q1_t) / m1_t)
    se = math.sqrt(
        p_t * (1 - p_t) / n_t
        + (1 - th_t) ** 2 * q0_t * (1 - q0_t) / m0_t
        + th_t**2 * q1_t * (1 - q1_t) / m1_t
    ) / (q0_t + q1_t - 1)
    lo = th_t + dth - z * se
    hi = th_t + dth + z * se
    if not clip:
        return lo, hi
    return min(1.0, max(0.0, lo)), min(1.0, max(0.0, hi))


lee_counts = st.tuples(
    st.integers(1, 5000),  # n target
    st.floats(0, 1),  # fraction passing
    st.integers(1, 400),  # m0
    st.floats(0, 1),  # specificity-ish
    st.integers(1, 400),  # m1
    st.floats(0, 1),  # sensitivity-ish
)


def _counts(t: tuple[int, float, int, float, int, float]) -> cal.CalibrationCounts:
    n, fk, m0, f0, m1, f1 = t
    tn = round(f0 * m0)
    tp = round(f1 * m1)
    return cal.CalibrationCounts.from_counts(
        tp=tp, fn=m1 - tp, fp=m0 - tn, tn=tn, k_target=round(fk * n), n_target=n
    )


@settings(max_examples=500, deadline=None)
@given(lee_counts, st.sampled_from([0.05, 0.1, 0.01, 0.2]))
def test_lee_matches_reference_transcription(
    t: tuple[int, float, int, float, int, float], alpha: float
) -> None:
    c = _counts(t)
    cm = c.confusion
    q0, q1, p = cm.tn / cm.m0, cm.tp / cm.m1, c.k_target / c.n_target
    r = cal.estimate_pass_rate(c, method="lee", confidence=1 - alpha)
    q0_t = (cm.tn + 1) / (cm.m0 + 2)
    q1_t = (cm.tp + 1) / (cm.m1 + 2)
    if q0 + q1 - 1 <= 0 or q0_t + q1_t - 1 <= 0:
        assert r.refused and r.estimate is None and r.low is None
        assert "chance" in (r.reason or "")
        return
    raw_lo, raw_hi = ref_confidence_interval(p, q0, q1, c.n_target, cm.m0, cm.m1, alpha,
                                             clip=False)
    if raw_hi < 0 or raw_lo > 1:
        # The reference would clip to a zero-width [0, 0] or [1, 1]: we refuse instead.
        assert r.refused and "do not transfer" in (r.reason or "")
        return
    assert not r.refused
    assert r.estimate == pytest.approx(ref_point_estimator(p, q0, q1), abs=1e-9)
    lo, hi = ref_confidence_interval(p, q0, q1, c.n_target, cm.m0, cm.m1, alpha)
    assert r.params["lee_low"] == pytest.approx(lo, abs=1e-9)
    assert r.params["lee_high"] == pytest.approx(hi, abs=1e-9)
    assert 0.0 <= r.low <= r.high <= 1.0  # never inverted, always in [0, 1]
    if r.uninformative:
        assert (r.low, r.high) == (0.0, 1.0)
        assert r.params["youden_low"] <= 0 and any("uninformative" in w for w in r.warnings)
    else:
        assert (r.low, r.high) == pytest.approx((lo, hi), abs=1e-9)
        assert r.params["youden_low"] > 0


def test_lee_known_value_from_readme_example() -> None:
    # Lee et al.'s README example: p=0.4, n=1000, q0=0.7, q1=0.9, m0=m1=200.
    c = cal.CalibrationCounts.from_counts(tp=180, fn=20, fp=60, tn=140, k_target=400,
                                      n_target=1000)
    r = cal.estimate_pass_rate(c, method="lee")
    assert r.estimate == pytest.approx(0.1 / 0.6)
    lo, hi = ref_confidence_interval(0.4, 0.7, 0.9, 1000, 200, 200)
    assert (r.low, r.high) == pytest.approx((lo, hi), abs=1e-12)
    assert r.center == pytest.approx((lo + hi) / 2, abs=1e-12)  # not clipped here
    assert r.center != pytest.approx(r.estimate)  # centred on theta~ + dtheta~, not theta_hat
    assert r.method == "lee" and r.assumption == cal.ASSUMPTIONS["lee"]


def test_lee_arrays_api_and_judgy_point_estimate() -> None:
    judgy = pytest.importorskip("judgy")
    rng = np.random.default_rng(11)
    for _ in range(20):
        m = int(rng.integers(20, 300))
        human = (rng.random(m) < rng.uniform(0.2, 0.8)).astype(int)
        judge = np.where(rng.random(m) < 0.85, human, 1 - human)
        target = (rng.random(int(rng.integers(50, 2000))) < rng.uniform(0.1, 0.9)).astype(int)
        ours = cal.lee_pass_rate(human, judge, target)
        if human.min() == human.max():
            assert ours.refused
            continue
        theta, _, _ = judgy.estimate_success_rate(human, judge, target, bootstrap_iterations=20)
        assert ours.estimate == pytest.approx(theta, abs=1e-9)


# --------------------------------------------------------------------- Lee guards


def _lee(tp: int, fn: int, fp: int, tn: int, k: int = 500, n: int = 1000) -> cal.PassRateEstimate:
    return cal.estimate_pass_rate(
        cal.CalibrationCounts.from_counts(tp=tp, fn=fn, fp=fp, tn=tn, k_target=k, n_target=n),
        method="lee",
    )


@pytest.mark.parametrize(
    ("cells", "needle"),
    [
        ((5, 5, 5, 5), "no better than chance"),  # Youden exactly 0 (reference: ZeroDivision)
        ((3, 7, 6, 4), "no better than chance"),  # negative Youden (reference: inverted CI)
        ((1, 0, 70, 30), "smoothed"),  # Youden 0.3 > 0 but smoothed Youden < 0
        ((10, 5, 0, 0), "m0=0"),  # no failing labels
        ((0, 0, 3, 9), "m1=0"),  # no passing labels
    ],
)
def test_lee_refuses_with_reason(cells: tuple[int, int, int, int], needle: str) -> None:
    r = _lee(*cells)
    assert r.refused and r.estimate is None and r.low is None and r.high is None
    assert needle in (r.reason or "")
    d = r.to_dict()
    assert d["refused"] is True and d["estimate"] is None
    json.dumps(d)


def test_lee_refuses_all_unsure_and_empty_inputs() -> None:
    r = cal.lee_pass_rate(["unsure"] * 10, ["pass"] * 10, ["pass", "fail"])
    assert r.refused and "label at least one failing and one passing row" in (r.reason or "")
    assert any("10 labelled rows excluded" in w for w in r.warnings)
    assert cal.lee_pass_rate([], [], []).refused
    no_target = cal.lee_pass_rate([1, 0, 1, 0], [1, 0, 1, 0], ["unscored"])
    assert no_target.refused and "no scored target" in (no_target.reason or "")


def test_lee_uninformative_judge_is_flagged_not_confident() -> None:
    # Sensitivity 0.55, specificity 0.52 on 100 + 100 rows: Youden 0.07 > 0 but its lower
    # bound is below 0 -> no confident number.
    r = _lee(tp=55, fn=45, fp=48, tn=52, k=900, n=1000)
    assert not r.refused and r.uninformative and not r.claims
    assert (r.low, r.high) == (0.0, 1.0)
    assert r.params["lee_high"] == 1.0  # the raw Lee interval would have claimed ~[0.x, 1]
    assert any("uninformative" in w for w in r.warnings)


def test_lee_clipping_is_reported() -> None:
    # Judge pass rate a little below its false-positive rate (0.3) -> raw estimate < 0.
    r = _lee(tp=90, fn=10, fp=30, tn=70, k=280, n=1000)
    assert r.params["theta_raw"] < 0 and r.estimate == 0.0 and r.clipped
    assert any("clipped" in w for w in r.warnings)
    assert r.low == 0.0 and r.high > 0.05


def test_lee_refuses_when_target_contradicts_error_rates() -> None:
    # Judge pass rate 0.10 far below its FPR 0.30: the reference would clip to [0, 0].
    r = _lee(tp=90, fn=10, fp=30, tn=70, k=100, n=1000)
    assert r.refused and "do not transfer" in (r.reason or "")
    assert ref_confidence_interval(0.1, 0.7, 0.9, 1000, 100, 100) == (0.0, 0.0)


def test_perfect_judge_gives_observed_rate_with_nonzero_width() -> None:
    human = ["pass"] * 60 + ["fail"] * 40
    target = ["pass"] * 700 + ["fail"] * 300
    for method in ("lee", "stratified", "ppi++"):
        r = cal.estimate_pass_rate(cal.calibration_counts(human, human, target), method=method)
        assert r.estimate == pytest.approx(0.7), method
        assert r.high - r.low > 0.01, method
        assert r.low < 0.7 < r.high, method


@settings(max_examples=300, deadline=None)
@given(lee_counts, st.sampled_from(["lee", "ppi++", "stratified", "naive", "labels_only"]))
def test_no_estimator_returns_nan_or_inverted_interval(
    t: tuple[int, float, int, float, int, float], method: str
) -> None:
    r = cal.estimate_pass_rate(_counts(t), method=method)  # type: ignore[arg-type]
    if r.refused:
        assert r.reason and r.estimate is None and r.low is None and r.high is None
        return
    assert r.estimate is not None and r.low is not None and r.high is not None
    assert all(math.isfinite(x) for x in (r.estimate, r.low, r.high))
    assert 0.0 <= r.low <= r.high <= 1.0 and 0.0 <= r.estimate <= 1.0
    assert "NaN" not in json.dumps(r.to_dict())


# ----------------------------------------------------------------------------- PPI++


@settings(max_examples=150, deadline=None)
@given(
    st.integers(2, 300),
    st.integers(1, 3000),
    st.floats(0.05, 0.95),
    st.floats(0.5, 1.0),
    st.sampled_from([0.9, 0.95]),
    st.integers(0, 2**32 - 1),
)
def test_ppi_matches_ppi_py(
    n: int, big_n: int, theta: float, acc: float, conf: float, seed: int
) -> None:
    ppi_py = _ppi()
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < theta).astype(float)
    assume(0 < y.sum() < n)
    yhat = np.where(rng.random(n) < acc, y, 1 - y)
    yu = (rng.random(big_n) < theta).astype(float)
    assume(np.concatenate([yhat, yu]).std() > 0)  # else ppi_py's lambda is 0/0 = NaN; ours is 0
    r = cal.ppi_pass_rate(y.astype(int), yhat.astype(int), yu.astype(int), confidence=conf)
    # ppi_py's default alpha is 0.1 (a 90 % interval): pass it explicitly.
    lo, hi = ppi_py.ppi_mean_ci(y, yhat, yu, alpha=1 - conf)
    est = ppi_py.ppi_mean_pointestimate(y, yhat, yu)
    if r.refused:  # ppi_py's interval lies wholly outside [0, 1]; clipping would be zero-width
        assert float(np.ravel(hi)[0]) < 0 or float(np.ravel(lo)[0]) > 1
        assert "outside [0, 1]" in (r.reason or "")
        return
    assert r.center == pytest.approx(float(np.ravel(est)[0]), abs=1e-9)
    z = norm.ppf(0.5 + conf / 2)
    assert r.center - z * r.se == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9)
    assert r.center + z * r.se == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9)
    assert r.low == pytest.approx(min(1.0, max(0.0, float(np.ravel(lo)[0]))), abs=1e-9)
    assert 0.0 <= r.params["lam"] <= 1.0


def test_ppi_with_lambda_one_on_an_all_pass_labelled_set_is_ppi_py() -> None:
    ppi_py = _ppi()
    y = np.ones(12)  # every labelled row passes; the judge does not always agree
    yh = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0], dtype=float)
    yu = np.array([1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1], dtype=float)
    r = cal.ppi_pass_rate(y.astype(int), yh.astype(int), yu.astype(int), lam=1.0,
                          confidence=0.9)
    lo, hi = ppi_py.ppi_mean_ci(y, yh, yu, alpha=0.1, lam=1.0)
    assert not r.refused
    z = norm.ppf(0.95)
    assert r.center - z * r.se == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9)
    assert r.center + z * r.se == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9)
    tuned = cal.ppi_pass_rate(y.astype(int), yh.astype(int), yu.astype(int))
    assert tuned.refused and "zero width" in (tuned.reason or "")  # tuned lambda is 0 here


def test_ppi_fixed_lambda_and_guards() -> None:
    ppi_py = _ppi()
    y = np.array([1, 1, 0, 0, 1, 0, 1, 1])
    yh = np.array([1, 0, 0, 1, 1, 0, 1, 1])
    yu = np.array([1, 0, 1, 1, 0, 1, 1, 0, 1, 1])
    for lam in (0.0, 0.5, 1.0):
        r = cal.ppi_pass_rate(y, yh, yu, lam=lam, confidence=0.9)
        lo, hi = ppi_py.ppi_mean_ci(y.astype(float), yh.astype(float), yu.astype(float), lam=lam)
        assert r.center - norm.ppf(0.95) * r.se == pytest.approx(float(np.ravel(lo)[0]))
        assert r.center + norm.ppf(0.95) * r.se == pytest.approx(float(np.ravel(hi)[0]))
    assert cal.ppi_pass_rate(y, yh, yu, lam=0.0).center == pytest.approx(y.mean())
    with pytest.raises(cal.CalibrationInputError):
        cal.ppi_pass_rate(y, yh, yu, lam=1.5)
    same = cal.ppi_pass_rate([1, 1, 1], [1, 0, 1], [1, 0])
    assert same.refused and "zero width" in (same.reason or "")
    assert cal.ppi_pass_rate([], [], [1]).refused
    assert cal.ppi_pass_rate([1, 0], [1, 0], []).refused


# ----------------------------------------------------------------------------- stratified


def test_stratified_formula_by_hand() -> None:
    # Judge-pass stratum: 40 labelled, 34 human pass; judge-fail stratum: 30 labelled, 6 pass.
    human = [1] * 34 + [0] * 6 + [1] * 6 + [0] * 24
    judge = [1] * 40 + [0] * 30
    target = [1] * 620 + [0] * 380
    r = cal.stratified_pass_rate(human, judge, target)
    p, ppv, fomr = 0.62, 34 / 40, 6 / 30
    assert r.estimate == pytest.approx(p * ppv + (1 - p) * fomr, abs=1e-12)
    ppv_t, fomr_t = 35 / 42, 7 / 32
    centre = p * ppv_t + (1 - p) * fomr_t
    var = (p**2 * ppv_t * (1 - ppv_t) / 42 + (1 - p) ** 2 * fomr_t * (1 - fomr_t) / 32
           + (ppv_t - fomr_t) ** 2 * p * (1 - p) / 1000)
    z = norm.ppf(0.975)
    assert r.center == pytest.approx(centre, abs=1e-12)
    assert (r.low, r.high) == pytest.approx((centre - z * var**0.5, centre + z * var**0.5),
                                            abs=1e-12)
    assert r.params["npv"] == pytest.approx(24 / 30)


def test_stratified_guards() -> None:
    r = cal.stratified_pass_rate([1, 0], [1, 1], [1, 0, 0])
    assert r.refused and "judge-fail stratum" in (r.reason or "")
    r = cal.stratified_pass_rate([1, 0], [0, 0], [1, 0, 0])
    assert r.refused and "judge-pass stratum" in (r.reason or "")
    # A target with no judge-fail rows does not need judge-fail labels.
    ok = cal.stratified_pass_rate([1, 0, 1], [1, 1, 1], [1, 1, 1])
    assert not ok.refused and ok.estimate == pytest.approx(2 / 3)
    assert cal.stratified_pass_rate([1], [1], []).refused


# ----------------------------------------------------------------------------- naive, chooser


def test_naive_is_wilson_of_judge_pass_rate() -> None:
    r = cal.naive_pass_rate(["pass"] * 30 + ["fail"] * 70 + ["unscored"] * 5, confidence=0.9)
    lo, hi = proportion_confint(30, 100, alpha=0.1, method="wilson")
    assert (r.estimate, r.low, r.high) == pytest.approx((0.3, lo, hi))
    assert r.n_target == 100 and r.method == "naive"
    assert any("5 target rows excluded" in w for w in r.warnings)
    assert cal.naive_pass_rate(["unscored"]).refused


def test_labels_only() -> None:
    r = cal.labels_only_pass_rate(["pass", "pass", "fail", "unsure"])
    lo, hi = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert (r.estimate, r.low, r.high) == pytest.approx((2 / 3, lo, hi))
    assert cal.labels_only_pass_rate(["unsure"]).refused


def test_an_unknown_estimator_is_refused() -> None:
    human = [1] * 30 + [0] * 20
    judge = [1] * 27 + [0] * 3 + [1] * 4 + [0] * 16
    with pytest.raises(cal.CalibrationInputError):
        cal.estimate_pass_rate(cal.calibration_counts(human, judge, [1, 0]), method="magic")  # type: ignore[arg-type]


def test_counts_roundtrip_and_validation() -> None:
    c = cal.CalibrationCounts.from_counts(tp=3, fn=1, fp=2, tn=4, k_target=5, n_target=9)
    h, j, t = cal.counts_to_arrays(c)
    back = cal.calibration_counts(h, j, t)
    assert back.confusion.as_array().tolist() == c.confusion.as_array().tolist()
    assert (back.k_target, back.n_target) == (5, 9)
    with pytest.raises(cal.CalibrationInputError):
        cal.CalibrationCounts.from_counts(tp=1, fn=0, fp=0, tn=0, k_target=3, n_target=2)
    with pytest.raises(cal.CalibrationInputError):
        cal.calibration_counts([1, 0], [1], [1])
