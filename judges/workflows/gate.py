"""A judge card at work: ``calibrate score | gate | compare | drift`` and the app's panels.

Each takes a card (:func:`judges.workflows.card.load_card`) and verdicts: files for the CLI
(:func:`score`, :func:`gate`, :func:`gate_pairwise`, :func:`compare`, :func:`drift`), the
database's stored verdicts for the Calibration page (:func:`compare_datasets`,
:func:`drift_stored`), read through the same parser, so both give the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from judges.integrations.otlp import report_events, score_events, write_logs
from judges.outputs.card import CardError
from judges.outputs.compare import (
    Comparison,
    baseline_bar,
    compare_verdicts,
    drop_gate,
    stored_verdicts,
)
from judges.outputs.compare import compare_datasets as compare_stored
from judges.outputs.drift import DriftReport, drift_check, read_labels_file
from judges.outputs.gate import (
    GateOn,
    Score,
    accepted_share_gate,
    read_verdicts_file,
    score_file,
)
from judges.outputs.gate import gate as gate_score
from judges.outputs.pairwise_card import PairwiseScore, score_pairwise_file
from judges.outputs.pairwise_card import gate_pairwise as gate_pairwise_score
from labels.exporting import write_table

if TYPE_CHECKING:
    from judges.card_model import JudgeCard
    from judges.reporting import JudgeReport
    from judges.workspace import Workspace


@dataclass(frozen=True)
class GateOutcome:
    """What :func:`gate` and :func:`gate_pairwise` decide.

    Attributes:
        data: The score's stable JSON with the decision under ``gate`` (and, with a baseline,
            the comparison under ``comparison``): ``calibrate gate --json``.
        passed: Every bar is met.
        reason: Why, in one sentence per bar.
    """

    data: dict[str, Any]
    passed: bool
    reason: str


def _on(on: str) -> GateOn:
    if on not in ("lower", "estimate"):
        raise ValueError(f"on must be 'lower' or 'estimate', not {on!r}")
    return cast("GateOn", on)


def score(card: JudgeCard, verdicts_file: str, *,
          allow_unverified: bool = False) -> Score | PairwiseScore:
    """The corrected pass rate (a pairwise card: the a / b / tie shares) of a verdicts file."""
    if card.judge.kind == "pairwise":
        return score_pairwise_file(card, verdicts_file, allow_unverified=allow_unverified)
    return score_file(card, verdicts_file, allow_unverified=allow_unverified)


def write_accepted(score: Score, path: str | Path) -> Path:
    """Write ``id,verdict`` of the rows the card's acceptance rule accepts to ``path``."""
    return write_table(score.accepted(), path)


def compare(card: JudgeCard, baseline_file: str, candidate_file: str, *,
            allow_unverified: bool = False) -> Comparison:
    """Corrected pass rates of two verdict files of the card's judge and their difference."""
    return compare_verdicts(card, read_verdicts_file(baseline_file),
                            read_verdicts_file(candidate_file), allow_unverified=allow_unverified)


def gate(
    card: JudgeCard, card_file: str, verdicts_file: str, *, min_pass_rate: float | None = None,
    from_baseline: bool = False, baseline_file: str | None = None,
    max_drop: float | None = None, on: str = "lower",
    min_accepted_share: float | None = None, allow_unverified: bool = False,
) -> GateOutcome:
    """Check a pass/fail card's verdicts against each bar given.

    Args:
        card: The card (read from ``card_file``).
        card_file: Its path, named by the error of a card that cannot correct a pass rate.
        verdicts_file: The verdicts to gate.
        min_pass_rate: The bar of the corrected pass rate.
        from_baseline: The bar is the baseline's lower bound instead (needs ``baseline_file``).
        baseline_file: The previous version's verdicts on the same rows.
        max_drop: Fail when the paired difference's lower bound is below ``-max_drop``.
        on: Compare the interval's lower bound (``lower``) or the estimate (``estimate``).
        min_accepted_share: Fail when the card's acceptance rule accepts less.
        allow_unverified: Accept verdicts without a config id.

    Raises:
        judges.outputs.card.CardError: the card cannot correct a pass rate.
    """
    score = score_file(card, verdicts_file, allow_unverified=allow_unverified)
    if score.corrected.refused:
        raise CardError(
            f"this card cannot correct a pass rate: {score.corrected.reason}", path=card_file
        )
    data = score.to_json()
    decision: dict[str, Any] = {"passed": True, "on": on, "min_pass_rate": None,
                                "min_pass_rate_from": None, "value": None, "max_drop": None,
                                "difference_low": None}
    reasons: list[str] = []
    comparison = None
    if baseline_file is not None:
        comparison = compare_verdicts(card, read_verdicts_file(baseline_file), score.verdicts,
                                      allow_unverified=allow_unverified)
        data["comparison"] = comparison.to_json()
    if min_pass_rate is not None or from_baseline:
        if from_baseline and baseline_file is not None:
            bar = baseline_bar(score_file(card, baseline_file,
                                          allow_unverified=allow_unverified))
        else:
            bar = float(min_pass_rate or 0.0)
        result = gate_score(score, min_pass_rate=bar, on=_on(on))
        decision.update(result.to_json(), min_pass_rate_from=(
            "baseline" if from_baseline else "option"))
        reasons.append(result.reason)
    if max_drop is not None and comparison is not None:
        drop = drop_gate(comparison, max_drop=max_drop)
        decision.update(passed=decision["passed"] and drop.passed, max_drop=max_drop,
                        difference_low=drop.value)
        reasons.append(drop.reason)
    if min_accepted_share is not None:
        share = accepted_share_gate(score, min_share=min_accepted_share)
        decision.update(passed=decision["passed"] and share.passed,
                        min_accepted_share=min_accepted_share, accepted_share=share.value)
        reasons.append(share.reason)
    decision["reason"] = "; ".join(reasons)
    data["gate"] = decision
    return GateOutcome(data, bool(decision["passed"]), decision["reason"])


def gate_pairwise(card: JudgeCard, verdicts_file: str, *, side: str, min_share: float,
                  on: str = "lower", allow_unverified: bool = False) -> GateOutcome:
    """Check the corrected share of ``side``'s wins under a pairwise card against ``min_share``.

    Raises:
        judges.outputs.card.CardError: the card cannot correct a win rate.
    """
    score = score_pairwise_file(card, verdicts_file, allow_unverified=allow_unverified)
    if score.answer.refused:
        raise CardError(f"this card cannot correct a win rate: {score.answer.headline.reason}",
                        path=verdicts_file)
    result = gate_pairwise_score(score, side=side, min_share=min_share, on=_on(on))
    data = score.to_json()
    data["gate"] = {**result.to_json(), "side": side}
    return GateOutcome(data, result.passed, result.reason)


def write_otlp(path: str | Path, data: Mapping[str, Any], kind: str) -> Path:
    """Write a report's (``kind`` ``report``) or a score's stable JSON as OTLP/JSON logs."""
    return write_logs(path, report_events(data) if kind == "report" else score_events(data))


def drift(
    card: JudgeCard, new_verdicts: str | None, *, anchor_file: str | None = None,
    labels_file: str | None = None, baseline_file: str | None = None, alpha: float = 0.05,
    tolerance: float | None = None, in_file_order: bool = False,
    allow_unverified: bool = False,
) -> DriftReport:
    """Test ``card`` for judge and system drift on verdict and label files."""
    return drift_check(
        card, None if new_verdicts is None else read_verdicts_file(new_verdicts),
        anchor=None if anchor_file is None else read_verdicts_file(anchor_file),
        labels=None if labels_file is None else read_labels_file(labels_file),
        baseline=None if baseline_file is None else read_verdicts_file(baseline_file),
        alpha=alpha, tolerance=tolerance, in_file_order=in_file_order,
        allow_unverified=allow_unverified,
    )  # fmt: skip


def expert_labels(workspace: Workspace, dataset: str, criterion: str) -> dict[str, str]:
    """The experts' consensus on each labelled row: the majority, ``unsure`` on a tie."""
    frame = workspace.labels.current_labels(dataset, criterion=criterion)
    out: dict[str, str] = {}
    for item_id, verdicts in frame.groupby("item_id")["verdict"]:
        words: list[Any] = list(verdicts)
        p, f = words.count("pass"), words.count("fail")
        out[str(item_id)] = "pass" if p > f else "fail" if f > p else "unsure"
    return out


def drift_stored(workspace: Workspace, card: JudgeCard, new: str, *, anchor: str | None = None,
                 labels: Mapping[str, str] | None = None) -> DriftReport:
    """Test ``card`` on its judge's stored verdicts of ``new`` (``anchor``: its re-scored rows)."""
    config_id = card.judge.config_id
    return drift_check(
        card, stored_verdicts(workspace, new, config_id),
        anchor=None if anchor is None else stored_verdicts(workspace, anchor, config_id),
        labels=labels)


def compare_datasets(workspace: Workspace, report: JudgeReport, *, baseline: str,
                     candidate: str) -> Comparison:
    """Compare two target datasets judged by ``report``'s judge (see ``calibrate compare``)."""
    return compare_stored(workspace, report, baseline=baseline, candidate=candidate)


__all__ = [
    "Comparison",
    "DriftReport",
    "GateOutcome",
    "PairwiseScore",
    "Score",
    "compare",
    "compare_datasets",
    "drift",
    "drift_stored",
    "expert_labels",
    "gate",
    "gate_pairwise",
    "score",
    "write_accepted",
    "write_otlp",
]
