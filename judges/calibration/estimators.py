"""The pass-rate estimators over :class:`~.counts.CalibrationCounts`, one function each.

``lee`` (Rogan-Gladen with the adjusted-Wald interval of Lee et al. 2025), ``ppi++`` (PPI++ with
tuned lambda), ``stratified`` (verdict-stratified, Agresti-Caffo smoothed), ``naive`` (the
judge's own pass rate, Wilson) and ``labels_only`` (the labelled rows alone, Wilson), dispatched
by :func:`estimate_pass_rate`. Which one is valid for a sampling design, and the public
array-level functions, are in :mod:`.pass_rate`; the references are listed there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any, Literal

from ._results import CalibrationInputError, PassRateEstimate, clip01
from .counts import CalibrationCounts
from .rates import check_confidence, wilson_interval, youden_interval, z_value

__all__ = ["ASSUMPTIONS", "Method", "estimate_pass_rate"]

Method = Literal["lee", "ppi++", "stratified", "naive", "labels_only"]

ASSUMPTIONS: dict[str, str] = {
    "lee": (
        "the judge's sensitivity and specificity on the labelled rows transfer to the target "
        "rows (the pass rate itself may differ: calibration rows may come from another run, "
        "model or week); labelled rows drawn at random within each human class"
    ),
    "ppi++": (
        "the labelled rows are a simple random sample of the rows the judge scored in this run; "
        "invalid under label shift (labels from another run, model or week)"
    ),
    "stratified": (
        "the labelled rows were drawn at random within the judge-pass and judge-fail strata of "
        "this run (PPV and NPV are run-specific and do not transfer to another run)"
    ),
    "naive": "the judge is perfect (no correction); shown for comparison only",
    "labels_only": (
        "the labelled rows are a simple random sample of this run's rows; the judge is ignored"
    ),
}


def _result(
    method: Method,
    counts: CalibrationCounts,
    conf: float,
    *,
    estimate: float | None,
    low: float | None,
    high: float | None,
    n_labelled: int,
    warnings: Sequence[str],
    **extra: Any,
) -> PassRateEstimate:
    """A result with what every estimator fills the same way (target size, assumption)."""
    return PassRateEstimate(
        estimate=estimate, low=low, high=high, method=method, confidence=conf,
        n_labelled=n_labelled, n_target=counts.n_target, assumption=ASSUMPTIONS[method],
        warnings=tuple(warnings), **extra,
    )


def _refuse(
    method: Method, reason: str, counts: CalibrationCounts, conf: float, **extra: Any
) -> PassRateEstimate:
    return _result(
        method, counts, conf, estimate=None, low=None, high=None,
        n_labelled=counts.confusion.n, warnings=_exclusion_warnings(counts), refused=True,
        reason=reason, **extra,
    )


def _exclusion_warnings(counts: CalibrationCounts, *, target_only: bool = False) -> tuple[str, ...]:
    """One warning per group of rows left out (only the target rows' with ``target_only``)."""
    return tuple(
        f"{n} {rows} rows excluded: {why}"
        for n, rows, why in counts.exclusions()
        if rows == "target" or not target_only
    )


def _clip_interval(
    raw_low: float, raw_high: float, warnings: list[str]
) -> tuple[float, float, bool]:
    """Clip an interval to [0, 1]; says so in ``warnings``. Returns ``(low, high, clipped)``."""
    low, high = clip01(raw_low), clip01(raw_high)
    clipped = low != raw_low or high != raw_high
    if clipped:
        warnings.append(f"interval [{raw_low:.3f}, {raw_high:.3f}] clipped to [0, 1]")
    return low, high, clipped


def _wilson(
    method: Method, k: int, n: int, counts: CalibrationCounts, conf: float, *,
    n_labelled: int, warnings: Sequence[str],
) -> PassRateEstimate:
    """A proportion ``k / n`` with its Wilson interval (the naive and labels-only rates)."""
    w = wilson_interval(k, n, confidence=conf)
    return _result(method, counts, conf, estimate=w.estimate, low=w.low, high=w.high,
                   n_labelled=n_labelled, center=w.estimate, warnings=warnings)


def _naive(counts: CalibrationCounts, conf: float) -> PassRateEstimate:
    if counts.n_target == 0:
        return _refuse("naive", "no scored target verdicts", counts, conf)
    return _wilson(
        "naive", counts.k_target, counts.n_target, counts, conf, n_labelled=0,
        warnings=(
            "uncorrected judge pass rate: biased for the true pass rate unless the judge is "
            "perfect",
            *_exclusion_warnings(counts, target_only=True),
        ),
    )


def _labels_only(counts: CalibrationCounts, conf: float) -> PassRateEstimate:
    cm = counts.confusion
    if cm.n == 0:
        return _refuse("labels_only", "no labelled pass/fail rows", counts, conf)
    return _wilson("labels_only", cm.m1, cm.n, counts, conf, n_labelled=cm.n,
                   warnings=_exclusion_warnings(counts))


def _lee(counts: CalibrationCounts, conf: float) -> PassRateEstimate:
    cm = counts.confusion
    n, m0, m1 = counts.n_target, cm.m0, cm.m1
    if n == 0:
        return _refuse("lee", "no scored target verdicts", counts, conf)
    if m0 == 0 or m1 == 0:
        missing = "failing" if m0 == 0 else "passing"
        return _refuse(
            "lee",
            f"no human-{missing} labelled rows (m0={m0}, m1={m1}): label at least one failing "
            "and one passing row",
            counts,
            conf,
        )
    z = z_value(conf)
    p = counts.k_target / n
    q0 = cm.tn / m0
    q1 = cm.tp / m1
    youden = q0 + q1 - 1.0
    params: dict[str, Any] = {
        "p": p,
        "q0": q0,
        "q1": q1,
        "youden": youden,
        "m0": m0,
        "m1": m1,
        "n": n,
    }
    if youden <= 0.0:
        return _refuse(
            "lee",
            f"judge no better than chance on the labelled rows: sensitivity + specificity - 1 "
            f"= {youden:.3f} <= 0, so the correction is undefined",
            counts,
            conf,
            params=MappingProxyType(params),
        )
    # Smoothed quantities, eqs. 5-7 (adjusted Wald; Lang & Reiczigel 2014).
    z2 = z * z
    n_t = n + z2
    p_t = (n * p + z2 / 2.0) / n_t
    m0_t = m0 + 2.0
    m1_t = m1 + 2.0
    q0_t = (m0 * q0 + 1.0) / m0_t
    q1_t = (m1 * q1 + 1.0) / m1_t
    youden_t = q0_t + q1_t - 1.0
    params.update(q0_smoothed=q0_t, q1_smoothed=q1_t, youden_smoothed=youden_t)
    if youden_t <= 0.0:
        return _refuse(
            "lee",
            f"smoothed sensitivity + specificity - 1 = {youden_t:.3f} <= 0: too few labelled "
            "rows to separate the judge from chance",
            counts,
            conf,
            params=MappingProxyType(params),
        )
    theta_raw = (p + q0 - 1.0) / youden
    theta_hat = clip01(theta_raw)
    theta_t = (p_t + q0_t - 1.0) / youden_t
    v0 = q0_t * (1.0 - q0_t) / m0_t
    v1 = q1_t * (1.0 - q1_t) / m1_t
    dtheta = 2.0 * z2 * (-(1.0 - theta_t) * v0 + theta_t * v1)
    se = math.sqrt(p_t * (1.0 - p_t) / n_t + (1.0 - theta_t) ** 2 * v0 + theta_t**2 * v1) / youden_t
    center = theta_t + dtheta
    raw_low, raw_high = center - z * se, center + z * se
    params.update(theta_raw=theta_raw, theta_smoothed=theta_t, dtheta=dtheta)
    if raw_high < 0.0 or raw_low > 1.0:
        # Clipping would give a zero-width interval at 0 or 1: a confident claim built on data
        # that contradict the model (the judge's target pass rate lies outside
        # [FPR, sensitivity] beyond sampling noise).
        side = "below its false-positive rate" if raw_high < 0.0 else "above its sensitivity"
        return _refuse(
            "lee",
            f"the judge's pass rate on the target rows ({p:.3f}) is {side} on the labelled rows "
            f"(FPR {1 - q0:.3f}, sensitivity {q1:.3f}) beyond sampling noise: the labelled rows' "
            "error rates do not transfer to the target rows",
            counts,
            conf,
            params=MappingProxyType(params),
        )
    warnings = list(_exclusion_warnings(counts))
    if theta_raw != theta_hat:
        warnings.append(
            f"point estimate {theta_raw:.3f} outside [0, 1], clipped to {theta_hat:.3f}"
        )
    low, high, clipped = _clip_interval(raw_low, raw_high, warnings)
    clipped = clipped or theta_raw != theta_hat
    params.update(lee_low=low, lee_high=high)
    if low > high:  # cannot happen with youden_t > 0 and se >= 0; never return it if it does
        return _refuse(
            "lee",
            "internal error: inverted interval",
            counts,
            conf,
            params=MappingProxyType(params),
        )
    # Youden index significantly above zero? (Newcombe/Wilson interval for TPR - FPR.)
    yi = youden_interval(cm.tp, m1, cm.fp, m0, confidence=conf)
    params.update(youden_low=yi.low, youden_high=yi.high)
    uninformative = yi.low is not None and yi.low <= 0.0
    if uninformative:
        warnings.append(
            f"uninformative: the judge's Youden index (sensitivity + specificity - 1 = "
            f"{youden:.3f}) has lower {conf:.0%} bound {yi.low:.3f} <= 0, so the judge may carry "
            "no information and the true pass rate is not identified; interval widened to [0, 1]"
        )
        low, high = 0.0, 1.0
    return _result(
        "lee", counts, conf, estimate=theta_hat, low=low, high=high, n_labelled=cm.n,
        warnings=warnings, center=center, se=se, clipped=clipped, uninformative=uninformative,
        params=MappingProxyType(params),
    )


def _ppi(counts: CalibrationCounts, conf: float, lam: float | None) -> PassRateEstimate:
    cm = counts.confusion
    n, big_n = cm.n, counts.n_target
    if big_n == 0:
        return _refuse("ppi++", "no scored target verdicts", counts, conf)
    if n == 0:
        return _refuse("ppi++", "no labelled pass/fail rows", counts, conf)
    z = z_value(conf)
    n11, n10, n01 = cm.tp, cm.fn, cm.fp
    p = counts.k_target / big_n
    mean_y = cm.m1 / n
    mean_h = (n11 + n01) / n
    cov = n11 / n - mean_y * mean_h
    total = n + big_n
    k_all = n11 + n01 + counts.k_target
    var_h = k_all * (total - k_all) / total / (total - 1) if total > 1 else 0.0
    if lam is None:
        lam_v = min(1.0, max(0.0, cov / ((1.0 + n / big_n) * var_h))) if var_h > 0 else 0.0
    else:
        if not 0.0 <= lam <= 1.0:
            raise CalibrationInputError(f"lam must be in [0, 1], got {lam}")
        lam_v = float(lam)
    theta = lam_v * p + mean_y - lam_v * mean_h
    # Residual r = Y - lam * Yhat over the labelled rows: (1,1) -> 1-lam, (1,0) -> 1, (0,1) -> -lam.
    mean_r = mean_y - lam_v * mean_h
    mean_r2 = (n11 * (1.0 - lam_v) ** 2 + n10 + n01 * lam_v**2) / n
    var_r = max(0.0, mean_r2 - mean_r**2)
    se = math.sqrt(lam_v**2 * p * (1.0 - p) / big_n + var_r / n)
    if se == 0.0:
        # One human class and a lambda that leaves the residual constant (the tuned lambda on
        # such rows is 0): a zero-width interval. With lambda = 1 and a varying judge the
        # residual varies, and the interval is ppi_py's.
        why = (f"all {n} labelled rows are human-{'pass' if cm.m1 == n else 'fail'}"
               if cm.m1 in (0, n) else "the residuals do not vary")
        return _refuse("ppi++", f"{why}: the PPI++ interval would have zero width", counts, conf)
    raw_low, raw_high = theta - z * se, theta + z * se
    if raw_high < 0.0 or raw_low > 1.0:
        return _refuse(
            "ppi++",
            f"the whole PPI++ interval [{raw_low:.3f}, {raw_high:.3f}] lies outside [0, 1]; "
            "clipping would claim a zero-width interval",
            counts,
            conf,
        )
    est, low, high = clip01(theta), clip01(raw_low), clip01(raw_high)
    warnings = list(_exclusion_warnings(counts))
    clipped = est != theta or low != raw_low or high != raw_high
    if clipped:
        warnings.append(
            f"estimate/interval clipped to [0, 1] (raw {theta:.3f} [{raw_low:.3f}, {raw_high:.3f}])"
        )
    return _result(
        "ppi++", counts, conf, estimate=est, low=low, high=high, n_labelled=n,
        warnings=warnings, center=theta, se=se, clipped=clipped,
        params=MappingProxyType(
            {
                "lam": lam_v,
                "p": p,
                "labelled_mean": mean_y,
                "labelled_judge_mean": mean_h,
                "theta_raw": theta,
            }
        ),
    )


def _stratified(counts: CalibrationCounts, conf: float) -> PassRateEstimate:
    cm = counts.confusion
    big_n = counts.n_target
    if big_n == 0:
        return _refuse("stratified", "no scored target verdicts", counts, conf)
    p = counts.k_target / big_n
    m_pos, a = cm.tp + cm.fp, cm.tp  # judge-pass stratum: human passes among them
    m_neg, b = cm.fn + cm.tn, cm.fn  # judge-fail stratum: human passes among them
    if p > 0 and m_pos == 0:
        return _refuse("stratified", "no labelled rows in the judge-pass stratum", counts, conf)
    if p < 1 and m_neg == 0:
        return _refuse("stratified", "no labelled rows in the judge-fail stratum", counts, conf)
    z = z_value(conf)
    ppv = a / m_pos if m_pos else 0.0
    fomr = b / m_neg if m_neg else 0.0  # false omission rate = 1 - NPV
    theta = p * ppv + (1.0 - p) * fomr
    ppv_t = (a + 1.0) / (m_pos + 2.0)
    fomr_t = (b + 1.0) / (m_neg + 2.0)
    center = p * ppv_t + (1.0 - p) * fomr_t
    var = (
        (p**2 * ppv_t * (1.0 - ppv_t) / (m_pos + 2.0) if m_pos else 0.0)
        + ((1.0 - p) ** 2 * fomr_t * (1.0 - fomr_t) / (m_neg + 2.0) if m_neg else 0.0)
        + (ppv_t - fomr_t) ** 2 * p * (1.0 - p) / big_n
    )
    se = math.sqrt(var)
    raw_low, raw_high = center - z * se, center + z * se
    warnings = list(_exclusion_warnings(counts))
    low, high, clipped = _clip_interval(raw_low, raw_high, warnings)
    return _result(
        "stratified", counts, conf, estimate=theta, low=low, high=high, n_labelled=cm.n,
        warnings=warnings, center=center, se=se, clipped=clipped,
        params=MappingProxyType(
            {
                "p": p,
                "ppv": ppv,
                "npv": 1.0 - fomr if m_neg else None,
                "m_judge_pass": m_pos,
                "m_judge_fail": m_neg,
            }
        ),
    )


def estimate_pass_rate(
    counts: CalibrationCounts,
    *,
    method: Method,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PassRateEstimate:
    """Run one pass-rate estimator on :class:`CalibrationCounts`.

    Args:
        counts: Labelled confusion counts and target judge counts.
        method: ``"lee"``, ``"ppi++"``, ``"stratified"``, ``"naive"`` or ``"labels_only"``.
        confidence: Two-sided confidence level.
        lam: PPI++ power-tuning parameter in [0, 1]; ``None`` (default) tunes it from data
            (``lam=1`` is plain PPI, ``lam=0`` the labels-only mean). Ignored by other methods.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate`.
    """
    conf = check_confidence(confidence)
    estimators: dict[str, Callable[[], PassRateEstimate]] = {
        "lee": lambda: _lee(counts, conf), "ppi++": lambda: _ppi(counts, conf, lam),
        "stratified": lambda: _stratified(counts, conf), "naive": lambda: _naive(counts, conf),
        "labels_only": lambda: _labels_only(counts, conf),
    }
    if method not in estimators:
        raise CalibrationInputError(
            f"unknown method {method!r}; choose lee, ppi++, stratified, naive or labels_only"
        )
    return estimators[method]()
