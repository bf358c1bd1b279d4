"""The transfer check of a separate-calibration report: segment mix, segment accuracy, a fix.

When the target is another dataset and rows carry segments, :func:`transfer_check` runs
:func:`judges.calibration.transfer_diagnostics` on the same rows the headline correction uses
(labelled rows the judge ran on, every judged row of the calibration dataset, every row of the
target the judge ran on), and :func:`transfer_json` gives its stable JSON form (the ``transfer``
key of ``docs/report-json.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from judges.calibration import TransferDiagnostics, interval_json, transfer_diagnostics

__all__ = ["transfer_check", "transfer_json"]


def transfer_check(
    *,
    labelled: pd.DataFrame,
    dataset_segments: Mapping[str, Any],
    dataset_verdicts: Mapping[str, str],
    target_segments: Mapping[str, Any],
    target_verdicts: Mapping[str, str],
    no_segment: str,
    confidence: float,
    seed: int,
) -> TransferDiagnostics | None:
    """Transfer diagnostics of a report whose target is another dataset.

    Args:
        labelled: Labelled rows with ``human``, ``judge`` (``NaN`` where the judge did not
            run) and ``segment``.
        dataset_segments: Item id -> segment of every row of the calibration dataset.
        dataset_verdicts: Item id -> the judge's verdict on the calibration dataset.
        target_segments: Item id -> segment of the target (every row: the mix test uses them
            all, judged or not).
        target_verdicts: Item id -> the judge's verdict on the target.
        no_segment: Label of rows without a segment.
        confidence: Level of the rates and of the segment-aware corrected pass rate.
        seed: Seed of the exact tests.

    Returns:
        The diagnostics, or ``None`` when no row of either dataset carries a segment.
    """

    def segs(ids: Any, table: Mapping[str, Any]) -> np.ndarray:
        values = pd.Series([table.get(i) for i in ids], dtype=object)
        return values.where(values.notna(), no_segment).astype(str).to_numpy()

    ran = labelled[labelled["judge"].notna()]
    cal_ids, tgt_ids = list(dataset_verdicts), list(target_verdicts)
    seg_l = ran["segment"].where(ran["segment"].notna(), no_segment).astype(str).to_numpy()
    seg_c, seg_t = segs(cal_ids, dataset_segments), segs(tgt_ids, target_segments)
    if {*seg_c, *seg_t} <= {no_segment}:
        return None
    return transfer_diagnostics(
        ran["human"].to_numpy(dtype=object), ran["judge"].to_numpy(dtype=object), seg_l,
        np.array([dataset_verdicts[i] for i in cal_ids], dtype=object), seg_c,
        np.array([target_verdicts[i] for i in tgt_ids], dtype=object), seg_t,
        confidence=confidence, rng=np.random.default_rng(seed),
        mix_rows=(segs(list(dataset_segments), dataset_segments),
                  segs(list(target_segments), target_segments)),
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
