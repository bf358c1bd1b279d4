"""Judge cards, scores and gates of pairwise (a / b / tie) judges.

A pairwise card carries the judge's agreement figures and raw 3 x 3 calibration table (for
people) and the pairwise calibration *evidence* (:class:`judges.calibration.PairwiseEvidence`:
the labelled rows' human consensus, judge outcomes, flips, one-order flags, model pairs,
documents and recorded selection, and the judge's outcomes on every calibration row, as counts)
with the estimation options. ``calibrate score`` answers from them through the one pairwise
estimation path (:func:`judges.calibration.answer_win_rate`), as ``calibrate report --target``
does, so the same verdicts get the same shares; verdicts of the calibration run itself (same
fingerprint) get the report's same-run answer. ``calibrate gate`` checks the corrected share of
one side (``--side``, default ``b``: the candidate in an A-vs-B comparison) against
``--min-pass-rate``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from judges.aggregation import aggregate_calls
from judges.calibration import (
    PairwiseAnswer,
    PairwiseEvidence,
    PairwiseTarget,
    answer_win_rate,
    interval_json,
)
from judges.card_model import (
    CardCalibration,
    CardError,
    CardEstimation,
    CardInterval,
    CardJudge,
    CardMetrics,
    Confusion,
    JudgeCard,
    PairwiseCardMetrics,
    _policy,
    _stress,
    card_identity,
    package_versions,
)
from judges.outputs.gate import (
    SCORE_SCHEMA_VERSION,
    GateOn,
    GateResult,
    VerdictsFile,
    VerdictsFileError,
    card_reference,
    check_config,
    read_verdicts_file,
)
from judges.providers import STAND_IN_NOTE
from judges.reporting import PairwiseReport, stand_in_specs
from judges.reporting.pairwise_evidence import pairwise_counts_of_items, pairwise_fingerprint
from judges.workspace import Workspace

SIDES = ("a", "b", "tie")
_NOT_PASS_FAIL = CardInterval(estimate=None, low=None, high=None, n=0,
                              reason="pairwise judge: see metrics.pairwise")


def pairwise_card_problems(workspace: Workspace, report: PairwiseReport) -> list[str]:
    """Why a card of this pairwise report would mislead; empty when it may be exported.

    As for pass/fail cards (:func:`judges.outputs.card.card_problems`): verdicts from a stand-in
    provider, and a judge no better than chance (its verdict-reweighted kappa with the experts
    at most 0).
    """
    problems = []
    stand_in = stand_in_specs(workspace, report.judge, report.dataset, report.target)
    if stand_in:
        problems.append(f"the verdicts come from {', '.join(stand_in)}, a {STAND_IN_NOTE}")
    if report.answer.worse_than_chance:
        problems.append(f"the judge is worse than chance: {report.answer.worse_than_chance}")
    return problems


def card_from_pairwise_report(workspace: Workspace, report: PairwiseReport, *,
                              now: datetime | None = None, force: bool = False) -> JudgeCard:
    """The card of a pairwise judge from its :func:`~judges.reporting.pairwise_report`.

    Raises:
        CardRefusedError: When :func:`pairwise_card_problems` finds a reason, unless ``force``.
    """
    problems = pairwise_card_problems(workspace, report)
    ref = report.judge
    provider, model, params, config_data = card_identity(workspace, ref, problems, force=force)
    data = report.to_json()
    store = workspace.labels
    labels = store.current_labels(report.dataset, criterion=report.criterion)
    stamps = pd.to_datetime(labels["labelled_at"], utc=True)
    human = data["human_agreement"]
    annotators = sorted(labels["annotator"].astype(str).unique())
    card = JudgeCard(
        created_at=now or datetime.now(UTC),
        judge=CardJudge(
            name=ref.name, revision=ref.revision, origin=ref.origin,  # type: ignore[arg-type]
            kind="pairwise", criterion=ref.criterion, config_id=ref.config_id,
            provider=provider, model=model, params=params, policy=_policy(workspace, report),
            config=config_data,
        ),
        calibration=CardCalibration(
            dataset=report.dataset, criterion=report.criterion,
            content_hash=store.dataset_content_hash(report.dataset),
            rows=store.count_items(report.dataset), labelled_rows=report.n_rows,
            design=report.design or "refused",
            design_reason=report.design_reason,
            annotators=annotators, n_annotators=len(annotators),
            labels_from=stamps.min().to_pydatetime() if len(stamps) else None,
            labels_to=stamps.max().to_pydatetime() if len(stamps) else None,
        ),
        metrics=CardMetrics(
            confidence=data["confidence"], n=report.n_rows, m0=0, m1=0,
            confusion=Confusion(tp=0, fn=0, fp=0, tn=0), sensitivity=_NOT_PASS_FAIL,
            specificity=_NOT_PASS_FAIL, fpr=_NOT_PASS_FAIL, kappa=CardInterval(**data["kappa"]),
            swap_flip_rate=CardInterval(**data["position_consistency"]["flip_rate"]),
            repeat_flip_rate=_NOT_PASS_FAIL, human_kappa=None,
            unscored=0, unsure=data["agreement"]["excluded"],
            pairwise=PairwiseCardMetrics(
                table=data["calibration_table"], n_votes=data["n_votes"],
                agreement_with_ties=CardInterval(**data["agreement"]["with_ties"]),
                agreement_without_ties=CardInterval(**data["agreement"]["without_ties"]),
                kappa=CardInterval(**data["kappa"]),
                human_agreement_with_ties=(CardInterval(**human["with_ties"]) if human
                                           else None),
                flip_rate=CardInterval(**data["position_consistency"]["flip_rate"]),
            ),
        ),
        software=package_versions(),
        warnings=[*(f"FORCED: {p}" for p in problems), *report.warnings],
        forced=problems,
        stress=_stress(workspace, ref.config_id),
        estimation=CardEstimation(**report.options),
        evidence=dataclasses.replace(
            report.evidence, fingerprint=pairwise_fingerprint(report.judge_items.items)).to_json(),
    )
    card.verify()
    return card


@dataclass(frozen=True)
class PairwiseScore:
    """Corrected A / B / tie shares of new verdicts under a pairwise card.

    Attributes:
        card: The card.
        verdicts: The scored file.
        counts: Items the judge gave a, b, tie (after the card's aggregation rule).
        unscored: Items with no a / b / tie verdict (unscored or unsure).
        answer: The answer of the one pairwise estimation path.
        swap_flip_rate: Flip rate of the new verdicts across orders (interval dict).
        warnings: Caveats.
        verified: ``False`` when rows without a ``config_id`` were let in.
    """

    card: JudgeCard
    verdicts: VerdictsFile
    counts: tuple[int, int, int]
    unscored: int
    answer: PairwiseAnswer
    swap_flip_rate: dict[str, Any]
    warnings: tuple[str, ...]
    verified: bool = True

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``docs/report-json.md``, section ``calibrate score``)."""
        answer = self.answer.to_json()
        answer.pop("warnings")
        win = answer["win_rate"]
        return {
            **answer,
            "schema_version": SCORE_SCHEMA_VERSION,
            "kind": "pairwise",
            "card": card_reference(self.card),
            "verdicts_file": self.verdicts.path,
            "aggregation": self.card.judge.policy.aggregation,
            "confidence": self.card.metrics.confidence,
            "n": sum(self.counts),
            "counts": dict(zip(SIDES, self.counts, strict=True)),
            "unscored": self.unscored,
            "observed": win["observed"],
            "corrected": win["corrected"],
            "swap_flip_rate": self.swap_flip_rate,
            "verified": self.verified,
            "warnings": list(self.warnings),
        }


def card_pairwise_answer(card: JudgeCard, items: pd.DataFrame) -> PairwiseAnswer:
    """The card's answer for a run's aggregated pairwise verdicts: the one estimation path.

    Verdicts whose fingerprint is the card's calibration run are that run: the same-run
    estimate applies (with the report's design), as in the report on the calibration dataset.

    Raises:
        CardError: a card without pairwise evidence.
    """
    if card.evidence is None or card.estimation is None or card.evidence.get("kind") != (
            "pairwise"):
        raise CardError("the card carries no pairwise evidence: re-export it with calibrate "
                        "card export", path=card.calibration.dataset)
    evidence = PairwiseEvidence.from_json(card.evidence)
    est = card.estimation
    same = evidence.fingerprint is not None and pairwise_fingerprint(items) == (
        evidence.fingerprint)
    target = (PairwiseTarget(evidence.population, same_run=True) if same
              else PairwiseTarget(pairwise_counts_of_items(items)))
    return answer_win_rate(evidence, target, design=est.design if same else None,
                           confidence=est.confidence, seed=est.seed, n_boot=est.n_boot)


def score_pairwise_file(card: JudgeCard, path: str, *,
                        allow_unverified: bool = False) -> PairwiseScore:
    """Read a file of a / b / tie verdicts and answer its shares from the card's evidence.

    Raises:
        VerdictsFileError: another judge config, no config id (unless ``allow_unverified``),
            an unreadable file, or no a / b / tie verdict.
        CardError: a card without pairwise evidence.
    """
    if card.metrics.pairwise is None:
        raise VerdictsFileError("the card is not a pairwise judge's", path=path)
    verdicts = read_verdicts_file(path, kind="pairwise")
    warnings = check_config(card, verdicts, allow_unverified=allow_unverified)
    items, consistency = aggregate_calls(verdicts.calls, rule=card.judge.policy.aggregation,
                                         confidence=card.metrics.confidence, kind="pairwise")
    counts = tuple(int(items["verdict"].eq(side).sum()) for side in SIDES)
    unscored = len(items) - sum(counts)
    if sum(counts) == 0:
        raise VerdictsFileError(f"no a/b/tie verdict to score ({unscored} unscored)",
                                path=verdicts.path)
    answer = card_pairwise_answer(card, items)
    warnings += [w for w in answer.warnings if w not in warnings]
    swap = interval_json(consistency.flip_rate_order if consistency is not None else None)
    return PairwiseScore(card, verdicts, (counts[0], counts[1], counts[2]), unscored, answer,
                         swap, tuple(warnings), verified=verdicts.rows_without_config_id == 0)


def gate_pairwise(score: PairwiseScore, *, side: str = "b", min_share: float,
                  on: GateOn = "lower") -> GateResult:
    """Decide whether the corrected share of rows ``side`` wins clears ``min_share``."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {', '.join(SIDES)}, got {side!r}")
    if not 0.0 <= min_share <= 1.0:
        raise ValueError(f"min_share must be in [0, 1], got {min_share}")
    est = score.answer.headline.shares()[side]
    if est.refused or est.estimate is None or est.low is None or est.high is None:
        return GateResult(False, on, min_share, None, f"no corrected share: {est.reason}")
    value = float(est.low if on == "lower" else est.estimate)
    what = f"lower {est.confidence:.0%} bound" if on == "lower" else "point estimate"
    detail = (f"corrected share of rows where {side} wins {est.estimate:.3f} "
              f"[{est.low:.3f}, {est.high:.3f}] over {score.answer.n_target} verdicts")
    sign = ">=" if value >= min_share else "<"
    return GateResult(value >= min_share, on, min_share, value,
                      f"{what} {value:.3f} {sign} {min_share:g}: {detail}")


__all__ = ["SIDES", "PairwiseScore", "card_from_pairwise_report", "card_pairwise_answer",
           "gate_pairwise", "pairwise_card_problems", "score_pairwise_file"]
