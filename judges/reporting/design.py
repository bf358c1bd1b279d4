"""How many more labels would narrow the corrected pass rate to a wanted half-width.

:func:`plan_labels` plans the failing / passing rows from Lee et al.'s variance.

Which estimator the labels support is decided from their recorded provenance by
:func:`judges.calibration.answer_pass_rate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from judges.calibration import (
    AllocationGap,
    CalibrationInputError,
    LabelsNeeded,
    PassRateAnswer,
    allocation_gap,
    json_safe,
    labels_needed,
)

DEFAULT_HALF_WIDTH = 0.05


# -- planning -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """How many more labels would narrow the corrected pass rate to ``± target_half_width``.

    Attributes:
        target_half_width: The wanted half-width (e.g. 0.05).
        needed: Lee et al.'s delta-method plan (``None`` when it cannot be computed).
        gap: Achieved failing/passing split vs the variance-optimal one (``None`` if undefined).
        rows_to_label: About how many rows to label from the judge-fail and judge-pass strata to
            find ``needed.extra_m0`` failing and ``needed.extra_m1`` passing rows.
        message: One sentence for people.
    """

    target_half_width: float
    needed: LabelsNeeded | None
    gap: AllocationGap | None
    rows_to_label: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        """JSON-safe form."""
        needed = self.needed
        return {
            "target_half_width": self.target_half_width,
            "achievable": None if needed is None else needed.achievable,
            "extra_failing": None if needed is None else needed.extra_m0,
            "extra_passing": None if needed is None else needed.extra_m1,
            "rows_to_label": self.rows_to_label,
            "current_half_width": None if needed is None else json_safe(needed.current_half_width),
            "projected_half_width": (
                None if needed is None else json_safe(needed.projected_half_width)
            ),
            "variance_inflation": (
                None if self.gap is None else json_safe(self.gap.variance_inflation)
            ),
            "message": self.message,
        }


def plan_labels(
    answer: PassRateAnswer,
    *,
    target_half_width: float = DEFAULT_HALF_WIDTH,
    all_labelled: bool = False,
) -> Plan:
    """Extra failing/passing labels for ``± target_half_width``, from Lee et al.'s variance.

    The labeller cannot know a row's true class in advance, so failing rows are found by labelling
    judge-fail rows (about ``1 / NPV`` rows per failing row) and passing rows by labelling
    judge-pass rows (``1 / PPV``); ``rows_to_label`` adds both. Lee's variance is the one of a
    separate calibration set; for labels sampled from the target run itself it is conservative.

    Args:
        answer: The report's answer.
        target_half_width: Wanted half-width of the corrected pass rate's interval.
        all_labelled: Every target row is labelled already (same-run designs): no plan needed.
    """
    cm = answer.confusion
    n_target = answer.counts["target"]["judged"]
    if all_labelled:
        return Plan(target_half_width, None, None, 0,
                    "Every target row is labelled: the pass rate is the human pass rate, and "
                    "more labels of these rows cannot narrow it further.")
    observed = answer.observed.estimate
    if cm.m0 == 0 or cm.m1 == 0 or n_target == 0 or observed is None:
        missing = "failing" if cm.m0 == 0 else "passing" if cm.m1 == 0 else None
        message = (
            f"Label at least one truly {missing} row first: the correction needs both classes."
            if missing else "Run the judge on the target rows first."
        )
        return Plan(target_half_width, None, None, None, message)
    q0, q1 = cm.tn / cm.m0, cm.tp / cm.m1
    p = observed
    needed = labels_needed(
        target_half_width=target_half_width, n_target=n_target, judge_pass_rate=p, q0=q0, q1=q1,
        m0=cm.m0, m1=cm.m1, confidence=answer.headline.confidence,
    )
    gap = None
    theta = answer.headline.estimate
    if theta is not None and 0 < theta < 1 and 0 < q0 < 1 and 0 < q1 < 1:
        try:
            gap = allocation_gap(cm.m0, cm.m1, theta=theta, q0=q0, q1=q1)
        except CalibrationInputError:
            gap = None
    if not needed.achievable:
        return Plan(target_half_width, needed, gap, None,
                    f"More labels cannot reach ±{target_half_width:g}: {needed.reason}.")
    if needed.extra_m0 == 0 and needed.extra_m1 == 0:
        now = needed.current_half_width or 0.0
        return Plan(target_half_width, needed, gap, 0,
                    f"The corrected pass rate is already within ±{now:.3f} "
                    f"(target ±{target_half_width:g}).")
    npv = cm.tn / (cm.tn + cm.fn) if cm.tn + cm.fn else None
    ppv = cm.tp / (cm.tp + cm.fp) if cm.tp + cm.fp else None
    rows = None
    if (needed.extra_m0 == 0 or npv) and (needed.extra_m1 == 0 or ppv):
        rows = (math.ceil(needed.extra_m0 / npv) if needed.extra_m0 and npv else 0) + (
            math.ceil(needed.extra_m1 / ppv) if needed.extra_m1 and ppv else 0
        )
    parts = []
    if needed.extra_m0:
        parts.append(f"about {needed.extra_m0} more failing rows")
    if needed.extra_m1:
        parts.append(f"about {needed.extra_m1} more passing rows")
    current = needed.current_half_width
    message = (
        f"Label {' and '.join(parts)} to bring the corrected pass rate to "
        f"±{target_half_width:g}"
        + (f" (now ±{current:.3f})" if current is not None else "")
        + (f"; drawn by judge verdict that is roughly {rows} rows to label" if rows else "")
        + "."
    )
    return Plan(target_half_width, needed, gap, rows, message)
