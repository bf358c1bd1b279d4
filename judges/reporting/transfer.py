"""The transfer check of a separate-calibration report: segment mix, segment accuracy, a fix.

When the target is another dataset and rows carry segments, :func:`transfer_check` runs
:func:`judges.calibration.transfer_diagnostics` on the same rows the headline correction uses
(labelled rows the judge ran on, every judged row of the calibration dataset, every row of the
target the judge ran on), and :func:`transfer_json` gives its stable JSON form (the ``transfer``
key of ``docs/report-json.md``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.calibration import TransferDiagnostics, interval_json, transfer_diagnostics

__all__ = ["transfer_check", "transfer_json"]


def transfer_check(
    *,
    labelled: pd.DataFrame,
    dataset_segments: npt.ArrayLike,
    dataset_verdicts: npt.ArrayLike,
    target_segments: npt.ArrayLike,
    target_verdicts: npt.ArrayLike,
    no_segment: str,
    confidence: float,
    seed: int,
) -> TransferDiagnostics | None:
    """Transfer diagnostics of a report whose target is another dataset.

    Args:
        labelled: Labelled rows with ``human``, ``judge`` (``NaN`` where the judge did not
            run) and ``segment``.
        dataset_segments: The segment of every row of the calibration dataset, in file order
            (``None``/``NaN``: no segment).
        dataset_verdicts: The judge's verdict on each of those rows (``NaN``: not judged).
        target_segments: The segment of every row of the target (the mix test uses them all,
            judged or not).
        target_verdicts: The judge's verdict on each row of the target (``NaN``: not judged).
        no_segment: Label of rows without a segment.
        confidence: Level of the rates and of the segment-aware corrected pass rate.
        seed: Seed of the exact tests.

    Returns:
        The diagnostics, or ``None`` when no row of either dataset carries a segment.

    The per-row arrays are aligned by position (1 M rows are never looked up one by one).
    """

    def segs(values: npt.ArrayLike) -> npt.NDArray[Any]:
        series = pd.Series(np.asarray(values, dtype=object), dtype=object)
        return series.where(series.notna(), no_segment).astype(str).to_numpy()

    def judged(verdicts: npt.ArrayLike, segments: npt.NDArray[Any]) -> tuple[Any, Any]:
        values = np.asarray(verdicts, dtype=object)
        ran = pd.notna(values)
        return values[ran], segments[ran]

    ran = labelled[labelled["judge"].notna()]
    all_c, all_t = segs(dataset_segments), segs(target_segments)
    (verdicts_c, seg_c), (verdicts_t, seg_t) = (judged(dataset_verdicts, all_c),
                                                judged(target_verdicts, all_t))
    if {*np.unique(seg_c), *np.unique(seg_t)} <= {no_segment}:
        return None
    seg_l = ran["segment"].where(ran["segment"].notna(), no_segment).astype(str).to_numpy()
    return transfer_diagnostics(
        ran["human"].to_numpy(dtype=object), ran["judge"].to_numpy(dtype=object), seg_l,
        verdicts_c, seg_c, verdicts_t, seg_t,
        confidence=confidence, rng=np.random.default_rng(seed), mix_rows=(all_c, all_t),
    )  # fmt: skip


def transfer_json(d: TransferDiagnostics) -> dict[str, Any]:
    """The ``transfer`` object of the report JSON."""

    def test(t: Any) -> dict[str, Any]:
        return {"statistic": t.statistic, "df": t.df, "p_value": t.p_value, "method": t.method,
                "n": t.n}  # fmt: skip

    return {
        "alpha": d.alpha,
        "mix_test": test(d.mix_test),
        "mix_distance": d.mix_distance,
        "sensitivity_test": test(d.sensitivity_test),
        "fpr_test": test(d.fpr_test),
        "mix_differs": d.mix_differs,
        "accuracy_differs": d.accuracy_differs,
        "warning": d.warning,
        "segments": [
            {
                "segment": s.segment,
                "n": s.n_labelled,
                "calibration_share": s.calibration_share,
                "target_share": s.target_share,
                "sensitivity": interval_json(s.sensitivity),
                "fpr": interval_json(s.fpr),
                "group": s.group,
            }
            for s in d.segments
        ],
        "segment_aware_pass_rate": {
            **interval_json(d.segment_aware),
            "assumption": d.segment_aware.assumption,
            "groups": dict(d.segment_aware.params.get("groups", {})),
        },
    }
