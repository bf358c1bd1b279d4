"""Judge-vs-human confusion matrix and error rates with Wilson intervals.

"Pass" is the positive class throughout: sensitivity (TPR) is the share of human-pass rows the
judge passes, specificity (TNR) the share of human-fail rows it fails, and the false-positive
rate ``FPR = 1 - specificity`` the share of truly failing answers the judge lets through.

Rows where the human is not pass/fail (``unsure``, ``unscored``, missing) or the judge is not
pass/fail (``unscored``, ``unsure``) are excluded from every rate and counted in the
:class:`ConfusionMatrix`.

References:
    Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
    JASA 22(158), 209-212.
    Newcombe, R. G. (1998). Interval estimation for the difference between independent
    proportions: comparison of eleven methods. Statistics in Medicine 17, 873-890 (method 10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from scipy.stats import norm
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from ._results import CalibrationInputError, Estimate, _ToDict
from ._verdicts import FAIL, PASS, PerRow, normalize_verdicts

__all__ = [
    "ConfusionMatrix",
    "JudgeRates",
    "check_confidence",
    "confusion_matrix",
    "judge_rates",
    "rates_from_confusion",
    "wilson_interval",
    "youden_interval",
    "z_value",
]


def check_confidence(confidence: float) -> float:
    """Validate a two-sided confidence level in (0, 1) and return it as ``float``."""
    c = float(confidence)
    if not 0.0 < c < 1.0:
        raise CalibrationInputError(f"confidence must be in (0, 1), got {confidence!r}")
    return c


def z_value(confidence: float) -> float:
    """Two-sided normal quantile ``Phi^-1(1 - alpha/2)`` for ``confidence = 1 - alpha``."""
    return float(norm.ppf(0.5 + check_confidence(confidence) / 2.0))


class _Cells(Protocol):
    """The four cells of a judge-vs-human table (read-only is enough)."""

    @property
    def tp(self) -> int: ...
    @property
    def fn(self) -> int: ...
    @property
    def fp(self) -> int: ...
    @property
    def tn(self) -> int: ...


class HumanMargins:
    """Mixin: the human-pass and human-fail margins of a table with ``tp``, ``fn``, ``fp``, ``tn``.

    Shared by :class:`ConfusionMatrix` and the judge card's stored counts, so both say the same
    thing by ``m1`` and ``m0``.
    """

    @property
    def m1(self: _Cells) -> int:
        """Human-pass rows used (``tp + fn``)."""
        return self.tp + self.fn

    @property
    def m0(self: _Cells) -> int:
        """Human-fail rows used (``tn + fp``)."""
        return self.tn + self.fp


@dataclass(frozen=True)
class ConfusionMatrix(HumanMargins, _ToDict):
    """Judge-vs-human counts on rows where both gave pass/fail.

    Attributes:
        tp: Human pass, judge pass.
        fn: Human pass, judge fail.
        fp: Human fail, judge pass.
        tn: Human fail, judge fail.
        n_rows: All rows passed in, including excluded ones.
        n_human_undecided: Rows excluded because the human verdict was not pass/fail
            (unsure, unscored or missing).
        n_judge_unscored: Rows with a human pass/fail but no judge pass/fail verdict.
    """

    tp: int
    fn: int
    fp: int
    tn: int
    n_rows: int = 0
    n_human_undecided: int = 0
    n_judge_unscored: int = 0

    @property
    def n(self) -> int:
        """Rows used (both verdicts pass/fail)."""
        return self.tp + self.fn + self.fp + self.tn

    def as_array(self) -> npt.NDArray[np.int64]:
        """Return ``[[tn, fp], [fn, tp]]``: rows = human fail/pass, columns = judge fail/pass.

        This is the layout of ``sklearn.metrics.confusion_matrix(human, judge, labels=[0, 1])``.
        """
        return np.array([[self.tn, self.fp], [self.fn, self.tp]], dtype=np.int64)

    def to_dict(self) -> dict[str, Any]:
        """Return counts plus ``n``, ``m0``, ``m1`` as a JSON-safe dict."""
        d = super().to_dict()
        d.update(n=self.n, m0=self.m0, m1=self.m1)
        return d


def confusion_matrix(
    human: PerRow, judge: PerRow
) -> ConfusionMatrix:
    """Count judge-vs-human agreement on aligned rows, excluding undecided ones.

    Args:
        human: Human verdicts (``"pass"``/``"fail"``/``"unsure"``/... or 1/0/bool), one per row.
        judge: Judge verdicts for the same rows, same length.

    Returns:
        A :class:`ConfusionMatrix` with the exclusion counts.

    Raises:
        CalibrationInputError: On mismatched lengths or unknown verdicts.

    Examples:
        >>> cm = confusion_matrix(["pass", "pass", "fail", "unsure"],
        ...                       ["pass", "fail", "pass", "pass"])
        >>> (cm.tp, cm.fn, cm.fp, cm.tn, cm.n_human_undecided)
        (1, 1, 1, 0, 1)
    """
    h = normalize_verdicts(human)
    j = normalize_verdicts(judge)
    if h.shape != j.shape:
        raise CalibrationInputError(
            f"human and judge verdicts must be aligned: {h.shape[0]} vs {j.shape[0]} rows"
        )
    return _confusion_from_codes(h, j)


def _confusion_from_codes(h: npt.NDArray[np.int8], j: npt.NDArray[np.int8]) -> ConfusionMatrix:
    h_dec = (h == PASS) | (h == FAIL)
    j_dec = (j == PASS) | (j == FAIL)
    both = h_dec & j_dec
    # Encode (human, judge) as 2*h + j over used rows: 0=tn, 1=fp, 2=fn, 3=tp.
    counts = np.bincount((2 * h[both] + j[both]).astype(np.int64), minlength=4)
    return ConfusionMatrix(
        tp=int(counts[3]),
        fn=int(counts[2]),
        fp=int(counts[1]),
        tn=int(counts[0]),
        n_rows=int(h.shape[0]),
        n_human_undecided=int((~h_dec).sum()),
        n_judge_unscored=int((h_dec & ~j_dec).sum()),
    )


def wilson_interval(
    successes: int, n: int, *, confidence: float = 0.95, method: str = "wilson"
) -> Estimate:
    """Proportion ``successes / n`` with a Wilson score interval (statsmodels).

    Args:
        successes: Number of successes, ``0 <= successes <= n``.
        n: Number of trials.
        confidence: Two-sided confidence level.
        method: Interval method passed to ``statsmodels`` ``proportion_confint``; ``"wilson"``
            (default) or ``"beta"`` (Clopper-Pearson). Never its Wald default.

    Returns:
        An :class:`Estimate`; refused when ``n == 0``.

    Examples:
        >>> e = wilson_interval(8, 10)
        >>> round(e.estimate, 3), round(e.low, 4), round(e.high, 4)
        (0.8, 0.4902, 0.9433)
    """
    conf = check_confidence(confidence)
    if n < 0 or successes < 0 or successes > n:
        raise CalibrationInputError(f"need 0 <= successes <= n, got {successes} of {n}")
    if method not in ("wilson", "beta"):
        raise CalibrationInputError(f"method must be 'wilson' or 'beta', got {method!r}")
    if n == 0:
        return Estimate.refusal("no rows", n=0, method=method, confidence=conf)
    lo, hi = proportion_confint(successes, n, alpha=1.0 - conf, method=method)
    est = successes / n
    return Estimate(
        estimate=est,
        # Both intervals contain k/n mathematically; the min/max only absorbs rounding at 0/n, n/n.
        low=float(min(est, max(0.0, lo))),
        high=float(max(est, min(1.0, hi))),
        n=int(n),
        method=method,
        confidence=conf,
    )


@dataclass(frozen=True)
class JudgeRates(_ToDict):
    """Error rates of a judge against human labels, each with a Wilson interval.

    Attributes:
        confusion: The counts they are computed from.
        sensitivity: TPR = tp / m1 (Wilson).
        specificity: TNR = tn / m0 (Wilson).
        fpr: FPR = fp / m0 (Wilson).
        fnr: FNR = fn / m1 (Wilson).
        accuracy: (tp + tn) / n (Wilson).
        balanced_accuracy: (TPR + TNR) / 2 with a Newcombe (MOVER-Wilson) interval.
        youden: TPR + TNR - 1 = TPR - FPR with the Newcombe hybrid-score interval for the
            difference of two independent proportions.
    """

    confusion: ConfusionMatrix
    sensitivity: Estimate
    specificity: Estimate
    fpr: Estimate
    fnr: Estimate
    accuracy: Estimate
    balanced_accuracy: Estimate
    youden: Estimate


def youden_interval(tp: int, m1: int, fp: int, m0: int, *, confidence: float = 0.95) -> Estimate:
    """Youden index ``J = TPR - FPR`` with Newcombe's hybrid score (MOVER-Wilson) interval.

    Args:
        tp: Human-pass rows the judge passed.
        m1: Human-pass rows.
        fp: Human-fail rows the judge passed.
        m0: Human-fail rows.
        confidence: Two-sided confidence level.

    Returns:
        An :class:`Estimate` of ``J`` (refused when ``m0`` or ``m1`` is zero).
    """
    conf = check_confidence(confidence)
    method = "newcombe-wilson"
    if m1 == 0 or m0 == 0:
        missing = "passing" if m1 == 0 else "failing"
        return Estimate.refusal(
            f"no human-{missing} rows: label at least one failing and one passing row",
            n=m0 + m1,
            method=method,
            confidence=conf,
        )
    lo, hi = confint_proportions_2indep(
        tp, m1, fp, m0, method="newcomb", compare="diff", alpha=1.0 - conf
    )
    return Estimate(
        estimate=tp / m1 - fp / m0,
        low=float(lo),
        high=float(hi),
        n=m0 + m1,
        method=method,
        confidence=conf,
    )


def rates_from_confusion(cm: ConfusionMatrix, *, confidence: float = 0.95) -> JudgeRates:
    """Compute :class:`JudgeRates` from a :class:`ConfusionMatrix`.

    Balanced accuracy is ``(1 + J) / 2`` with ``J`` the Youden index; its interval is the
    Newcombe (1998, method 10) square-and-add combination of the two Wilson intervals of TPR and
    FPR, mapped through ``(1 + J) / 2``. This keeps the two classes independent (they are
    separate binomials) and inherits Wilson's behaviour near 0 and 1.

    Args:
        cm: Confusion counts.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`JudgeRates`.
    """
    conf = check_confidence(confidence)
    refuse_m1 = "no human-pass rows: label at least one passing row"
    refuse_m0 = "no human-fail rows: label at least one failing row"

    def rate(k: int, n: int, why: str) -> Estimate:
        if n == 0:
            return Estimate.refusal(why, n=0, method="wilson", confidence=conf)
        return wilson_interval(k, n, confidence=conf)

    youden = youden_interval(cm.tp, cm.m1, cm.fp, cm.m0, confidence=conf)
    if youden.refused or youden.estimate is None or youden.low is None or youden.high is None:
        bal = Estimate.refusal(
            youden.reason or "undefined", n=cm.n, method="newcombe-wilson", confidence=conf
        )
    else:
        bal = Estimate(
            estimate=(1.0 + youden.estimate) / 2.0,
            low=(1.0 + youden.low) / 2.0,
            high=(1.0 + youden.high) / 2.0,
            n=cm.n,
            method="newcombe-wilson",
            confidence=conf,
        )
    return JudgeRates(
        confusion=cm,
        sensitivity=rate(cm.tp, cm.m1, refuse_m1),
        specificity=rate(cm.tn, cm.m0, refuse_m0),
        fpr=rate(cm.fp, cm.m0, refuse_m0),
        fnr=rate(cm.fn, cm.m1, refuse_m1),
        accuracy=rate(cm.tp + cm.tn, cm.n, "no rows with both a human and a judge verdict"),
        balanced_accuracy=bal,
        youden=youden,
    )


def judge_rates(
    human: PerRow, judge: PerRow,
    *, confidence: float = 0.95,
) -> JudgeRates:
    """Sensitivity, specificity, FPR, FNR, accuracy, balanced accuracy and Youden of a judge.

    Args:
        human: Human verdicts, one per labelled row.
        judge: Judge verdicts on the same rows.
        confidence: Two-sided confidence level of every interval.

    Returns:
        A :class:`JudgeRates` (individual rates are refused when their denominator is zero).

    Examples:
        >>> r = judge_rates([1, 1, 1, 0, 0], [1, 1, 0, 0, 1])
        >>> round(r.sensitivity.estimate, 3), round(r.fpr.estimate, 3)
        (0.667, 0.5)
    """
    return rates_from_confusion(confusion_matrix(human, judge), confidence=confidence)
