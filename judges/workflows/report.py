"""The calibration report, once for ``calibrate report`` and the Calibration page.

:func:`report` (a pass/fail judge), :func:`pairwise` (an A-vs-B judge) and :func:`leaderboard`
are the numbers both show; :func:`trust` is the first screen's verdict; the rest are the
page's choices (which judges, which targets) and its two actions (the annotators' table, the
Label queue's order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from judges.calibration.trust import SMALL_SAMPLE, CertificationRule, TrustVerdict, trust_verdict
from judges.reporting import (
    DEFAULT_HALF_WIDTH,
    JudgeRef,
    JudgeReport,
    Leaderboard,
    PairwiseReport,
    calibration_report,
    default_judge,
    default_target,
    judge_leaderboard,
    judges_on,
    pairwise_report,
)
from judges.reporting.annotators import agreement_matrix, annotator_progress
from labels.sampling import QueueOrder, QueueSettings

if TYPE_CHECKING:
    import pandas as pd

    from judges.workspace import Workspace


def is_pairwise(workspace: Workspace, dataset: str) -> bool:
    """Whether ``dataset`` holds A-vs-B rows (its report is :func:`pairwise`)."""
    return workspace.labels.dataset(dataset).kind == "pairwise"


def report(
    workspace: Workspace, dataset: str, judge: str | JudgeRef, *,
    criterion: str | None = None, target: str | None = None, design: str | None = None,
    rule: str | None = None, half_width: float = DEFAULT_HALF_WIDTH,
) -> JudgeReport:
    """Calibrate ``judge`` against the human labels of ``dataset``.

    Args:
        workspace: The open database.
        dataset: Dataset with the human labels.
        judge: Judge name, config id or reference.
        criterion: Label criterion (default: the judge's).
        target: Dataset whose pass rate to estimate (default: ``dataset``).
        design: How the labelled rows were drawn (default: from the provenance).
        rule: How repeated / swapped calls combine (default: the judge's).
        half_width: Interval half-width the labelling plan aims for.
    """
    return calibration_report(workspace, dataset, judge, criterion=criterion,
                              target=target, design=design, rule=rule,
                              target_half_width=half_width)


def pairwise(
    workspace: Workspace, dataset: str, judge: str | JudgeRef, *,
    criterion: str | None = None, target: str | None = None, design: str | None = None,
    rule: str | None = None,
) -> PairwiseReport:
    """The report of a pairwise (a / b / tie) judge against the human votes of ``dataset``."""
    return pairwise_report(workspace, dataset, judge, criterion=criterion,
                           target=target, rule=rule, design=design)


def leaderboard(workspace: Workspace, dataset: str, judges: Sequence[str | JudgeRef], *,
                criterion: str | None = None, rule: str | None = None) -> Leaderboard:
    """Several judges on the same labelled rows, ranked by kappa."""
    return judge_leaderboard(workspace, dataset, list(judges), criterion=criterion,
                             rule=rule)


def judges(workspace: Workspace, dataset: str) -> list[JudgeRef]:
    """The judge configs with verdicts on ``dataset``."""
    return judges_on(workspace, dataset)


def first_judge(workspace: Workspace, dataset: str) -> JudgeRef | None:
    """The judge to open on: the most usable labelled rows (ties: the newest)."""
    return default_judge(workspace, dataset)


def first_target(workspace: Workspace, dataset: str, judge: JudgeRef) -> str | None:
    """The target to open on for ``judge`` calibrated on ``dataset``, if another."""
    return default_target(workspace, dataset, judge)


def judged_datasets(workspace: Workspace, config_id: str, *,
                    besides: str | None = None) -> list[str]:
    """Pointwise datasets (other than ``besides``) with verdicts of judge config ``config_id``."""
    return [d.name for d in workspace.labels.datasets()
            if d.kind == "pointwise" and d.name != besides
            and any(j.config_id == config_id for j in judges_on(workspace, d.name))]


def trust(report: JudgeReport, *, min_sensitivity: float = 0.80,
          min_specificity: float = 0.80) -> TrustVerdict:
    """How far to trust the judge of ``report``, and whether it clears the owner's bars.

    The same rates as the report's metrics: the judge's population rates (labels drawn by
    verdict bias the raw sample rates).
    """
    agreement = report.human.agreement
    a = report.answer
    return trust_verdict(
        a.rates.sensitivity, a.rates.specificity, kappa=a.kappa,
        human_kappa=agreement.mean_pairwise_kappa if agreement is not None else None,
        rule=CertificationRule(min_sensitivity, min_specificity),
    )


@dataclass(frozen=True)
class Annotators:
    """Each annotator's progress and the annotator x annotator agreement (empty frames if none)."""

    progress: pd.DataFrame
    agreement: pd.DataFrame


def annotators(workspace: Workspace, report: JudgeReport, *, team: bool,
               human_agreement: Mapping[str, Any] | None) -> Annotators:
    """The annotators of ``report``'s labels; ``team``: with their assigned rows.

    ``human_agreement`` is the report's (its JSON's ``human_agreement``), already computed.
    """
    assignments = (workspace.team.assignments(report.dataset, report.criterion) if team
                   else None)
    progress = annotator_progress(report.human.labels,
                                  workspace.labels.count_items(report.dataset), assignments)
    return Annotators(progress, agreement_matrix(human_agreement))


def use_queue_order(workspace: Workspace, dataset: str, criterion: str,
                    order: QueueOrder) -> None:
    """Set the Label queue of ``dataset``/``criterion`` to ``order`` for everyone."""
    store = workspace.labels
    current = store.queue_settings(dataset, criterion)
    store.save_queue_settings(dataset, criterion, QueueSettings(
        order=order, seed=current.seed, overlap=current.overlap))


__all__ = [
    "SMALL_SAMPLE",
    "Annotators",
    "JudgeRef",
    "JudgeReport",
    "Leaderboard",
    "PairwiseReport",
    "QueueOrder",
    "TrustVerdict",
    "annotators",
    "first_judge",
    "first_target",
    "is_pairwise",
    "judged_datasets",
    "judges",
    "leaderboard",
    "pairwise",
    "report",
    "trust",
    "use_queue_order",
]
