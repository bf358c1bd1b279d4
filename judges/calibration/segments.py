"""Per-segment breakdowns (topic, language, product area, ...) of judge quality and pass rate.

Segments are grouped once with vectorised numpy (``np.unique`` + ``np.bincount``); each
segment's statistics are then computed from its counts, so a million target rows cost one
grouping pass. Integer segment codes group faster than strings.

Small segments get wide intervals or refusals (e.g. no failing labels in a segment): that is
the honest answer, not a bug. Intervals are per segment, not adjusted for multiplicity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, Estimate, PassRateEstimate, _ToDict
from ._verdicts import FAIL, PASS, normalize_verdicts
from .agreement import kappa_from_table
from .pass_rate import (
    CalibrationCounts,
    Design,
    corrected_pass_rate_from_counts,
    estimate_pass_rate,
)
from .rates import ConfusionMatrix, JudgeRates, check_confidence, rates_from_confusion

__all__ = ["SegmentResult", "segment_breakdown"]


@dataclass(frozen=True)
class SegmentResult(_ToDict):
    """Statistics for one segment.

    Attributes:
        segment: Segment label (as a string).
        n_labelled: Labelled rows with human and judge pass/fail in this segment.
        n_target: Scored target rows in this segment.
        confusion: Judge-vs-human counts.
        sensitivity: TPR (Wilson).
        specificity: TNR (Wilson).
        fpr: FPR (Wilson).
        kappa: Cohen's kappa (statsmodels SE).
        naive: Judge pass rate on the segment's target rows (Wilson), ``None`` without targets.
        pass_rate: Corrected pass rate by the design's estimator, ``None`` without targets.
    """

    segment: str
    n_labelled: int
    n_target: int
    confusion: ConfusionMatrix
    sensitivity: Estimate
    specificity: Estimate
    fpr: Estimate
    kappa: Estimate
    naive: PassRateEstimate | None
    pass_rate: PassRateEstimate | None


class _TableStatistics(NamedTuple):
    rates: JudgeRates
    kappa: Estimate
    naive: PassRateEstimate
    corrected: PassRateEstimate


def _table_statistics(
    counts: CalibrationCounts, *, design: Design | str, confidence: float
) -> _TableStatistics:
    """Judge rates, kappa, naive and design-corrected pass rate of one counts table.

    What a report shows for the whole labelled set (:func:`~judges.calibration.build_summary`)
    and for each segment (:func:`segment_breakdown`).
    """
    rates, kappa = _agreement(counts.confusion, confidence=confidence)
    return _TableStatistics(
        rates=rates, kappa=kappa,
        naive=estimate_pass_rate(counts, method="naive", confidence=confidence),
        corrected=corrected_pass_rate_from_counts(counts, design=design, confidence=confidence),
    )


def _agreement(cm: ConfusionMatrix, *, confidence: float) -> tuple[JudgeRates, Estimate]:
    """The judge's rates and kappa of one confusion matrix."""
    return (rates_from_confusion(cm, confidence=confidence),
            kappa_from_table(cm.as_array(), confidence=confidence))


def _as_labels(x: npt.ArrayLike | Sequence[Any], n: int, name: str) -> npt.NDArray[Any]:
    arr = np.asarray(x)
    if arr.shape != (n,):
        raise CalibrationInputError(f"{name} must have one entry per row ({n}), got {arr.shape}")
    if arr.dtype.kind in "OUS":
        arr = arr.astype(str)
    return arr


def _segment_index(
    seg_l: npt.NDArray[Any], seg_t: npt.NDArray[Any] | None
) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64], npt.NDArray[np.int64] | None]:
    uniq_l, inv_l = np.unique(seg_l, return_inverse=True)
    if seg_t is None:
        return uniq_l, inv_l.astype(np.int64), None
    if (seg_l.dtype.kind == "U") != (seg_t.dtype.kind == "U"):
        seg_l, seg_t = seg_l.astype(str), seg_t.astype(str)
        uniq_l, inv_l = np.unique(seg_l, return_inverse=True)
    uniq_t, inv_t = np.unique(seg_t, return_inverse=True)
    union = np.union1d(uniq_l, uniq_t)
    map_l = np.searchsorted(union, uniq_l)
    map_t = np.searchsorted(union, uniq_t)
    return union, map_l[inv_l].astype(np.int64), map_t[inv_t].astype(np.int64)


def _segments_from_codes(
    h: npt.NDArray[np.int8],
    jl: npt.NDArray[np.int8],
    seg_l: npt.NDArray[Any],
    jt: npt.NDArray[np.int8] | None,
    seg_t: npt.NDArray[Any] | None,
    *,
    design: Design | str,
    confidence: float,
) -> tuple[SegmentResult, ...]:
    labels, idx_l, idx_t = _segment_index(seg_l, seg_t)
    g = labels.shape[0]
    h_dec = (h == PASS) | (h == FAIL)
    j_dec = (jl == PASS) | (jl == FAIL)
    both = h_dec & j_dec
    cell = 2 * h[both].astype(np.int64) + jl[both]  # 0=tn 1=fp 2=fn 3=tp
    cells = np.bincount(idx_l[both] * 4 + cell, minlength=4 * g).reshape(g, 4)
    undecided = np.bincount(idx_l[~h_dec], minlength=g)
    unscored = np.bincount(idx_l[h_dec & ~j_dec], minlength=g)
    rows_l = np.bincount(idx_l, minlength=g)
    if jt is not None and idx_t is not None:
        t_pass = np.bincount(idx_t[jt == PASS], minlength=g)
        t_dec = np.bincount(idx_t[(jt == PASS) | (jt == FAIL)], minlength=g)
        t_rows = np.bincount(idx_t, minlength=g)
    out = []
    for s in range(g):
        cm = ConfusionMatrix(
            tp=int(cells[s, 3]),
            fn=int(cells[s, 2]),
            fp=int(cells[s, 1]),
            tn=int(cells[s, 0]),
            n_rows=int(rows_l[s]),
            n_human_undecided=int(undecided[s]),
            n_judge_unscored=int(unscored[s]),
        )
        n_target = 0
        naive = pass_rate = None
        if jt is None:  # without target rows there is no pass rate to show (or compute)
            rates, kappa = _agreement(cm, confidence=confidence)
        else:
            n_target = int(t_dec[s])
            counts = CalibrationCounts(cm, int(t_pass[s]), n_target, int(t_rows[s] - t_dec[s]))
            rates, kappa, naive, pass_rate = _table_statistics(
                counts, design=design, confidence=confidence)
        out.append(
            SegmentResult(
                segment=str(labels[s]),
                n_labelled=cm.n,
                n_target=n_target,
                confusion=cm,
                sensitivity=rates.sensitivity,
                specificity=rates.specificity,
                fpr=rates.fpr,
                kappa=kappa,
                naive=naive,
                pass_rate=pass_rate,
            )
        )
    return tuple(out)


def segment_breakdown(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    *,
    segments_labelled: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any] | None = None,
    segments_target: npt.ArrayLike | Sequence[Any] | None = None,
    design: Design | str = "separate_calibration",
    confidence: float = 0.95,
) -> tuple[SegmentResult, ...]:
    """Sensitivity, FPR, kappa and corrected pass rate per segment.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same rows.
        segments_labelled: Segment label per labelled row.
        judge_target: Judge verdicts on the target rows (optional; needed for pass rates).
        segments_target: Segment label per target row (required with ``judge_target``).
        design: Sampling design for the corrected pass rate (see
            :func:`~judges.calibration.choose_method`).
        confidence: Two-sided confidence level.

    Returns:
        One :class:`SegmentResult` per segment present in either input, sorted by label.

    Examples:
        >>> res = segment_breakdown([1, 1, 0, 0], [1, 0, 0, 0],
        ...                         segments_labelled=["x", "x", "y", "y"])
        >>> [(r.segment, r.n_labelled) for r in res]
        [('x', 2), ('y', 2)]
    """
    conf = check_confidence(confidence)
    h = normalize_verdicts(human)
    jl = normalize_verdicts(judge_labelled)
    if h.shape != jl.shape:
        raise CalibrationInputError("human and judge_labelled must be aligned")
    seg_l = _as_labels(segments_labelled, h.shape[0], "segments_labelled")
    jt = seg_t = None
    if judge_target is not None:
        jt = normalize_verdicts(judge_target)
        if segments_target is None:
            raise CalibrationInputError("segments_target is required with judge_target")
        seg_t = _as_labels(segments_target, jt.shape[0], "segments_target")
    return _segments_from_codes(h, jl, seg_l, jt, seg_t, design=design, confidence=conf)
