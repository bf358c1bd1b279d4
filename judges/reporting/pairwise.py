"""The calibration report of a pairwise (A vs B) judge: votes and verdicts in, numbers out.

A pairwise dataset's rows hold ``answer_a`` and ``answer_b``; humans and the judge say ``a``,
``b`` or ``tie``. :func:`pairwise_report` joins every annotator's current label (one vote each)
with the judge's verdict on that row (its calls aggregated under the judge's rule: with both
orders run, ``all_agree`` turns a verdict that changes with the order into ``tie``, the MT-Bench
rule) and computes:

* agreement counted per vote, with and without ties (Zheng et al. 2023), the 3 x 3 table and
  Cohen's kappa, with row-cluster bootstrap intervals (votes on one row share the verdict);
* human-human agreement over pairs of votes on the same row, and Krippendorff's alpha;
* position consistency (share of rows whose verdict changed with the order) and the rows judged
  in one order only;
* the corrected a / b / tie shares of the target, overall and per model pair when the rows carry
  ``model_a`` / ``model_b`` in their metadata: the one pairwise estimation path,
  :func:`judges.calibration.answer_win_rate`, on the evidence of
  :mod:`judges.reporting.pairwise_evidence` (how the labels were drawn decides the estimator, as
  for pass/fail). A pairwise judge card carries the same evidence, so ``calibrate score`` on the
  target's verdicts gives the same shares.

Nothing here renders anything: ``calibrate report`` and the app's Calibration page show
:meth:`PairwiseReport.to_json` (documented in ``docs/report-json.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from judges.aggregation import rule_for
from judges.calibration import (
    ConsistencyResult,
    Estimate,
    PairwiseAnswer,
    PairwiseConfusion,
    PairwiseEvidence,
    PairwiseTarget,
    VoteAgreement,
    answer_win_rate,
    interval_json,
    krippendorff_alpha,
    pairwise_confusion,
    vote_agreement,
    vote_consensus,
    vote_kappa,
    vote_pair_agreement,
)
from judges.reporting.inputs import (
    DEFAULT_SEED,
    AnswerDesign,
    JudgeItems,
    JudgeRef,
    find_judge,
    load_judge_items,
)
from judges.reporting.pairwise_evidence import (
    model_pairs,
    one_order_ids,
    pair_name,
    pairwise_evidence,
    pairwise_run_counts,
)
from judges.workspace import Workspace
from labels.errors import CalibrateError, NotFoundError

PAIRWISE_SCHEMA_VERSION = 2
"""Version of the JSON shape of :meth:`PairwiseReport.to_json`."""
PAIRWISE_CRITERION = "preference"
DEFAULT_N_BOOT = 2000


@dataclass(frozen=True)
class PairwiseReport(AnswerDesign):
    """Everything ``calibrate report`` and the Calibration page show for a pairwise judge.

    Attributes:
        dataset: Dataset with the human votes.
        target: Dataset whose shares are estimated.
        criterion: Label criterion (``preference`` by default).
        judge: The judge.
        rule: Aggregation of repeated / swapped calls.
        votes: One row per vote on a row the judge ran on: ``item_id``, ``annotator``,
            ``human``, ``judge`` (the row's verdict; ``unsure`` for a row judged in one order
            only under ``all_agree``, which is not a verdict that survived both orders) and
            ``one_order``.
        agreement: Judge-human agreement per vote, with and without ties.
        confusion: Human (rows) x judge (columns) votes over a, b, tie.
        kappa: Cohen's kappa (3 classes) over the votes.
        human_agreement: Human-human agreement over pairs of votes on one row (``None`` when
            no row has two votes).
        human_alpha: Krippendorff's alpha of the annotators (``None`` likewise).
        consistency: The judge's flip rates (``None`` without calls).
        judge_items: The judge's calls and per-row verdicts on ``dataset``.
        answer: The one pairwise estimation path's answer (shares, design, warnings).
        evidence: The evidence it rests on (what a pairwise card carries).
        options: The estimation options (``design``, ``confidence``, ``seed``, ``n_boot``).
        pairs: Model-pair name -> ``(model_a, model_b)``.
        n_rows: Labelled rows with a judge verdict.
        not_judged: Labelled rows the judge has no verdict for (counted).
        warnings: Caveats: the answer's, then what only the database knows.
    """

    dataset: str
    target: str
    criterion: str
    judge: JudgeRef
    rule: str
    votes: pd.DataFrame
    agreement: VoteAgreement
    confusion: PairwiseConfusion
    kappa: Estimate
    human_agreement: VoteAgreement | None
    human_alpha: Estimate | None
    consistency: ConsistencyResult | None
    judge_items: JudgeItems
    answer: PairwiseAnswer
    evidence: PairwiseEvidence
    options: dict[str, Any]
    pairs: dict[str, tuple[str, str]]
    n_rows: int
    not_judged: int
    warnings: tuple[str, ...]

    kind = "pairwise"

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``docs/report-json.md``, section "Pairwise reports")."""
        c = self.consistency
        answer = self.answer.to_json()
        by_pair = []
        for entry in answer.pop("by_pair"):
            model_a, model_b = self.pairs.get(entry["pair"], (entry["pair"], ""))
            by_pair.append({"model_a": model_a, "model_b": model_b, **entry})
        answer.pop("warnings")
        return {
            "schema_version": PAIRWISE_SCHEMA_VERSION,
            "kind": "pairwise",
            "dataset": self.dataset,
            "target": self.target,
            "criterion": self.criterion,
            "judge": self.judge.to_json(),
            "aggregation": self.rule,
            "confidence": self.answer.observed[0].confidence,
            "n_rows": self.n_rows,
            "n_votes": self.agreement.with_ties.n,
            "not_judged": self.not_judged,
            "agreement": _agreement_json(self.agreement),
            "confusion": {"classes": ["a", "b", "tie"], "table": [list(r) for r in
                                                                 self.confusion.table]},
            "kappa": interval_json(self.kappa),
            "calibration_table": [list(r) for r in self.answer.confusion],
            "human_agreement": (
                None if self.human_agreement is None else {
                    **_agreement_json(self.human_agreement),
                    "krippendorff_alpha": interval_json(self.human_alpha),
                }
            ),
            "position_consistency": {
                "flip_rate": interval_json(c.flip_rate_order if c is not None else None),
                "order_pairs": 0 if c is None else c.n_order_pairs,
                "flipped": 0 if c is None else c.n_order_pairs_flipped,
                "one_order_rows": int(self.evidence.population.one_order()[:3].sum()),
                "rule": self.rule,
            },
            **answer,
            "by_pair": by_pair,
            "warnings": list(self.warnings),
        }


def _agreement_json(a: VoteAgreement) -> dict[str, Any]:
    return {"with_ties": interval_json(a.with_ties), "without_ties": interval_json(a.without_ties),
            "rows": a.n_rows, "excluded": a.excluded}


def pairwise_report(
    workspace: Workspace, dataset: str, judge: str | JudgeRef,
    *, criterion: str | None = None, target: str | None = None, design: str | None = None,
    rule: str | None = None, confidence: float = 0.95, seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_N_BOOT,
) -> PairwiseReport:
    """Calibrate a pairwise judge against the human votes of ``dataset``.

    Args:
        workspace: The open database (votes and judge runs).
        dataset: A pairwise dataset with human votes (``a``/``b``/``tie`` per annotator).
        judge: Judge name or config id, or a :class:`JudgeRef`.
        criterion: Label criterion (default: the judge's, else ``preference``).
        target: Dataset whose shares to estimate (default ``dataset``); another dataset judged
            by the same config is a separate calibration set.
        design: Force a sampling design (:data:`judges.calibration.DESIGN_ESTIMATORS`),
            checked against the labels' recorded provenance; default: what it supports.
        rule: ``all_agree`` (MT-Bench: a verdict that changes with the order is a tie) or
            ``majority``; default the judge config's.
        confidence: Level of every interval.
        seed: Seed of the row-cluster and document bootstraps.
        n_boot: Bootstrap replicates.

    Returns:
        A :class:`PairwiseReport`.

    Raises:
        NotFoundError: unknown dataset or judge, no votes or no verdicts.
        CalibrateError: the dataset is not pairwise, or an explicit design the labels'
            provenance contradicts (the reason says how).
    """
    store = workspace.labels
    info = store.dataset(dataset)
    if info.kind != "pairwise":
        raise CalibrateError(f"dataset {dataset!r} is {info.kind}, not pairwise")
    target_name = target or dataset
    if target_name != dataset and store.dataset(target_name).kind != "pairwise":
        raise CalibrateError(f"target dataset {target_name!r} is not pairwise")
    ref = judge if isinstance(judge, JudgeRef) else find_judge(workspace, judge, dataset=dataset)
    crit = criterion or ref.criterion or PAIRWISE_CRITERION
    rule_name = rule_for(ref.config, rule)
    labels = store.current_labels(dataset, criterion=crit)
    if labels.empty:
        raise NotFoundError(
            f"dataset {dataset!r} has no human votes for criterion {crit!r}: import them "
            "(calibrate labels import, one a/b/tie row per annotator vote)"
        )
    # no reasoning is shown here: the per-item texts are not read (texts_for=())
    judged = load_judge_items(workspace, dataset, ref, rule=rule_name, confidence=confidence,
                              texts_for=())
    if judged.items.empty:
        raise NotFoundError(f"judge {ref.name!r} has no verdicts on dataset {dataset!r}")
    target_items = judged if target_name == dataset else load_judge_items(
        workspace, target_name, ref, rule=rule_name, confidence=confidence, texts_for=())
    if target_items.items.empty:
        raise NotFoundError(f"judge {ref.name!r} has no verdicts on target {target_name!r}")

    groups = store.item_groups(dataset)
    pairs = model_pairs(store.items_frame(dataset)[["item_id", "metadata"]])
    population, outcome, flipped, one_order, pair = pairwise_run_counts(
        groups["item_id"], judged.items, pairs)
    ids, consensus = vote_consensus(labels["item_id"].astype(str).to_numpy(),
                                    labels["verdict"].astype(str).to_numpy())
    evidence = pairwise_evidence(
        consensus=pd.DataFrame({"item_id": ids.astype(str), "verdict": consensus}),
        provenance=store.provenance_frame(dataset, criterion=crit), groups=groups,
        population=population, outcome=outcome, flipped=flipped, one_order=one_order,
        pair=pair, rule=rule_name,
    )  # fmt: skip
    if target_name == dataset:
        run = PairwiseTarget(population, same_run=True)
    else:
        target_pairs = model_pairs(store.items_frame(target_name)[["item_id", "metadata"]])
        pairs = {**pairs, **target_pairs}
        run = PairwiseTarget(pairwise_run_counts(store.item_groups(target_name)["item_id"],
                                                 target_items.items, target_pairs)[0])
    answer = answer_win_rate(evidence, run, design=design, confidence=confidence, seed=seed,
                             n_boot=n_boot)  # fmt: skip
    if design is not None and answer.decision.refused:
        raise CalibrateError(answer.decision.reason)

    verdicts = judged.verdict_map()
    one_ids = one_order_ids(judged.items)
    votes = pd.DataFrame({
        "item_id": labels["item_id"].astype(str),
        "annotator": labels["annotator"].astype(str),
        "human": labels["verdict"].astype(str),
    })
    votes["judge"] = votes["item_id"].map(verdicts)
    votes["one_order"] = votes["item_id"].isin(one_ids)
    if rule_name == "all_agree":
        # a verdict that never had to survive the swap is not one under the MT-Bench rule
        votes.loc[votes["one_order"], "judge"] = "unsure"
    not_judged = int(votes.loc[votes["judge"].isna(), "item_id"].nunique())
    votes = votes[votes["judge"].notna()].reset_index(drop=True)
    if votes.empty:
        raise NotFoundError(f"judge {ref.name!r} has no verdict on any row with a human vote")
    rng = np.random.default_rng(seed)
    rows, human, judge_v = votes["item_id"].to_numpy(), votes["human"].to_numpy(), votes[
        "judge"].to_numpy()
    agreement = vote_agreement(human, judge_v, rows=rows, rng=rng, n_boot=n_boot,
                               confidence=confidence)
    kappa = vote_kappa(human, judge_v, rows=rows, rng=rng, n_boot=n_boot, confidence=confidence)
    human_agreement, human_alpha = _human_agreement(labels, rng, n_boot, confidence)
    return PairwiseReport(
        dataset=dataset, target=target_name, criterion=crit, judge=ref, rule=rule_name,
        votes=votes, agreement=agreement, confusion=pairwise_confusion(human, judge_v),
        kappa=kappa, human_agreement=human_agreement, human_alpha=human_alpha,
        consistency=judged.consistency, judge_items=judged, answer=answer, evidence=evidence,
        options={"design": design, "confidence": confidence, "seed": seed, "n_boot": n_boot},
        pairs={pair_name(a, b): (a, b) for a, b in pairs.values()},
        n_rows=int(votes["item_id"].nunique()), not_judged=not_judged,
        warnings=_warnings(answer, judged, rule_name),
    )


def _human_agreement(
    labels: pd.DataFrame, rng: np.random.Generator, n_boot: int, confidence: float
) -> tuple[VoteAgreement | None, Estimate | None]:
    per_row = labels.groupby("item_id")["annotator"].transform("size")
    shared = labels[per_row >= 2]
    if shared.empty:
        return None, None
    agreement = vote_pair_agreement(shared["item_id"].astype(str).to_numpy(),
                                    shared["verdict"].astype(str).to_numpy(), rng=rng,
                                    n_boot=n_boot, confidence=confidence)
    # Krippendorff's alpha needs items x raters; only the raters of shared rows matter.
    wide = shared.pivot(index="item_id", columns="annotator", values="verdict")
    ratings = wide.astype(object).where(wide.notna(), None).to_numpy()
    alpha = krippendorff_alpha(ratings, kind="pairwise", rng=rng, n_boot=min(n_boot, 1000),
                               confidence=confidence)
    return agreement, alpha


def _warnings(answer: PairwiseAnswer, judged: JudgeItems, rule: str) -> tuple[str, ...]:
    out = list(answer.warnings)
    c = judged.consistency
    if c is not None and c.n_order_pairs == 0:
        out.append("the judge ran one order only: position consistency not measured (run it "
                   "with --swap, or import both orders)")
    elif c is not None and c.n_order_pairs_flipped:
        fate = "counted as tie (MT-Bench rule)" if rule == "all_agree" else "settled by majority"
        out.append(f"{c.n_order_pairs_flipped} of {c.n_order_pairs} rows changed verdict when A "
                   f"and B swapped places ({fate})")
    return tuple(dict.fromkeys(out))


__all__ = ["PAIRWISE_CRITERION", "PAIRWISE_SCHEMA_VERSION", "PairwiseReport", "pairwise_report"]
