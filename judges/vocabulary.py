"""The names the front ends offer as choices, defined once and importing nothing heavy.

The command line lists them in ``--help`` and the app in its select boxes; the modules that act
on them (:mod:`judges.aggregation`, :mod:`judges.selective`, the statistics) import them from
here, so a choice cannot be offered that the engine does not know. The statistics' own names
(designs, p-values) and the words of the row counts (:func:`describe_counts`,
:func:`describe_used`) stay in :mod:`judges.calibration.vocabulary`, which imports nothing of the
project, and are re-exported here: the front ends take every name from this one module.
"""

from __future__ import annotations

from typing import Literal

from judges.calibration.vocabulary import (
    DESIGN_ESTIMATORS,
    P_VALUES,
    describe_counts,
    describe_used,
)

AggregationRule = Literal["all_agree", "majority"]
AGGREGATION_RULES: dict[str, str] = {
    "all_agree": (
        "MT-Bench rule: a verdict counts only if every scored call (all repeats, both orders) "
        "agrees; a row that flips is 'unsure' and is excluded"
    ),
    "majority": "the most frequent scored verdict; equal top counts give 'unsure'",
}

SIGNALS: dict[str, str] = {
    "agreement": "agreement of the judge's calls across repeats and swapped source orders",
    "probability": "the judge's verdict probability (a claim-split judge's p_yes per claim)",
    "judges": "agreement of other judges' verdicts on the row",
}
"""The signals a confidence score can use, in words."""

__all__ = ["AGGREGATION_RULES", "DESIGN_ESTIMATORS", "P_VALUES", "SIGNALS", "AggregationRule",
           "describe_counts", "describe_used"]
