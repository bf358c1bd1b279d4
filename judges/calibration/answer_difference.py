"""Two versions of a system judged on the same rows: the paired difference of their pass rates.

Beside :mod:`.answer` (one version's answer): a comparison takes the two versions' own answers
from :func:`~judges.calibration.answer_pass_rate` and adds the difference, whose interval needs
the judge's error rates transferred from the calibration labels in the strata the answer uses
for a target that is another run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._results import _refused
from .answer_strata import evidence_strata
from .evidence import CalibrationEvidence
from .paired import DifferenceEstimate, JudgeErrorRates, PairedComparison, paired_difference
from .transport import TransferredRates, error_rates

if TYPE_CHECKING:
    from .answer import PassRateAnswer

__all__ = ["answer_difference", "transferred_error_rates"]


def transferred_error_rates(evidence: CalibrationEvidence) -> TransferredRates | None:
    """The error rates the separate-calibration answer transfers, with their covariance.

    ``a = P(judge pass | human pass)`` and ``b = P(judge pass | human fail)`` over the
    calibration rows the judge ran on (not judged is an outcome: it is "not pass"), in the
    strata :func:`answer_pass_rate` uses for a target that is another run. ``None`` when they
    cannot be estimated (a class or a judged stratum without labels).
    """
    return error_rates(evidence_strata(evidence, same_run=False).counts)


def answer_difference(
    evidence: CalibrationEvidence,
    baseline: npt.ArrayLike,
    candidate: npt.ArrayLike,
    *,
    answers: tuple[PassRateAnswer, PassRateAnswer],
    documents: npt.ArrayLike | None = None,
    segments: npt.ArrayLike | None = None,
    confidence: float = 0.95,
) -> PairedComparison:
    """Two versions judged on the same rows: each one's answer and their paired difference.

    The difference is Fieller's interval over the paired change in the judge's pass indicator
    (a row the judge did not judge is "not pass", the third outcome the transferred error rates
    include) and the evidence's verdict-reweighted error rates
    (:func:`transferred_error_rates`), valid however the calibration labels were drawn. Each
    version's pass rate is its own answer (``answers``, from :func:`answer_pass_rate` on the
    paired rows), so a comparison shows what ``score`` shows for either file.

    Args:
        evidence: The calibration evidence.
        baseline: The judge's verdict per paired row on the baseline's answers.
        candidate: The same on the candidate's answers (aligned with ``baseline``).
        answers: The two versions' answers on the paired rows.
        documents: Source document per paired row (rows of one document are a cluster).
        segments: Segment per paired row (each segment compared too).
        confidence: Two-sided level.

    Returns:
        The comparison. When the error rates cannot be estimated (a class or a judged stratum
        without labels) the difference is refused with the reason, as both versions' pass rates
        are; the paired table and McNemar's test, which need no calibration, stay.
    """
    rates = transferred_error_rates(evidence)
    n_labelled = int((evidence.labelled.human >= 0).sum())
    if rates is None:
        # The paired counts and McNemar's test need no error rates: any rates give them.
        error = JudgeErrorRates(1.0, 1.0, 0.0, 0.0, n_labelled=n_labelled)
    else:
        cov = rates.cov
        error = JudgeErrorRates(
            sensitivity=rates.a_smoothed, specificity=1.0 - rates.b_smoothed,
            var_sensitivity=float(cov[0, 0]), var_specificity=float(cov[1, 1]),
            covariance=-float(cov[0, 1]), n_labelled=n_labelled, method="verdict-reweighted",
        )  # fmt: skip

    def pass_or_not(v: npt.ArrayLike) -> npt.NDArray[Any]:
        return np.where(np.asarray(v, dtype=object) == "pass", "pass", "fail")

    result = paired_difference(
        pass_or_not(baseline), pass_or_not(candidate), calibration=error,
        documents=documents, segments=segments, confidence=confidence,
        youden_point=None if rates is None else rates.a - rates.b,
    )  # fmt: skip
    if rates is None:
        reason = ("the judge's error rates cannot be estimated from the calibration labels "
                  "(a human class, or a judge-verdict stratum, without labels)")

        def refuse(c: PairedComparison) -> PairedComparison:
            d = c.difference
            return replace(c, difference=_refused(
                DifferenceEstimate, reason, n=d.n, method=d.method, confidence=d.confidence,
                n_labelled=n_labelled))  # fmt: skip

        result = replace(refuse(result), segments=tuple(refuse(c) for c in result.segments))
    return replace(result, baseline=answers[0].headline, candidate=answers[1].headline,
                   warnings=tuple(w for w in result.warnings
                                  if "corrected pass rate refused" not in w))
