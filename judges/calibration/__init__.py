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

The names load on first use (PEP 562): a command that only needs one of the light modules
(e.g. :mod:`judges.calibration.vocabulary` for the CLI's choices) does not import scipy.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._results import (
        CalibrationInputError,
        Estimate,
        PassRateEstimate,
        collapsed,
        describe_interval,
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
        active_pass_rate_from_strata,
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
    from .answer import (
        AnswerSummary,
        EvidenceStrata,
        PassRateAnswer,
        SegmentAnswer,
        TargetRun,
        answer_pass_rate,
        design_decision,
        evidence_strata,
    )
    from .answer_difference import answer_difference, transferred_error_rates
    from .comparison import LeaderboardRow, McNemarResult, leaderboard, mcnemar_test
    from .consistency import (
        ConsistencyResult,
        consistency_from_flags,
        self_consistency,
        self_consistency_matrix,
    )
    from .design_check import (
        SELECTIONS,
        DesignDecision,
        SelectionCheck,
        resolve_design,
        selection_check,
        selection_check_from_counts,
    )
    from .evidence import (
        CalibrationEvidence,
        LabelledRows,
        OrderTrend,
        RunCounts,
        judge_outcomes,
        order_trend,
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
    from .pairwise_answer import (
        PairAnswer,
        PairwiseAnswer,
        PairwiseStratum,
        PairwiseTarget,
        WinShares,
        answer_win_rate,
    )
    from .pairwise_evidence import (
        PAIRWISE_OUTCOMES,
        PairwiseEvidence,
        PairwiseLabelledRows,
        PairwiseRunCounts,
        human_codes,
        one_order_flags,
        pairwise_outcomes,
    )
    from .pass_rate import (
        ASSUMPTIONS,
        CalibrationCounts,
        calibration_counts,
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
    from .selective import (
        AcceptanceRule,
        CascadeCells,
        ThresholdTest,
        binomial_p_value,
        cascade_cells,
        cascade_pass_rate,
        confidence_score,
        hoeffding_bentkus_p_value,
        learn_then_test,
        min_labels_to_certify,
        threshold_grid,
    )
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
        counts_of_strata,
        stratified_run_pass_rate,
        stratified_run_pass_rate_from_counts,
        stratum_counts,
        verdict_strata,
    )
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
        TransferredRates,
        error_rates,
        population_rates,
        transported_pass_rate,
        transported_pass_rate_from_counts,
    )
    from .vocabulary import (
        DESIGN_ESTIMATORS,
        JUDGED,
        NOT_JUDGED,
        NOT_RUN,
        P_VALUES,
        STRATA,
        UNSCORED,
        UNSURE,
        VOCABULARY,
    )

# Where each public name lives: module (relative to this package) -> names.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "_results": (
        "CalibrationInputError",
        "Estimate",
        "PassRateEstimate",
        "collapsed",
        "describe_interval",
        "format_interval",
        "format_point",
        "interval_json",
        "json_safe",
    ),
    "_verdicts": (
        "normalize_verdicts",
        "verdict_names",
    ),
    "active": (
        "ACTIVE_FLOOR",
        "active_inclusion_probabilities",
        "active_pass_rate",
        "active_pass_rate_from_strata",
        "expected_active_saving",
        "judge_uncertainty",
    ),
    "agreement": (
        "MultiRaterAgreement",
        "PairwiseKappa",
        "cohen_kappa",
        "fleiss_kappa",
        "kappa_from_table",
        "krippendorff_alpha",
        "multi_rater_agreement",
    ),
    "answer": (
        "AnswerSummary",
        "EvidenceStrata",
        "PassRateAnswer",
        "SegmentAnswer",
        "TargetRun",
        "answer_pass_rate",
        "design_decision",
        "evidence_strata",
    ),
    "answer_difference": (
        "answer_difference",
        "transferred_error_rates",
    ),
    "comparison": (
        "LeaderboardRow",
        "McNemarResult",
        "leaderboard",
        "mcnemar_test",
    ),
    "consistency": (
        "ConsistencyResult",
        "consistency_from_flags",
        "self_consistency",
        "self_consistency_matrix",
    ),
    "design_check": (
        "SELECTIONS",
        "DesignDecision",
        "SelectionCheck",
        "resolve_design",
        "selection_check",
        "selection_check_from_counts",
    ),
    "evidence": (
        "CalibrationEvidence",
        "LabelledRows",
        "OrderTrend",
        "RunCounts",
        "judge_outcomes",
        "order_trend",
    ),
    "kappa_interval": (
        "SMALL_N",
        "kappa_interval",
        "kappa_interval_from_table",
    ),
    "paired": (
        "DifferenceEstimate",
        "JudgeErrorRates",
        "PairAlignment",
        "PairedComparison",
        "PairedTable",
        "align_pairs",
        "paired_difference",
        "paired_table",
    ),
    "pairwise": (
        "PairwiseConfusion",
        "VoteAgreement",
        "WinRateEstimate",
        "corrected_win_rate",
        "corrected_win_rate_from_counts",
        "pairwise_confusion",
        "vote_agreement",
        "vote_consensus",
        "vote_kappa",
        "vote_pair_agreement",
    ),
    "pairwise_answer": (
        "PairAnswer",
        "PairwiseAnswer",
        "PairwiseStratum",
        "PairwiseTarget",
        "WinShares",
        "answer_win_rate",
    ),
    "pairwise_evidence": (
        "PAIRWISE_OUTCOMES",
        "PairwiseEvidence",
        "PairwiseLabelledRows",
        "PairwiseRunCounts",
        "human_codes",
        "one_order_flags",
        "pairwise_outcomes",
    ),
    "pass_rate": (
        "ASSUMPTIONS",
        "CalibrationCounts",
        "calibration_counts",
        "estimate_pass_rate",
        "labels_only_pass_rate",
        "lee_pass_rate",
        "naive_pass_rate",
        "ppi_pass_rate",
        "stratified_pass_rate",
    ),
    "planning": (
        "Allocation",
        "AllocationGap",
        "LabelsNeeded",
        "allocation_gap",
        "labels_for_proportion",
        "labels_needed",
        "lee_allocation",
        "optimal_allocation_ratio",
    ),
    "rates": (
        "ConfusionMatrix",
        "HumanMargins",
        "JudgeRates",
        "confusion_matrix",
        "judge_rates",
        "rates_from_confusion",
        "wilson_interval",
        "youden_interval",
    ),
    "resampling": (
        "bootstrap_weights",
        "cluster_bootstrap",
        "clustered_agreement",
        "percentile_interval",
    ),
    "selective": (
        "AcceptanceRule",
        "CascadeCells",
        "ThresholdTest",
        "binomial_p_value",
        "cascade_cells",
        "cascade_pass_rate",
        "confidence_score",
        "hoeffding_bentkus_p_value",
        "learn_then_test",
        "min_labels_to_certify",
        "threshold_grid",
    ),
    "simulation": (
        "CoverageResult",
        "Scenario",
        "counts_to_arrays",
        "coverage_study",
        "simulate_counts",
        "simulate_paired",
        "simulate_verdicts",
    ),
    "strata": (
        "DESIGN_EFFECT_THRESHOLD",
        "StratumCounts",
        "counts_of_strata",
        "stratified_run_pass_rate",
        "stratified_run_pass_rate_from_counts",
        "stratum_counts",
        "verdict_strata",
    ),
    "transfer": (
        "HomogeneityTest",
        "SegmentTransfer",
        "TransferDiagnostics",
        "homogeneity_test",
        "segment_aware_pass_rate",
        "transfer_diagnostics",
    ),
    "transport": (
        "PopulationRates",
        "TransferredRates",
        "error_rates",
        "population_rates",
        "transported_pass_rate",
        "transported_pass_rate_from_counts",
    ),
    "vocabulary": (
        "DESIGN_ESTIMATORS",
        "P_VALUES",
        "JUDGED",
        "NOT_JUDGED",
        "NOT_RUN",
        "STRATA",
        "UNSCORED",
        "UNSURE",
        "VOCABULARY",
    ),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "ACTIVE_FLOOR",
    "ASSUMPTIONS",
    "DESIGN_EFFECT_THRESHOLD",
    "DESIGN_ESTIMATORS",
    "JUDGED",
    "NOT_JUDGED",
    "NOT_RUN",
    "PAIRWISE_OUTCOMES",
    "P_VALUES",
    "SELECTIONS",
    "SMALL_N",
    "STRATA",
    "UNSCORED",
    "UNSURE",
    "VOCABULARY",
    "AcceptanceRule",
    "Allocation",
    "AllocationGap",
    "AnswerSummary",
    "CalibrationCounts",
    "CalibrationEvidence",
    "CalibrationInputError",
    "CascadeCells",
    "ConfusionMatrix",
    "ConsistencyResult",
    "CoverageResult",
    "DesignDecision",
    "DifferenceEstimate",
    "Estimate",
    "EvidenceStrata",
    "HomogeneityTest",
    "HumanMargins",
    "JudgeErrorRates",
    "JudgeRates",
    "LabelledRows",
    "LabelsNeeded",
    "LeaderboardRow",
    "McNemarResult",
    "MultiRaterAgreement",
    "OrderTrend",
    "PairAlignment",
    "PairAnswer",
    "PairedComparison",
    "PairedTable",
    "PairwiseAnswer",
    "PairwiseConfusion",
    "PairwiseEvidence",
    "PairwiseKappa",
    "PairwiseLabelledRows",
    "PairwiseRunCounts",
    "PairwiseStratum",
    "PairwiseTarget",
    "PassRateAnswer",
    "PassRateEstimate",
    "PopulationRates",
    "RunCounts",
    "Scenario",
    "SegmentAnswer",
    "SegmentTransfer",
    "SelectionCheck",
    "StratumCounts",
    "TargetRun",
    "ThresholdTest",
    "TransferDiagnostics",
    "TransferredRates",
    "VoteAgreement",
    "WinRateEstimate",
    "WinShares",
    "active_inclusion_probabilities",
    "active_pass_rate",
    "active_pass_rate_from_strata",
    "align_pairs",
    "allocation_gap",
    "answer_difference",
    "answer_pass_rate",
    "answer_win_rate",
    "binomial_p_value",
    "bootstrap_weights",
    "calibration_counts",
    "cascade_cells",
    "cascade_pass_rate",
    "cluster_bootstrap",
    "clustered_agreement",
    "cohen_kappa",
    "collapsed",
    "confidence_score",
    "confusion_matrix",
    "consistency_from_flags",
    "corrected_win_rate",
    "corrected_win_rate_from_counts",
    "counts_of_strata",
    "counts_to_arrays",
    "coverage_study",
    "describe_interval",
    "design_decision",
    "error_rates",
    "estimate_pass_rate",
    "evidence_strata",
    "expected_active_saving",
    "fleiss_kappa",
    "format_interval",
    "format_point",
    "hoeffding_bentkus_p_value",
    "homogeneity_test",
    "human_codes",
    "interval_json",
    "json_safe",
    "judge_outcomes",
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
    "learn_then_test",
    "lee_allocation",
    "lee_pass_rate",
    "mcnemar_test",
    "min_labels_to_certify",
    "multi_rater_agreement",
    "naive_pass_rate",
    "normalize_verdicts",
    "one_order_flags",
    "optimal_allocation_ratio",
    "order_trend",
    "paired_difference",
    "paired_table",
    "pairwise_confusion",
    "pairwise_outcomes",
    "percentile_interval",
    "population_rates",
    "ppi_pass_rate",
    "rates_from_confusion",
    "resolve_design",
    "segment_aware_pass_rate",
    "selection_check",
    "selection_check_from_counts",
    "self_consistency",
    "self_consistency_matrix",
    "simulate_counts",
    "simulate_paired",
    "simulate_verdicts",
    "stratified_pass_rate",
    "stratified_run_pass_rate",
    "stratified_run_pass_rate_from_counts",
    "stratum_counts",
    "threshold_grid",
    "transfer_diagnostics",
    "transferred_error_rates",
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


class _Package(types.ModuleType):
    """This package, whose names stay bound to what they name when a submodule loads.

    Importing a submodule binds its name in the package to the module. One submodule is named
    like the function it defines (``kappa_interval``); that name stays the function, as it was
    when this package imported every name at once.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _WHERE.get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
