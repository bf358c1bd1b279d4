"""Pass rates: naive judge pass rate, and corrected estimates of the true (human) pass rate.

Four estimators of ``theta = P(human pass)`` on the target rows, each valid under its own
sampling design (STATS.md §1-2):

=================  ===========================  ===============================================
method             valid when the labelled      interval
                   rows are ...
=================  ===========================  ===============================================
``"lee"``          any calibration set whose    Lee et al. (2025) eqs. 4-7: Rogan-Gladen point
                   sensitivity/specificity      estimate, adjusted-Wald interval (Lang &
                   transfer (another run,       Reiczigel 2014), with guards
                   model or week is fine)
``"ppi++"``        a random sample of the       PPI++ with tuned lambda (Angelopoulos et al.
                   same run's rows              2023), Wald
``"stratified"``   drawn at random within the   ``theta = p PPV + (1 - p)(1 - NPV)``;
                   judge-pass / judge-fail      per-stratum variances (Agresti-Caffo +1/+2
                   strata of the same run       smoothing)
``"naive"``        (never valid for theta)      Wilson interval of the judge pass rate ``p``
=================  ===========================  ===============================================

:func:`corrected_pass_rate` picks one from the sampling design and records the choice and its
assumption in the result.

All estimators work from counts (:class:`CalibrationCounts`), so a million target verdicts cost
one vectorised normalisation and a sum. Refusals follow the package pattern: a
:class:`~judges.calibration.PassRateEstimate` with ``refused=True`` and a ``reason``.

References:
    Lee, C., Zeng, T., Jeong, J., Sohn, J. & Lee, K. (2025). How to correctly report
    LLM-as-a-judge evaluations. arXiv:2511.21140.
    Rogan, W. J. & Gladen, B. (1978). Estimating prevalence from the results of a screening
    test. Am. J. Epidemiology 107(1), 71-76.
    Lang, Z. & Reiczigel, J. (2014). Confidence limits for prevalence of disease adjusted for
    estimated sensitivity and specificity. Preventive Veterinary Medicine 113(1), 13-22.
    Angelopoulos, A. N., Duchi, J. C. & Zrnic, T. (2023). PPI++: Efficient prediction-powered
    inference. arXiv:2311.01453.
    Agresti, A. & Caffo, B. (2000). Simple and effective confidence intervals for proportions and
    differences of proportions result from adding two successes and two failures. Am. Stat. 54.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, PassRateEstimate, _ToDict
from ._verdicts import FAIL, PASS, normalize_verdicts
from .rates import (
    ConfusionMatrix,
    _confusion_from_codes,
    check_confidence,
    wilson_interval,
    youden_interval,
    z_value,
)

__all__ = [
    "ASSUMPTIONS",
    "DESIGNS",
    "CalibrationCounts",
    "Design",
    "Method",
    "calibration_counts",
    "choose_method",
    "corrected_pass_rate",
    "corrected_pass_rate_from_counts",
    "estimate_pass_rate",
    "labels_only_pass_rate",
    "lee_pass_rate",
    "naive_pass_rate",
    "ppi_pass_rate",
    "stratified_pass_rate",
]

Design = Literal["same_run_random", "same_run_stratified", "separate_calibration"]
Method = Literal["lee", "ppi++", "stratified", "naive", "labels_only"]
DESIGNS: tuple[str, ...] = ("same_run_random", "same_run_stratified", "separate_calibration")

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

_DESIGN_CHOICE: dict[str, tuple[Method, str]] = {
    "same_run_random": (
        "stratified",
        "the labelled rows are a simple random sample of the rows the judge scored in this run "
        "(same items, same judge config); estimated by post-stratifying on the judge verdict, "
        "which for pass/fail verdicts is the regression estimator PPI++ approximates (slope = "
        "PPV - (1 - NPV)) with better small-sample coverage; invalid under label shift "
        "(labels from another run, model or week)",
    ),
    "same_run_stratified": ("stratified", ASSUMPTIONS["stratified"]),
    "separate_calibration": ("lee", ASSUMPTIONS["lee"]),
}


@dataclass(frozen=True)
class CalibrationCounts(_ToDict):
    """Everything the pass-rate estimators need, as counts.

    Attributes:
        confusion: Judge-vs-human counts on the labelled rows (unsure/unscored excluded).
        k_target: Target rows the judge passed.
        n_target: Target rows with a pass/fail judge verdict.
        n_target_unscored: Target rows excluded (judge unscored/unsure).
    """

    confusion: ConfusionMatrix
    k_target: int
    n_target: int
    n_target_unscored: int = 0

    def __post_init__(self) -> None:
        """Validate the counts."""
        cm = self.confusion
        if min(cm.tp, cm.fn, cm.fp, cm.tn, self.k_target, self.n_target) < 0:
            raise CalibrationInputError("counts must be non-negative")
        if self.k_target > self.n_target:
            raise CalibrationInputError("k_target cannot exceed n_target")

    @classmethod
    def from_counts(
        cls, *, tp: int, fn: int, fp: int, tn: int, k_target: int, n_target: int
    ) -> CalibrationCounts:
        """Build from the four labelled cells and the target pass count."""
        return cls(ConfusionMatrix(tp=tp, fn=fn, fp=fp, tn=tn), k_target, n_target)

    @property
    def judge_pass_rate(self) -> float | None:
        """Judge pass rate ``p`` on the target rows (``None`` without target rows)."""
        return self.k_target / self.n_target if self.n_target else None


def calibration_counts(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any],
) -> CalibrationCounts:
    """Normalise verdict arrays and reduce them to :class:`CalibrationCounts`.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same labelled rows.
        judge_target: Judge verdicts on the target rows (the run whose pass rate is wanted).

    Returns:
        The counts (vectorised; a million target verdicts take tens of milliseconds).
    """
    h = normalize_verdicts(human)
    jl = normalize_verdicts(judge_labelled)
    if h.shape != jl.shape:
        raise CalibrationInputError(
            f"human and judge_labelled must be aligned: {h.shape[0]} vs {jl.shape[0]} rows"
        )
    jt = normalize_verdicts(judge_target)
    return _counts_from_codes(h, jl, jt)


def _counts_from_codes(
    h: npt.NDArray[np.int8], jl: npt.NDArray[np.int8], jt: npt.NDArray[np.int8]
) -> CalibrationCounts:
    k = int(np.count_nonzero(jt == PASS))
    n = k + int(np.count_nonzero(jt == FAIL))
    return CalibrationCounts(_confusion_from_codes(h, jl), k, n, int(jt.shape[0]) - n)


def _clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def _refuse(
    method: Method, reason: str, counts: CalibrationCounts, conf: float, **extra: Any
) -> PassRateEstimate:
    return PassRateEstimate(
        estimate=None,
        low=None,
        high=None,
        method=method,
        confidence=conf,
        n_labelled=counts.confusion.n,
        n_target=counts.n_target,
        refused=True,
        reason=reason,
        assumption=ASSUMPTIONS[method],
        warnings=_exclusion_warnings(counts),
        **extra,
    )


def _exclusion_warnings(counts: CalibrationCounts) -> tuple[str, ...]:
    cm = counts.confusion
    out = []
    if cm.n_human_undecided:
        out.append(f"{cm.n_human_undecided} labelled rows excluded: human unsure/unscored")
    if cm.n_judge_unscored:
        out.append(f"{cm.n_judge_unscored} labelled rows excluded: judge unscored")
    if counts.n_target_unscored:
        out.append(f"{counts.n_target_unscored} target rows excluded: judge unscored")
    return tuple(out)


# --------------------------------------------------------------------------- estimators


def _naive(counts: CalibrationCounts, conf: float) -> PassRateEstimate:
    if counts.n_target == 0:
        return _refuse("naive", "no scored target verdicts", counts, conf)
    w = wilson_interval(counts.k_target, counts.n_target, confidence=conf)
    return PassRateEstimate(
        estimate=w.estimate,
        low=w.low,
        high=w.high,
        method="naive",
        confidence=conf,
        n_labelled=0,
        n_target=counts.n_target,
        center=w.estimate,
        assumption=ASSUMPTIONS["naive"],
        warnings=(
            "uncorrected judge pass rate: biased for the true pass rate unless the judge is "
            "perfect",
            *(
                (f"{counts.n_target_unscored} target rows excluded: judge unscored",)
                if counts.n_target_unscored
                else ()
            ),
        ),
    )


def _labels_only(counts: CalibrationCounts, conf: float) -> PassRateEstimate:
    cm = counts.confusion
    if cm.n == 0:
        return _refuse("labels_only", "no labelled pass/fail rows", counts, conf)
    w = wilson_interval(cm.m1, cm.n, confidence=conf)
    return PassRateEstimate(
        estimate=w.estimate,
        low=w.low,
        high=w.high,
        method="labels_only",
        confidence=conf,
        n_labelled=cm.n,
        n_target=counts.n_target,
        center=w.estimate,
        assumption=ASSUMPTIONS["labels_only"],
        warnings=_exclusion_warnings(counts),
    )


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
    theta_hat = _clip01(theta_raw)
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
    low, high = _clip01(raw_low), _clip01(raw_high)
    clipped = theta_raw != theta_hat or raw_low != low or raw_high != high
    warnings = list(_exclusion_warnings(counts))
    if theta_raw != theta_hat:
        warnings.append(
            f"point estimate {theta_raw:.3f} outside [0, 1], clipped to {theta_hat:.3f}"
        )
    if raw_low != low or raw_high != high:
        warnings.append(f"interval [{raw_low:.3f}, {raw_high:.3f}] clipped to [0, 1]")
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
    return PassRateEstimate(
        estimate=theta_hat,
        low=low,
        high=high,
        method="lee",
        confidence=conf,
        n_labelled=cm.n,
        n_target=n,
        center=center,
        se=se,
        clipped=clipped,
        uninformative=uninformative,
        assumption=ASSUMPTIONS["lee"],
        warnings=tuple(warnings),
        params=MappingProxyType(params),
    )


def _ppi(counts: CalibrationCounts, conf: float, lam: float | None) -> PassRateEstimate:
    cm = counts.confusion
    n, big_n = cm.n, counts.n_target
    if big_n == 0:
        return _refuse("ppi++", "no scored target verdicts", counts, conf)
    if n == 0:
        return _refuse("ppi++", "no labelled pass/fail rows", counts, conf)
    if cm.m1 in (0, n):
        only = "pass" if cm.m1 == n else "fail"
        return _refuse(
            "ppi++",
            f"all {n} labelled rows are human-{only}: the PPI++ interval would have zero width",
            counts,
            conf,
        )
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
    raw_low, raw_high = theta - z * se, theta + z * se
    if raw_high < 0.0 or raw_low > 1.0:
        return _refuse(
            "ppi++",
            f"the whole PPI++ interval [{raw_low:.3f}, {raw_high:.3f}] lies outside [0, 1]; "
            "clipping would claim a zero-width interval",
            counts,
            conf,
        )
    est, low, high = _clip01(theta), _clip01(raw_low), _clip01(raw_high)
    warnings = list(_exclusion_warnings(counts))
    clipped = est != theta or low != raw_low or high != raw_high
    if clipped:
        warnings.append(
            f"estimate/interval clipped to [0, 1] (raw {theta:.3f} [{raw_low:.3f}, {raw_high:.3f}])"
        )
    return PassRateEstimate(
        estimate=est,
        low=low,
        high=high,
        method="ppi++",
        confidence=conf,
        n_labelled=n,
        n_target=big_n,
        center=theta,
        se=se,
        clipped=clipped,
        assumption=ASSUMPTIONS["ppi++"],
        warnings=tuple(warnings),
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
    low, high = _clip01(raw_low), _clip01(raw_high)
    clipped = low != raw_low or high != raw_high
    warnings = list(_exclusion_warnings(counts))
    if clipped:
        warnings.append(f"interval [{raw_low:.3f}, {raw_high:.3f}] clipped to [0, 1]")
    return PassRateEstimate(
        estimate=theta,
        low=low,
        high=high,
        method="stratified",
        confidence=conf,
        n_labelled=cm.n,
        n_target=big_n,
        center=center,
        se=se,
        clipped=clipped,
        assumption=ASSUMPTIONS["stratified"],
        warnings=tuple(warnings),
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
    if method == "lee":
        return _lee(counts, conf)
    if method == "ppi++":
        return _ppi(counts, conf, lam)
    if method == "stratified":
        return _stratified(counts, conf)
    if method == "naive":
        return _naive(counts, conf)
    if method == "labels_only":
        return _labels_only(counts, conf)
    raise CalibrationInputError(
        f"unknown method {method!r}; choose lee, ppi++, stratified, naive or labels_only"
    )


def naive_pass_rate(
    judge_target: npt.ArrayLike | Sequence[Any], *, confidence: float = 0.95
) -> PassRateEstimate:
    """Uncorrected judge pass rate on the target rows with a Wilson interval.

    Biased for the true pass rate unless the judge is perfect: it overstates low true pass
    rates and understates high ones (STATS.md). Shown beside the corrected estimate.

    Args:
        judge_target: Judge verdicts on the target rows (unscored excluded and counted).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="naive"``.

    Examples:
        >>> round(naive_pass_rate(["pass", "pass", "fail", "unscored"]).estimate, 4)
        0.6667
    """
    jt = normalize_verdicts(judge_target)
    empty = np.zeros(0, dtype=np.int8)
    return estimate_pass_rate(
        _counts_from_codes(empty, empty, jt), method="naive", confidence=confidence
    )


def lee_pass_rate(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any],
    *,
    confidence: float = 0.95,
) -> PassRateEstimate:
    """Lee et al. (2025) bias-corrected pass rate with its adjusted-Wald interval.

    Point estimate (eq. 4, Rogan-Gladen) ``theta_hat = (p + q0 - 1) / (q0 + q1 - 1)``, clipped
    to [0, 1]. Interval (eqs. 5-7) centred on ``theta~ + dtheta~`` (``center``), from smoothed
    ``p~ = (n p + z^2/2) / (n + z^2)``, ``q~ = (m q + 1) / (m + 2)``. Guards the reference code
    lacks: refuses when ``m0 == 0``, ``m1 == 0``, no target rows, the estimated or smoothed
    Youden index ``q0 + q1 - 1 <= 0``, or the whole interval falls outside [0, 1] (clipping
    would give a zero-width interval: the target pass rate contradicts the error rates);
    flags ``uninformative`` (interval [0, 1]) when the Newcombe lower bound of the Youden index
    is ``<= 0``; never returns ``low > high``.

    Valid when the judge's sensitivity and specificity transfer from the labelled rows to the
    target rows; the pass rate itself may differ (label shift). Not valid when labelled rows
    were sampled by judge verdict (use :func:`stratified_pass_rate`).

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same labelled rows.
        judge_target: Judge verdicts on the target rows.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``params`` holding ``q0``, ``q1``,
        ``youden``, ``youden_low``, smoothed values and the unwidened Lee bounds.

    Examples:
        >>> h = ["pass"] * 40 + ["fail"] * 40
        >>> j = ["pass"] * 36 + ["fail"] * 4 + ["pass"] * 8 + ["fail"] * 32
        >>> r = lee_pass_rate(h, j, ["pass"] * 500 + ["fail"] * 500)
        >>> round(r.estimate, 4), round(r.low, 4), round(r.high, 4)
        (0.4286, 0.2872, 0.5512)
    """
    return estimate_pass_rate(
        calibration_counts(human, judge_labelled, judge_target),
        method="lee",
        confidence=confidence,
    )


def ppi_pass_rate(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any],
    *,
    confidence: float = 0.95,
    lam: float | None = None,
) -> PassRateEstimate:
    """PPI++ mean estimate of the pass rate with tuned lambda and a Wald interval.

    ``theta(lam) = lam * mean(judge_target) + mean(human - lam * judge_labelled)``,
    ``SE^2 = var0(lam * judge_target) / N + var0(human - lam * judge_labelled) / n``,
    ``lam = clip(Cov(human, judge) / ((1 + n/N) Var_pooled(judge)), 0, 1)``; matches
    ``ppi_py.ppi_mean_ci`` (whose default is a 90 % interval; ours is ``confidence``).

    Valid only when the labelled rows are a random sample of the same rows being scored.
    Refuses when all labelled rows share one human verdict (zero-width interval).

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same labelled rows.
        judge_target: Judge verdicts on the target (unlabelled) rows.
        confidence: Two-sided confidence level.
        lam: Fixed lambda in [0, 1], or ``None`` to tune it.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``params["lam"]``.
    """
    return estimate_pass_rate(
        calibration_counts(human, judge_labelled, judge_target),
        method="ppi++",
        confidence=confidence,
        lam=lam,
    )


def stratified_pass_rate(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any],
    *,
    confidence: float = 0.95,
) -> PassRateEstimate:
    """Verdict-stratified pass rate ``theta = p PPV + (1 - p)(1 - NPV)``.

    ``p`` is the judge pass rate on the target rows; PPV (human-pass share among labelled
    judge-pass rows) and ``1 - NPV`` (human-pass share among labelled judge-fail rows) are
    estimated in each stratum. The variance adds per stratum:
    ``p^2 V(PPV) + (1-p)^2 V(1-NPV) + (PPV - (1-NPV))^2 p(1-p)/N``, with Agresti-Caffo
    smoothing ``(k+1)/(m+2)`` in the variance and the interval centre so a stratum whose labels
    all agree does not give a zero-width interval.

    Valid when labelled rows were drawn at random within judge-pass / judge-fail strata of the
    same run (any within-stratum sampling fractions).

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same labelled rows (define the strata).
        judge_target: Judge verdicts on the target rows.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate`.
    """
    return estimate_pass_rate(
        calibration_counts(human, judge_labelled, judge_target),
        method="stratified",
        confidence=confidence,
    )


def labels_only_pass_rate(
    human: npt.ArrayLike | Sequence[Any], *, confidence: float = 0.95
) -> PassRateEstimate:
    """Human pass rate of the labelled rows alone (Wilson), ignoring the judge.

    Args:
        human: Human verdicts (unsure/unscored excluded).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="labels_only"``.
    """
    h = normalize_verdicts(human)
    judge = np.where(h >= 0, PASS, h).astype(np.int8)  # any decided judge code keeps the row
    empty = np.zeros(0, dtype=np.int8)
    return estimate_pass_rate(
        _counts_from_codes(h, judge, empty), method="labels_only", confidence=confidence
    )


def choose_method(design: Design | str) -> tuple[Method, str]:
    """Map a sampling design to the estimator valid under it and its assumption.

    ``same_run_random`` (labelled rows are a random sample of this run's rows) -> the
    post-stratified estimator (``"stratified"``). PPI++ is valid there too and matches it
    asymptotically for pass/fail verdicts, but its Wald interval under-covers with 50-200
    labels (0.90-0.94 in ``bench/coverage.py``), while the post-stratified interval with
    Agresti-Caffo smoothing keeps >= 0.94 at nearly the same width.
    ``same_run_stratified`` (sampled within judge-pass / judge-fail strata of this run) ->
    ``"stratified"``. ``separate_calibration`` (labelled rows from another run, model or
    week; only the judge's error rates are trusted to transfer) -> ``"lee"``.

    Args:
        design: One of :data:`DESIGNS`.

    Returns:
        ``(method, assumption)``.

    Examples:
        >>> choose_method("separate_calibration")[0]
        'lee'
    """
    if design not in _DESIGN_CHOICE:
        raise CalibrationInputError(f"unknown design {design!r}; choose one of {DESIGNS}")
    return _DESIGN_CHOICE[design]


def corrected_pass_rate_from_counts(
    counts: CalibrationCounts, *, design: Design | str, confidence: float = 0.95
) -> PassRateEstimate:
    """:func:`corrected_pass_rate` on :class:`CalibrationCounts` (for segments, simulations).

    Args:
        counts: Labelled confusion counts and target judge counts.
        design: The sampling design (see :func:`choose_method`).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``design`` and ``assumption``.
    """
    method, assumption = choose_method(design)
    result = estimate_pass_rate(counts, method=method, confidence=confidence)
    if design == "same_run_random" and result.refused and counts.confusion.n > 0:
        # A judge stratum with target rows but no labelled rows: under random sampling the
        # labelled rows alone still give a valid (Wilson) interval.
        fallback = estimate_pass_rate(counts, method="labels_only", confidence=confidence)
        if not fallback.refused:
            result = dataclasses.replace(
                fallback,
                warnings=(
                    *fallback.warnings,
                    f"post-stratified estimator refused "
                    f"({result.reason}); fell back to the labelled rows alone (Wilson)",
                ),
            )
            assumption = ASSUMPTIONS["labels_only"]
    return dataclasses.replace(result, design=design, assumption=assumption)


def corrected_pass_rate(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any],
    *,
    design: Design | str,
    confidence: float = 0.95,
) -> PassRateEstimate:
    """Corrected pass rate by the estimator valid for how the labelled rows were drawn.

    ``same_run_random`` -> post-stratified (falls back to the labels alone, Wilson, if a judge
    stratum has no labelled rows); ``same_run_stratified`` -> verdict-stratified;
    ``separate_calibration`` -> Lee. See :func:`choose_method` for why. The result records
    ``design``, ``method`` and ``assumption``.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same labelled rows.
        judge_target: Judge verdicts on the target rows.
        design: The sampling design (see :func:`choose_method`).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate`.
    """
    return corrected_pass_rate_from_counts(
        calibration_counts(human, judge_labelled, judge_target),
        design=design,
        confidence=confidence,
    )
