"""Calibration statistics: pure, typed functions over verdict arrays (no DB, no UI, no I/O).

Judge-vs-human agreement and error rates, corrected pass rates with honest intervals, judge
self-consistency, judge comparison, segment breakdowns, clustered bootstrap, labelling-budget
planning and coverage simulation. Formulas, sources and traps: ``shared/STATS.md``.

Conventions:

* "pass" is the positive class. Verdicts may be strings (``"pass"``/``"fail"``/``"unsure"``/
  ``"unscored"``; ``"a"``/``"b"``/``"tie"`` for pairwise) or 1/0/bool; see
  :func:`normalize_verdicts`. Human ``unsure`` and judge ``unscored`` rows are excluded from
  every rate and counted.
* Options are keyword-only; every interval takes ``confidence`` (default 0.95).
* Results are frozen dataclasses with ``to_dict()`` (JSON-safe). A statistic the data cannot
  support is returned with ``refused=True`` and a ``reason`` (never a silent NaN); invalid input
  raises :class:`CalibrationInputError`.
* Randomness only through an explicit ``numpy.random.Generator``.
"""

from ._results import (
    CalibrationInputError,
    Estimate,
    PassRateEstimate,
    format_interval,
    format_point,
    interval_json,
    json_safe,
)
from ._verdicts import normalize_verdicts, verdict_names
from .active import (
    ACTIVE_FLOOR,
    active_inclusion_probabilities,
    active_pass_rate,
    expected_active_saving,
    judge_uncertainty,
)
from .agreement import (
    MultiRaterAgreement,
    PairwiseKappa,
    cohen_kappa,
    fleiss_kappa,
    kappa_from_table,
    krippendorff_alpha,
    multi_rater_agreement,
)
from .comparison import LeaderboardRow, McNemarResult, leaderboard, mcnemar_test
from .consistency import (
    ConsistencyResult,
    consistency_from_flags,
    self_consistency,
    self_consistency_matrix,
)
from .design_check import (
    DESIGN_ESTIMATORS,
    SELECTIONS,
    DesignDecision,
    SelectionCheck,
    resolve_design,
    selection_check,
)
from .kappa_interval import SMALL_N, kappa_interval, kappa_interval_from_table
from .paired import (
    DifferenceEstimate,
    JudgeErrorRates,
    PairAlignment,
    PairedComparison,
    PairedTable,
    align_pairs,
    paired_difference,
    paired_table,
)
from .pairwise import (
    PairwiseConfusion,
    VoteAgreement,
    WinRateEstimate,
    corrected_win_rate,
    corrected_win_rate_from_counts,
    pairwise_confusion,
    vote_agreement,
    vote_consensus,
    vote_kappa,
    vote_pair_agreement,
)
from .pass_rate import (
    ASSUMPTIONS,
    DESIGNS,
    CalibrationCounts,
    calibration_counts,
    choose_method,
    corrected_pass_rate,
    corrected_pass_rate_from_counts,
    estimate_pass_rate,
    labels_only_pass_rate,
    lee_pass_rate,
    naive_pass_rate,
    ppi_pass_rate,
    stratified_pass_rate,
)
from .planning import (
    Allocation,
    AllocationGap,
    LabelsNeeded,
    allocation_gap,
    labels_for_proportion,
    labels_needed,
    lee_allocation,
    optimal_allocation_ratio,
)
from .rates import (
    ConfusionMatrix,
    HumanMargins,
    JudgeRates,
    confusion_matrix,
    judge_rates,
    rates_from_confusion,
    wilson_interval,
    youden_interval,
)
from .resampling import (
    bootstrap_weights,
    cluster_bootstrap,
    clustered_agreement,
    percentile_interval,
)
from .segments import SegmentResult, segment_breakdown
from .simulation import (
    CoverageResult,
    Scenario,
    counts_to_arrays,
    coverage_study,
    simulate_counts,
    simulate_paired,
    simulate_verdicts,
)
from .strata import (
    DESIGN_EFFECT_THRESHOLD,
    StratumCounts,
    stratified_run_pass_rate,
    stratified_run_pass_rate_from_counts,
    stratum_counts,
    verdict_strata,
)
from .summary import CalibrationSummary, build_summary
from .transfer import (
    HomogeneityTest,
    SegmentTransfer,
    TransferDiagnostics,
    homogeneity_test,
    segment_aware_pass_rate,
    transfer_diagnostics,
)
from .transport import (
    PopulationRates,
    population_rates,
    transported_pass_rate,
    transported_pass_rate_from_counts,
)
from .vocabulary import JUDGED, NOT_JUDGED, NOT_RUN, STRATA, UNSCORED, UNSURE, VOCABULARY

__all__ = [
    "ACTIVE_FLOOR",
    "ASSUMPTIONS",
    "DESIGNS",
    "DESIGN_EFFECT_THRESHOLD",
    "DESIGN_ESTIMATORS",
    "JUDGED",
    "NOT_JUDGED",
    "NOT_RUN",
    "SELECTIONS",
    "SMALL_N",
    "STRATA",
    "UNSCORED",
    "UNSURE",
    "VOCABULARY",
    "Allocation",
    "AllocationGap",
    "CalibrationCounts",
    "CalibrationInputError",
    "CalibrationSummary",
    "ConfusionMatrix",
    "ConsistencyResult",
    "CoverageResult",
    "DesignDecision",
    "DifferenceEstimate",
    "Estimate",
    "HomogeneityTest",
    "HumanMargins",
    "JudgeErrorRates",
    "JudgeRates",
    "LabelsNeeded",
    "LeaderboardRow",
    "McNemarResult",
    "MultiRaterAgreement",
    "PairAlignment",
    "PairedComparison",
    "PairedTable",
    "PairwiseConfusion",
    "PairwiseKappa",
    "PassRateEstimate",
    "PopulationRates",
    "Scenario",
    "SegmentResult",
    "SegmentTransfer",
    "SelectionCheck",
    "StratumCounts",
    "TransferDiagnostics",
    "VoteAgreement",
    "WinRateEstimate",
    "active_inclusion_probabilities",
    "active_pass_rate",
    "align_pairs",
    "allocation_gap",
    "bootstrap_weights",
    "build_summary",
    "calibration_counts",
    "choose_method",
    "cluster_bootstrap",
    "clustered_agreement",
    "cohen_kappa",
    "confusion_matrix",
    "consistency_from_flags",
    "corrected_pass_rate",
    "corrected_pass_rate_from_counts",
    "corrected_win_rate",
    "corrected_win_rate_from_counts",
    "counts_to_arrays",
    "coverage_study",
    "estimate_pass_rate",
    "expected_active_saving",
    "fleiss_kappa",
    "format_interval",
    "format_point",
    "homogeneity_test",
    "interval_json",
    "json_safe",
    "judge_rates",
    "judge_uncertainty",
    "kappa_from_table",
    "kappa_interval",
    "kappa_interval_from_table",
    "krippendorff_alpha",
    "labels_for_proportion",
    "labels_needed",
    "labels_only_pass_rate",
    "leaderboard",
    "lee_allocation",
    "lee_pass_rate",
    "mcnemar_test",
    "multi_rater_agreement",
    "naive_pass_rate",
    "normalize_verdicts",
    "optimal_allocation_ratio",
    "paired_difference",
    "paired_table",
    "pairwise_confusion",
    "percentile_interval",
    "population_rates",
    "ppi_pass_rate",
    "rates_from_confusion",
    "resolve_design",
    "segment_aware_pass_rate",
    "segment_breakdown",
    "selection_check",
    "self_consistency",
    "self_consistency_matrix",
    "simulate_counts",
    "simulate_paired",
    "simulate_verdicts",
    "stratified_pass_rate",
    "stratified_run_pass_rate",
    "stratified_run_pass_rate_from_counts",
    "stratum_counts",
    "transfer_diagnostics",
    "transported_pass_rate",
    "transported_pass_rate_from_counts",
    "verdict_names",
    "verdict_strata",
    "vote_agreement",
    "vote_consensus",
    "vote_kappa",
    "vote_pair_agreement",
    "wilson_interval",
    "youden_interval",
]
