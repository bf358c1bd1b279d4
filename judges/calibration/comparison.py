"""Comparing judges on the same labelled rows: exact McNemar test and a leaderboard.

Two judges scored on the same rows are compared with a paired test, which needs far fewer rows
than comparing two independent accuracies (STATS.md §6): only rows where exactly one judge is
right carry information.

References:
    McNemar, Q. (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. Psychometrika 12, 153-157.
    Agresti, A. & Min, Y. (2005). Simple improved confidence intervals for comparing matched
    proportions. Statistics in Medicine 24, 729-740.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from statsmodels.stats.contingency_tables import mcnemar as _sm_mcnemar

from ._results import CalibrationInputError, Estimate, _ToDict
from ._verdicts import PerRow, normalize_verdicts
from .agreement import kappa_from_table
from .rates import _confusion_from_codes, check_confidence, rates_from_confusion, z_value

__all__ = ["LeaderboardRow", "McNemarResult", "leaderboard", "mcnemar_test"]


@dataclass(frozen=True)
class McNemarResult(_ToDict):
    """Exact McNemar test of judge A vs judge B against human labels.

    Attributes:
        n: Rows used (human pass/fail and both judges pass/fail).
        n_excluded: Rows excluded (human undecided or either judge unscored).
        n_both_right: Both judges agree with the human.
        n_a_only: Only judge A agrees with the human.
        n_b_only: Only judge B agrees with the human.
        n_both_wrong: Neither agrees.
        statistic: ``min(n_a_only, n_b_only)`` (the exact test's statistic), ``None`` if refused.
        pvalue: Two-sided exact binomial p-value on the discordant rows, ``None`` if refused.
        accuracy_a: Judge A accuracy on the rows used.
        accuracy_b: Judge B accuracy on the rows used.
        difference: ``accuracy_a - accuracy_b`` with the Agresti-Min (2005) paired interval.
        refused: ``True`` when no row is usable.
        reason: Why refused.
    """

    n: int
    n_excluded: int
    n_both_right: int
    n_a_only: int
    n_b_only: int
    n_both_wrong: int
    statistic: float | None
    pvalue: float | None
    accuracy_a: float | None
    accuracy_b: float | None
    difference: Estimate
    refused: bool = False
    reason: str | None = None


def _mcnemar_codes(
    h: npt.NDArray[np.int8], a: npt.NDArray[np.int8], b: npt.NDArray[np.int8], conf: float
) -> McNemarResult:
    ok = (h >= 0) & (a >= 0) & (b >= 0)
    a_right = a[ok] == h[ok]
    b_right = b[ok] == h[ok]
    n = int(ok.sum())
    n11 = int((a_right & b_right).sum())
    n10 = int((a_right & ~b_right).sum())
    n01 = int((~a_right & b_right).sum())
    n00 = n - n11 - n10 - n01
    if n == 0:
        reason = "no row with a human pass/fail verdict and a pass/fail verdict from both judges"
        return McNemarResult(
            0,
            int(h.shape[0]),
            0,
            0,
            0,
            0,
            None,
            None,
            None,
            None,
            Estimate.refusal(reason, n=0, method="agresti-min", confidence=conf),
            refused=True,
            reason=reason,
        )
    res = _sm_mcnemar(np.array([[n11, n10], [n01, n00]]), exact=True)
    # Agresti-Min: add 0.5 to every cell of the paired table.
    z = z_value(conf)
    nt = n + 2.0
    p10, p01 = (n10 + 0.5) / nt, (n01 + 0.5) / nt
    diff_t = p10 - p01
    se = math.sqrt(max(0.0, (p10 + p01 - diff_t**2) / nt))
    diff = Estimate(
        estimate=(n10 - n01) / n,
        low=max(-1.0, diff_t - z * se),
        high=min(1.0, diff_t + z * se),
        n=n,
        method="agresti-min",
        confidence=conf,
        se=se,
    )
    return McNemarResult(
        n=n,
        n_excluded=int(h.shape[0]) - n,
        n_both_right=n11,
        n_a_only=n10,
        n_b_only=n01,
        n_both_wrong=n00,
        statistic=float(res.statistic),
        pvalue=float(res.pvalue),
        accuracy_a=(n11 + n10) / n,
        accuracy_b=(n11 + n01) / n,
        difference=diff,
    )


def mcnemar_test(
    human: PerRow, judge_a: PerRow, judge_b: PerRow,
    *, confidence: float = 0.95,
) -> McNemarResult:
    """Exact McNemar test between two judges on the same labelled rows (statsmodels).

    Args:
        human: Human verdicts.
        judge_a: Judge A verdicts on the same rows.
        judge_b: Judge B verdicts on the same rows.
        confidence: Level of the accuracy-difference interval.

    Returns:
        A :class:`McNemarResult`.

    Examples:
        >>> h = [1] * 10
        >>> r = mcnemar_test(h, [1] * 10, [1] * 2 + [0] * 8)
        >>> r.n_a_only, r.n_b_only, round(r.pvalue, 4)
        (8, 0, 0.0078)
    """
    conf = check_confidence(confidence)
    h = normalize_verdicts(human)
    a = normalize_verdicts(judge_a)
    b = normalize_verdicts(judge_b)
    if not (h.shape == a.shape == b.shape):
        raise CalibrationInputError("human, judge_a and judge_b must be aligned (same length)")
    return _mcnemar_codes(h, a, b, conf)


@dataclass(frozen=True)
class LeaderboardRow(_ToDict):
    """One judge's line in :func:`leaderboard`.

    Attributes:
        rank: 1 = best by kappa.
        judge: Judge name.
        n: Rows used for this judge's rates.
        n_judge_unscored: Labelled rows this judge left unscored.
        kappa: Cohen's kappa vs human (statsmodels SE).
        sensitivity: TPR (Wilson).
        specificity: TNR (Wilson).
        fpr: FPR (Wilson).
        accuracy: Accuracy (Wilson).
        balanced_accuracy: Balanced accuracy (Newcombe).
        mcnemar_vs_best: Exact McNemar test of this judge vs the top-ranked one (``None`` for
            the top one); ``pvalue`` is the p-value vs the best.
    """

    rank: int
    judge: str
    n: int
    n_judge_unscored: int
    kappa: Estimate
    sensitivity: Estimate
    specificity: Estimate
    fpr: Estimate
    accuracy: Estimate
    balanced_accuracy: Estimate
    mcnemar_vs_best: McNemarResult | None

    @property
    def mcnemar_p_vs_best(self) -> float | None:
        """Exact McNemar p-value against the best judge (``None`` for the best)."""
        return None if self.mcnemar_vs_best is None else self.mcnemar_vs_best.pvalue


def leaderboard(
    human: PerRow, judges: Mapping[str, PerRow],
    *, confidence: float = 0.95,
) -> tuple[LeaderboardRow, ...]:
    """Rank judges on the same labelled rows by Cohen's kappa, with McNemar p vs the best.

    Judges whose kappa is refused (undefined) rank last; ties on kappa are broken by accuracy,
    then by name.

    Args:
        human: Human verdicts.
        judges: Judge name -> verdicts on the same rows.
        confidence: Level of every interval.

    Returns:
        Rows sorted best first.
    """
    conf = check_confidence(confidence)
    h = normalize_verdicts(human)
    if not judges:
        raise CalibrationInputError("judges must name at least one judge")
    codes: dict[str, npt.NDArray[np.int8]] = {}
    stats: dict[str, tuple[Any, Estimate]] = {}
    for name, verdicts in judges.items():
        j = normalize_verdicts(verdicts)
        if j.shape != h.shape:
            raise CalibrationInputError(f"judge {name!r} has {j.shape[0]} rows, human {h.shape[0]}")
        codes[name] = j
        cm = _confusion_from_codes(h, j)
        stats[name] = (
            rates_from_confusion(cm, confidence=conf),
            kappa_from_table(cm.as_array(), confidence=conf),
        )

    def sort_key(name: str) -> tuple[int, float, float, str]:
        rates, kappa = stats[name]
        acc = rates.accuracy.estimate if rates.accuracy.estimate is not None else -1.0
        if kappa.estimate is None:
            return (1, 0.0, -acc, name)
        return (0, -kappa.estimate, -acc, name)

    order = sorted(codes, key=sort_key)
    best = order[0]
    rows = []
    for rank, name in enumerate(order, start=1):
        rates, kappa = stats[name]
        cm = rates.confusion
        rows.append(
            LeaderboardRow(
                rank=rank,
                judge=name,
                n=cm.n,
                n_judge_unscored=cm.n_judge_unscored,
                kappa=kappa,
                sensitivity=rates.sensitivity,
                specificity=rates.specificity,
                fpr=rates.fpr,
                accuracy=rates.accuracy,
                balanced_accuracy=rates.balanced_accuracy,
                mcnemar_vs_best=None
                if name == best
                else _mcnemar_codes(h, codes[name], codes[best], conf),
            )
        )
    return tuple(rows)
