"""The counts every pass-rate estimator works from: labelled confusion + target judge counts.

A million target verdicts reduce to a handful of integers with one vectorised normalisation and
a sum, so every estimator (:mod:`.estimators`) and every simulation works on
:class:`CalibrationCounts` rather than on verdict arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, _ToDict
from ._verdicts import FAIL, PASS, PerRow, labelled_codes, normalize_verdicts
from .rates import ConfusionMatrix, _confusion_from_codes

__all__ = ["CalibrationCounts", "calibration_counts"]


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

    def exclusions(self) -> tuple[tuple[int, str, str], ...]:
        """The rows left out and why, one ``(count, rows, reason)`` per non-empty group.

        The groups, in this order: ``"labelled"`` rows whose human verdict is not pass/fail
        (``"human unsure/unscored"``), ``"labelled"`` rows the judge did not score and
        ``"target"`` rows the judge did not score (both ``"judge unscored"``). Callers word
        their warnings from these, so every page names the same exclusions.

        Example:
            >>> cm = ConfusionMatrix(tp=5, fn=1, fp=1, tn=3, n_human_undecided=2)
            >>> CalibrationCounts(cm, k_target=4, n_target=9, n_target_unscored=1).exclusions()
            ((2, 'labelled', 'human unsure/unscored'), (1, 'target', 'judge unscored'))
        """
        cm = self.confusion
        groups = (
            (cm.n_human_undecided, "labelled", "human unsure/unscored"),
            (cm.n_judge_unscored, "labelled", "judge unscored"),
            (self.n_target_unscored, "target", "judge unscored"),
        )
        return tuple(g for g in groups if g[0])


def calibration_counts(
    human: PerRow, judge_labelled: PerRow, judge_target: PerRow,
) -> CalibrationCounts:
    """Normalise verdict arrays and reduce them to :class:`CalibrationCounts`.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same labelled rows.
        judge_target: Judge verdicts on the target rows (the run whose pass rate is wanted).

    Returns:
        The counts (vectorised; a million target verdicts take tens of milliseconds).
    """
    h, jl = labelled_codes(human, judge_labelled)
    jt = normalize_verdicts(judge_target)
    return _counts_from_codes(h, jl, jt)


def _counts_from_codes(
    h: npt.NDArray[np.int8], jl: npt.NDArray[np.int8], jt: npt.NDArray[np.int8]
) -> CalibrationCounts:
    k = int(np.count_nonzero(jt == PASS))
    n = k + int(np.count_nonzero(jt == FAIL))
    return CalibrationCounts(_confusion_from_codes(h, jl), k, n, int(jt.shape[0]) - n)
