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
(e.g. :mod:`judges.calibration.vocabulary` for the CLI's choices) does not import scipy. The
``TYPE_CHECKING`` imports below are the one list of the API (``X as X`` marks a re-export for
type checkers); the loader reads which submodule holds each name from them.
"""

from __future__ import annotations

import ast
import functools
import importlib
import sys
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._results import CalibrationInputError as CalibrationInputError
    from ._results import Estimate as Estimate
    from ._results import PassRateEstimate as PassRateEstimate
    from ._results import collapsed as collapsed
    from ._results import describe_interval as describe_interval
    from ._results import format_interval as format_interval
    from ._results import format_point as format_point
    from ._results import interval_json as interval_json
    from ._results import json_safe as json_safe
    from ._verdicts import normalize_verdicts as normalize_verdicts
    from ._verdicts import verdict_names as verdict_names
    from .active import ACTIVE_FLOOR as ACTIVE_FLOOR
    from .active import active_inclusion_probabilities as active_inclusion_probabilities
    from .active import active_pass_rate as active_pass_rate
    from .active import active_pass_rate_from_strata as active_pass_rate_from_strata
    from .active import expected_active_saving as expected_active_saving
    from .active import judge_uncertainty as judge_uncertainty
    from .agreement import MultiRaterAgreement as MultiRaterAgreement
    from .agreement import PairwiseKappa as PairwiseKappa
    from .agreement import cohen_kappa as cohen_kappa
    from .agreement import fleiss_kappa as fleiss_kappa
    from .agreement import kappa_from_table as kappa_from_table
    from .agreement import krippendorff_alpha as krippendorff_alpha
    from .agreement import multi_rater_agreement as multi_rater_agreement
    from .answer import AnswerSummary as AnswerSummary
    from .answer import EvidenceStrata as EvidenceStrata
    from .answer import PassRateAnswer as PassRateAnswer
    from .answer import SegmentAnswer as SegmentAnswer
    from .answer import TargetRun as TargetRun
    from .answer import answer_pass_rate as answer_pass_rate
    from .answer import design_decision as design_decision
    from .answer import evidence_strata as evidence_strata
    from .answer_difference import answer_difference as answer_difference
    from .answer_difference import transferred_error_rates as transferred_error_rates
    from .comparison import LeaderboardRow as LeaderboardRow
    from .comparison import McNemarResult as McNemarResult
    from .comparison import leaderboard as leaderboard
    from .comparison import mcnemar_test as mcnemar_test
    from .consistency import ConsistencyResult as ConsistencyResult
    from .consistency import consistency_from_flags as consistency_from_flags
    from .consistency import self_consistency as self_consistency
    from .consistency import self_consistency_matrix as self_consistency_matrix
    from .design_check import DesignDecision as DesignDecision
    from .design_check import SelectionCheck as SelectionCheck
    from .design_check import resolve_design as resolve_design
    from .design_check import selection_check as selection_check
    from .design_check import selection_check_from_counts as selection_check_from_counts
    from .evidence import CalibrationEvidence as CalibrationEvidence
    from .evidence import LabelledRows as LabelledRows
    from .evidence import OrderTrend as OrderTrend
    from .evidence import RunCounts as RunCounts
    from .evidence import judge_outcomes as judge_outcomes
    from .evidence import order_trend as order_trend
    from .kappa_interval import SMALL_N as SMALL_N
    from .kappa_interval import kappa_interval as kappa_interval
    from .kappa_interval import kappa_interval_from_table as kappa_interval_from_table
    from .paired import DifferenceEstimate as DifferenceEstimate
    from .paired import JudgeErrorRates as JudgeErrorRates
    from .paired import PairAlignment as PairAlignment
    from .paired import PairedComparison as PairedComparison
    from .paired import PairedTable as PairedTable
    from .paired import align_pairs as align_pairs
    from .paired import paired_difference as paired_difference
    from .paired import paired_table as paired_table
    from .pairwise import PairwiseConfusion as PairwiseConfusion
    from .pairwise import VoteAgreement as VoteAgreement
    from .pairwise import WinRateEstimate as WinRateEstimate
    from .pairwise import corrected_win_rate as corrected_win_rate
    from .pairwise import corrected_win_rate_from_counts as corrected_win_rate_from_counts
    from .pairwise import pairwise_confusion as pairwise_confusion
    from .pairwise import vote_agreement as vote_agreement
    from .pairwise import vote_consensus as vote_consensus
    from .pairwise import vote_kappa as vote_kappa
    from .pairwise import vote_pair_agreement as vote_pair_agreement
    from .pairwise_answer import PairAnswer as PairAnswer
    from .pairwise_answer import PairwiseAnswer as PairwiseAnswer
    from .pairwise_answer import PairwiseStratum as PairwiseStratum
    from .pairwise_answer import PairwiseTarget as PairwiseTarget
    from .pairwise_answer import WinShares as WinShares
    from .pairwise_answer import answer_win_rate as answer_win_rate
    from .pairwise_evidence import PAIRWISE_OUTCOMES as PAIRWISE_OUTCOMES
    from .pairwise_evidence import PairwiseEvidence as PairwiseEvidence
    from .pairwise_evidence import PairwiseLabelledRows as PairwiseLabelledRows
    from .pairwise_evidence import PairwiseRunCounts as PairwiseRunCounts
    from .pairwise_evidence import human_codes as human_codes
    from .pairwise_evidence import one_order_flags as one_order_flags
    from .pairwise_evidence import pairwise_outcomes as pairwise_outcomes
    from .pass_rate import ASSUMPTIONS as ASSUMPTIONS
    from .pass_rate import CalibrationCounts as CalibrationCounts
    from .pass_rate import calibration_counts as calibration_counts
    from .pass_rate import estimate_pass_rate as estimate_pass_rate
    from .pass_rate import labels_only_pass_rate as labels_only_pass_rate
    from .pass_rate import lee_pass_rate as lee_pass_rate
    from .pass_rate import naive_pass_rate as naive_pass_rate
    from .pass_rate import ppi_pass_rate as ppi_pass_rate
    from .pass_rate import stratified_pass_rate as stratified_pass_rate
    from .planning import Allocation as Allocation
    from .planning import AllocationGap as AllocationGap
    from .planning import LabelsNeeded as LabelsNeeded
    from .planning import allocation_gap as allocation_gap
    from .planning import labels_for_proportion as labels_for_proportion
    from .planning import labels_needed as labels_needed
    from .planning import lee_allocation as lee_allocation
    from .planning import optimal_allocation_ratio as optimal_allocation_ratio
    from .rates import ConfusionMatrix as ConfusionMatrix
    from .rates import HumanMargins as HumanMargins
    from .rates import JudgeRates as JudgeRates
    from .rates import confusion_matrix as confusion_matrix
    from .rates import judge_rates as judge_rates
    from .rates import rates_from_confusion as rates_from_confusion
    from .rates import wilson_interval as wilson_interval
    from .rates import youden_interval as youden_interval
    from .resampling import bootstrap_weights as bootstrap_weights
    from .resampling import cluster_bootstrap as cluster_bootstrap
    from .resampling import clustered_agreement as clustered_agreement
    from .resampling import percentile_interval as percentile_interval
    from .selective import AcceptanceRule as AcceptanceRule
    from .selective import CascadeCells as CascadeCells
    from .selective import ThresholdTest as ThresholdTest
    from .selective import binomial_p_value as binomial_p_value
    from .selective import cascade_cells as cascade_cells
    from .selective import cascade_pass_rate as cascade_pass_rate
    from .selective import confidence_score as confidence_score
    from .selective import hoeffding_bentkus_p_value as hoeffding_bentkus_p_value
    from .selective import learn_then_test as learn_then_test
    from .selective import min_labels_to_certify as min_labels_to_certify
    from .selective import threshold_grid as threshold_grid
    from .simulation import CoverageResult as CoverageResult
    from .simulation import Scenario as Scenario
    from .simulation import counts_to_arrays as counts_to_arrays
    from .simulation import coverage_study as coverage_study
    from .simulation import simulate_counts as simulate_counts
    from .simulation import simulate_paired as simulate_paired
    from .simulation import simulate_verdicts as simulate_verdicts
    from .strata import DESIGN_EFFECT_THRESHOLD as DESIGN_EFFECT_THRESHOLD
    from .strata import StratumCounts as StratumCounts
    from .strata import counts_of_strata as counts_of_strata
    from .strata import stratified_run_pass_rate as stratified_run_pass_rate
    from .strata import stratified_run_pass_rate_from_counts as stratified_run_pass_rate_from_counts
    from .strata import stratum_counts as stratum_counts
    from .strata import verdict_strata as verdict_strata
    from .transfer import HomogeneityTest as HomogeneityTest
    from .transfer import SegmentTransfer as SegmentTransfer
    from .transfer import TransferDiagnostics as TransferDiagnostics
    from .transfer import homogeneity_test as homogeneity_test
    from .transfer import segment_aware_pass_rate as segment_aware_pass_rate
    from .transfer import transfer_diagnostics as transfer_diagnostics
    from .transport import PopulationRates as PopulationRates
    from .transport import TransferredRates as TransferredRates
    from .transport import error_rates as error_rates
    from .transport import population_rates as population_rates
    from .transport import transported_pass_rate as transported_pass_rate
    from .transport import transported_pass_rate_from_counts as transported_pass_rate_from_counts
    from .vocabulary import DESIGN_ESTIMATORS as DESIGN_ESTIMATORS
    from .vocabulary import JUDGED as JUDGED
    from .vocabulary import NOT_JUDGED as NOT_JUDGED
    from .vocabulary import NOT_RUN as NOT_RUN
    from .vocabulary import P_VALUES as P_VALUES
    from .vocabulary import SELECTIONS as SELECTIONS
    from .vocabulary import STRATA as STRATA
    from .vocabulary import UNSCORED as UNSCORED
    from .vocabulary import UNSURE as UNSURE
    from .vocabulary import VOCABULARY as VOCABULARY


@functools.cache
def _where() -> dict[str, str]:
    """Each public name -> its submodule, read from the ``TYPE_CHECKING`` imports above.

    Those imports are the one list of this package's API: type checkers read them, and this
    reads them (once, at the first name loaded) so that no second table can fall out of step.
    """
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    return {alias.name: str(node.module) for node in block.body
            if isinstance(node, ast.ImportFrom) for alias in node.names}


class _Package(types.ModuleType):
    """This package, whose names stay bound to what they name when a submodule loads.

    Importing a submodule binds its name in the package to the module. One submodule is named
    like the function it defines (``kappa_interval``); that name stays the function, as it was
    when this package imported every name at once.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _where().get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = sorted(_where())
    elif name in _where():
        value = getattr(importlib.import_module(f"{__name__}.{_where()[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_where()])
