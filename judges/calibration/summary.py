"""One pure function that computes everything a calibration report shows.

:func:`build_summary` takes aligned arrays — human and judge verdicts on the labelled rows, judge
verdicts on the target rows, and optionally segment labels and document ids — and returns a
:class:`CalibrationSummary`. No I/O: the caller joins rows by item id before calling.

It is vectorised end to end (verdict normalisation, counting, segment grouping); 1,000,000
target verdicts and 10,000 labels take well under 2 s (see ``bench/coverage.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, Estimate, PassRateEstimate, _ToDict
from ._verdicts import labelled_codes, normalize_verdicts
from .counts import _counts_from_codes
from .pass_rate import CalibrationCounts, Design, choose_method, estimate_pass_rate
from .rates import JudgeRates, check_confidence
from .resampling import clustered_agreement
from .segments import SegmentResult, _as_labels, _segments_from_codes, _table_statistics

__all__ = ["CalibrationSummary", "build_summary"]


@dataclass(frozen=True)
class CalibrationSummary(_ToDict):
    """Everything a calibration page or ``calibrate report`` shows.

    Attributes:
        confidence: Level of every interval.
        design: Sampling design the corrected pass rate was chosen for.
        counts: Labelled confusion counts, target pass count, exclusions.
        rates: Sensitivity, specificity, FPR, FNR, accuracy, balanced accuracy, Youden.
        kappa: Cohen's kappa, judge vs human.
        naive: Uncorrected judge pass rate on the target rows.
        corrected: The design's estimator (``method``, ``assumption`` and ``design`` recorded).
        estimators: Every estimator by name (``lee``, ``ppi++``, ``stratified``,
            ``labels_only``), each with its own assumption, for side-by-side display.
        segments: Per-segment breakdown (empty without segment labels).
        clustered: Document-clustered bootstrap intervals (``None`` without document ids).
        warnings: Report-level caveats (exclusions, refusals, clustering).
    """

    confidence: float
    design: str
    counts: CalibrationCounts
    rates: JudgeRates
    kappa: Estimate
    naive: PassRateEstimate
    corrected: PassRateEstimate
    estimators: Mapping[str, PassRateEstimate]
    segments: tuple[SegmentResult, ...]
    clustered: Mapping[str, Estimate] | None
    warnings: tuple[str, ...]


def build_summary(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any],
    *,
    design: Design | str = "separate_calibration",
    segments_labelled: npt.ArrayLike | Sequence[Any] | None = None,
    segments_target: npt.ArrayLike | Sequence[Any] | None = None,
    doc_ids: npt.ArrayLike | Sequence[Any] | None = None,
    rng: np.random.Generator | None = None,
    n_boot: int = 2000,
    confidence: float = 0.95,
) -> CalibrationSummary:
    """Compute a full calibration report from aligned verdict arrays.

    Args:
        human: Human verdicts on the labelled rows (``"pass"``/``"fail"``/``"unsure"``/... or
            1/0/bool).
        judge_labelled: Judge verdicts on the same labelled rows.
        judge_target: Judge verdicts on the target rows (the run whose pass rate is reported).
        design: How the labelled rows were drawn: ``"separate_calibration"`` (default; Lee,
            valid for any random calibration set whose error rates transfer),
            ``"same_run_random"`` or ``"same_run_stratified"`` (see
            :func:`~judges.calibration.choose_method`).
        segments_labelled: Segment label per labelled row (optional).
        segments_target: Segment label per target row (optional; enables per-segment pass
            rates).
        doc_ids: Source-document id per labelled row (optional); enables a document-clustered
            bootstrap (requires ``rng``).
        rng: Explicit random generator for the clustered bootstrap.
        n_boot: Clustered bootstrap replicates.
        confidence: Two-sided confidence level of every interval.

    Returns:
        A :class:`CalibrationSummary`.

    Examples:
        >>> r = build_summary(["pass"] * 30 + ["fail"] * 20,
        ...                  ["pass"] * 27 + ["fail"] * 3 + ["pass"] * 4 + ["fail"] * 16,
        ...                  ["pass"] * 600 + ["fail"] * 400)
        >>> r.corrected.method, round(r.corrected.estimate, 4), round(r.naive.estimate, 2)
        ('lee', 0.5714, 0.6)
    """
    conf = check_confidence(confidence)
    choose_method(design)
    h, jl = labelled_codes(human, judge_labelled)
    jt = normalize_verdicts(judge_target)
    counts = _counts_from_codes(h, jl, jt)
    rates, kappa, naive, corrected = _table_statistics(counts, design=design, confidence=conf)
    estimators = {
        m: estimate_pass_rate(counts, method=m, confidence=conf)
        for m in ("lee", "ppi++", "stratified", "labels_only")
    }

    segments: tuple[SegmentResult, ...] = ()
    if segments_labelled is not None:
        seg_l = _as_labels(segments_labelled, h.shape[0], "segments_labelled")
        seg_t = None
        if segments_target is not None:
            seg_t = _as_labels(segments_target, jt.shape[0], "segments_target")
        segments = _segments_from_codes(
            h,
            jl,
            seg_l,
            jt if seg_t is not None else None,
            seg_t,
            design=design,
            confidence=conf,
        )
    elif segments_target is not None:
        raise CalibrationInputError("segments_target needs segments_labelled")

    warnings = [f"{n} {rows} rows excluded ({why})" for n, rows, why in counts.exclusions()]
    if corrected.refused:
        warnings.append(f"corrected pass rate refused: {corrected.reason}")
    elif corrected.uninformative:
        warnings.append(
            "corrected pass rate uninformative: the judge is not shown to be better than chance"
        )

    clustered: Mapping[str, Estimate] | None = None
    if doc_ids is not None:
        if rng is None:
            raise CalibrationInputError("doc_ids given: pass rng=np.random.default_rng(seed)")
        docs = _as_labels(doc_ids, h.shape[0], "doc_ids")
        clustered = clustered_agreement(
            h,
            jl,
            docs,
            rng=rng,
            n_boot=n_boot,
            confidence=conf,
            k_target=counts.k_target,
            n_target=counts.n_target,
        )
        cs, rs = clustered.get("sensitivity"), rates.sensitivity
        if cs is not None and cs.width and rs.width and cs.width > 1.25 * rs.width:
            warnings.append(
                "labelled rows cluster by document: the document-clustered sensitivity "
                f"interval is {cs.width / rs.width:.1f}x wider than the row-level one; prefer "
                "the clustered intervals"
            )
    return CalibrationSummary(
        confidence=conf,
        design=str(design),
        counts=counts,
        rates=rates,
        kappa=kappa,
        naive=naive,
        corrected=corrected,
        estimators=estimators,
        segments=segments,
        clustered=clustered,
        warnings=tuple(warnings),
    )
