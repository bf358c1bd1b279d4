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

Which one applies is decided from how the labelled rows were drawn by the one estimation path,
:func:`judges.calibration.answer_pass_rate`, whose design-based estimators live in
:mod:`.strata`, :mod:`.transport` and :mod:`.active`; these four are the textbook ones, checked
against their reference implementations.

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

import numpy as np

from ._results import PassRateEstimate
from ._verdicts import PASS, PerRow, normalize_verdicts
from .counts import CalibrationCounts, _counts_from_codes, calibration_counts
from .estimators import ASSUMPTIONS, Method, estimate_pass_rate

__all__ = [
    "ASSUMPTIONS",
    "CalibrationCounts",
    "Method",
    "calibration_counts",
    "estimate_pass_rate",
    "labels_only_pass_rate",
    "lee_pass_rate",
    "naive_pass_rate",
    "ppi_pass_rate",
    "stratified_pass_rate",
]

def naive_pass_rate(
    judge_target: PerRow, *, confidence: float = 0.95
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
    human: PerRow, judge_labelled: PerRow, judge_target: PerRow,
    *, confidence: float = 0.95,
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
    human: PerRow, judge_labelled: PerRow, judge_target: PerRow,
    *, confidence: float = 0.95, lam: float | None = None,
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
    human: PerRow, judge_labelled: PerRow, judge_target: PerRow,
    *, confidence: float = 0.95,
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
    human: PerRow, *, confidence: float = 0.95
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
