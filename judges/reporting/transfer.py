"""The stable JSON form of the transfer check (the ``transfer`` key of ``docs/report-json.md``).

The check itself runs in the one estimation path
(:func:`judges.calibration.answer_pass_rate`), on the rows the headline correction uses.
"""

from __future__ import annotations

from typing import Any

from judges.calibration import TransferDiagnostics, interval_json

__all__ = ["transfer_json"]


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
