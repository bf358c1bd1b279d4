"""The calibration report: labels and verdicts from the database in, numbers out.

The glue between the stores and the pure statistics of :mod:`judges.calibration`, one job per
module:

* :mod:`~judges.reporting.inputs` — which judge, the human labels and the judge's verdicts,
  one verdict per item;
* :mod:`~judges.reporting.evidence` — the calibration evidence and the target run the one
  estimation path (:func:`judges.calibration.answer_pass_rate`) works from;
* :mod:`~judges.reporting.design` — how many more labels a wanted interval needs;
* :mod:`~judges.reporting.assemble` — :func:`calibration_report` and :class:`JudgeReport`
  with its stable JSON form;
* :mod:`~judges.reporting.leaderboard` — several judges on the same labelled rows;
* :mod:`~judges.reporting.pairwise_evidence` — the pairwise evidence and target run of the one
  pairwise estimation path (:func:`judges.calibration.answer_win_rate`);
* :mod:`~judges.reporting.pairwise` — :func:`pairwise_report` for A-vs-B judges (a / b / tie).
"""

from judges.reporting.assemble import (
    DEFAULT_N_BOOT,
    SCHEMA_VERSION,
    JudgeReport,
    calibration_report,
)
from judges.reporting.design import DEFAULT_HALF_WIDTH, Plan, plan_labels
from judges.reporting.inputs import (
    DEFAULT_SEED,
    HumanLabels,
    JudgeItems,
    JudgeRef,
    find_judge,
    judges_on,
    load_human_labels,
    load_judge_items,
    stand_in_specs,
)
from judges.reporting.leaderboard import (
    Leaderboard,
    default_judge,
    default_target,
    judge_leaderboard,
)
from judges.reporting.pairwise import (
    PAIRWISE_CRITERION,
    PAIRWISE_SCHEMA_VERSION,
    PairwiseReport,
    pairwise_report,
)

__all__ = [
    "DEFAULT_HALF_WIDTH",
    "DEFAULT_N_BOOT",
    "DEFAULT_SEED",
    "PAIRWISE_CRITERION",
    "PAIRWISE_SCHEMA_VERSION",
    "SCHEMA_VERSION",
    "HumanLabels",
    "JudgeItems",
    "JudgeRef",
    "JudgeReport",
    "Leaderboard",
    "PairwiseReport",
    "Plan",
    "calibration_report",
    "default_judge",
    "default_target",
    "find_judge",
    "judge_leaderboard",
    "judges_on",
    "load_human_labels",
    "load_judge_items",
    "pairwise_report",
    "plan_labels",
    "stand_in_specs",
]
