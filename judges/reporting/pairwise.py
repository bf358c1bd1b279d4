"""The calibration report of a pairwise (A vs B) judge: votes and verdicts in, numbers out.

A pairwise dataset's rows hold ``answer_a`` and ``answer_b``; humans and the judge say ``a``,
``b`` or ``tie``. :func:`pairwise_report` joins every annotator's current label (one vote each)
with the judge's verdict on that row (its calls aggregated under the judge's rule: with both
orders run, ``all_agree`` turns a verdict that changes with the order into ``tie``, the MT-Bench
rule) and computes, with :mod:`judges.calibration.pairwise`:

* agreement counted per vote, with and without ties (Zheng et al. 2023), the 3 x 3 table and
  Cohen's kappa, with row-cluster bootstrap intervals (votes on one row share the verdict);
* human-human agreement over pairs of votes on the same row, and Krippendorff's alpha;
* position consistency (share of rows whose verdict changed with the order);
* the corrected win rate (A wins / B wins / tie) of the target, overall and per model pair when
  the rows carry ``model_a`` / ``model_b`` in their metadata.

Nothing here renders anything: ``calibrate report`` and the app's Calibration page show
:meth:`PairwiseReport.to_json` (documented in ``docs/report-json.md``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import pandas as pd

from judges.aggregation import rule_for
from judges.calibration import (
    ConsistencyResult,
    Estimate,
    PairwiseConfusion,
    VoteAgreement,
    WinRateEstimate,
    corrected_win_rate,
    interval_json,
    krippendorff_alpha,
    pairwise_confusion,
    vote_agreement,
    vote_consensus,
    vote_kappa,
    vote_pair_agreement,
)
from judges.reporting.inputs import DEFAULT_SEED, JudgeItems, JudgeRef, find_judge, load_judge_items
from labels.errors import CalibrateError, NotFoundError
from labels.store import LabelStore

PAIRWISE_SCHEMA_VERSION = 1
"""Version of the JSON shape of :meth:`PairwiseReport.to_json`."""
PAIRWISE_CRITERION = "preference"
DEFAULT_N_BOOT = 2000
MIN_PAIR_ROWS = 1


@dataclass(frozen=True)
class ModelPairWinRate:
    """The corrected win rate of one model pair (``a`` = ``model_a``).

    Attributes:
        model_a: The model whose answers are ``answer_a``.
        model_b: The model whose answers are ``answer_b``.
        win_rate: Corrected shares on that pair's target rows.
    """

    model_a: str
    model_b: str
    win_rate: WinRateEstimate


@dataclass(frozen=True)
class PairwiseReport:
    """Everything ``calibrate report`` and the Calibration page show for a pairwise judge.

    Attributes:
        dataset: Dataset with the human votes.
        target: Dataset whose win rate is estimated.
        criterion: Label criterion (``preference`` by default).
        judge: The judge.
        rule: Aggregation of repeated / swapped calls.
        votes: One row per compared vote: ``item_id``, ``annotator``, ``human``, ``judge``.
        agreement: Judge-human agreement per vote, with and without ties.
        confusion: Human (rows) x judge (columns) votes over a, b, tie.
        kappa: Cohen's kappa (3 classes) over the votes.
        human_agreement: Human-human agreement over pairs of votes on one row (``None`` when
            no row has two votes).
        human_alpha: Krippendorff's alpha of the annotators (``None`` likewise).
        consistency: The judge's flip rates (``None`` without calls).
        judge_items: The judge's calls and per-row verdicts on ``dataset``.
        calibration: The table the correction uses: the human consensus per labelled row
            (rows) x the judge's verdict (columns).
        win_rate: Corrected A / B / tie shares of the target.
        by_pair: The same per model pair (empty when the rows carry no model names).
        n_rows: Labelled rows with a judge verdict.
        not_judged: Labelled rows the judge has no verdict for (left out, counted).
        warnings: Caveats.
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
    calibration: PairwiseConfusion
    win_rate: WinRateEstimate
    by_pair: tuple[ModelPairWinRate, ...]
    n_rows: int
    not_judged: int
    warnings: tuple[str, ...]

    kind = "pairwise"

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form (``docs/report-json.md``, section "Pairwise reports")."""
        c = self.consistency
        return {
            "schema_version": PAIRWISE_SCHEMA_VERSION,
            "kind": "pairwise",
            "dataset": self.dataset,
            "target": self.target,
            "criterion": self.criterion,
            "judge": self.judge.to_json(),
            "aggregation": self.rule,
            "n_rows": self.n_rows,
            "n_votes": self.agreement.with_ties.n,
            "not_judged": self.not_judged,
            "agreement": _agreement_json(self.agreement),
            "confusion": {"classes": ["a", "b", "tie"], "table": [list(r) for r in
                                                                 self.confusion.table]},
            "kappa": interval_json(self.kappa),
            "calibration_table": [list(r) for r in self.calibration.table],
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
                "rule": self.rule,
            },
            "win_rate": _win_json(self.win_rate),
            "by_pair": [
                {"model_a": p.model_a, "model_b": p.model_b, **_win_json(p.win_rate)}
                for p in self.by_pair
            ],
            "warnings": list(self.warnings),
        }


def _agreement_json(a: VoteAgreement) -> dict[str, Any]:
    return {"with_ties": interval_json(a.with_ties), "without_ties": interval_json(a.without_ties),
            "rows": a.n_rows, "excluded": a.excluded}


def _win_json(w: WinRateEstimate) -> dict[str, Any]:
    return {
        "corrected": {k: interval_json(v) for k, v in w.shares().items()},
        "observed": {k: interval_json(v) for k, v in zip(("a", "b", "tie"), w.observed,
                                                         strict=True)},
        "n_target": w.n_target,
        "labelled_per_class": dict(zip(("a", "b", "tie"), w.m, strict=True)),
        "method": w.method,
        "clipped": w.clipped,
        "refused": w.refused,
        "reason": w.reason,
    }


def _model_pairs(store: LabelStore, dataset: str) -> pd.Series:
    """Item id -> ``(model_a, model_b)`` from the items' metadata (``None`` when absent)."""
    frame = store.items_frame(dataset)[["item_id", "metadata"]]

    def pair(raw: Any) -> tuple[str, str] | None:
        try:
            meta = json.loads(raw) if isinstance(raw, str) else (raw or {})
        except ValueError:
            return None
        a, b = (meta or {}).get("model_a"), (meta or {}).get("model_b")
        return (str(a), str(b)) if a and b else None

    return pd.Series([pair(m) for m in frame["metadata"]], index=frame["item_id"].astype(str))


def pairwise_report(
    store: LabelStore,
    dataset: str,
    judge: str | JudgeRef,
    *,
    criterion: str | None = None,
    target: str | None = None,
    rule: str | None = None,
    confidence: float = 0.95,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_N_BOOT,
) -> PairwiseReport:
    """Calibrate a pairwise judge against the human votes of ``dataset``.

    Args:
        store: The label store.
        dataset: A pairwise dataset with human votes (``a``/``b``/``tie`` per annotator).
        judge: Judge name or config id, or a :class:`JudgeRef`.
        criterion: Label criterion (default: the judge's, else ``preference``).
        target: Dataset whose win rate to estimate (default ``dataset``).
        rule: ``all_agree`` (MT-Bench: a verdict that changes with the order is a tie) or
            ``majority``; default the judge config's.
        confidence: Level of every interval.
        seed: Seed of the row-cluster bootstraps.
        n_boot: Bootstrap replicates.

    Returns:
        A :class:`PairwiseReport`.

    Raises:
        NotFoundError: unknown dataset or judge, no votes or no verdicts.
        CalibrateError: the dataset is not pairwise.
    """
    info = store.dataset(dataset)
    if info.kind != "pairwise":
        raise CalibrateError(f"dataset {dataset!r} is {info.kind}, not pairwise")
    target_name = target or dataset
    if target_name != dataset and store.dataset(target_name).kind != "pairwise":
        raise CalibrateError(f"target dataset {target_name!r} is not pairwise")
    ref = judge if isinstance(judge, JudgeRef) else find_judge(store, judge, dataset=dataset)
    crit = criterion or ref.criterion or PAIRWISE_CRITERION
    rule_name = rule_for(ref.config, rule)
    labels = store.current_labels(dataset, criterion=crit)
    if labels.empty:
        raise NotFoundError(
            f"dataset {dataset!r} has no human votes for criterion {crit!r}: import them "
            "(calibrate labels import, one a/b/tie row per annotator vote)"
        )
    # no reasoning is shown here: the per-item texts are not read (texts_for=())
    judged = load_judge_items(store, dataset, ref, rule=rule_name, confidence=confidence,
                              texts_for=())
    if judged.items.empty:
        raise NotFoundError(f"judge {ref.name!r} has no verdicts on dataset {dataset!r}")
    target_items = judged if target_name == dataset else load_judge_items(
        store, target_name, ref, rule=rule_name, confidence=confidence, texts_for=())
    if target_items.items.empty:
        raise NotFoundError(f"judge {ref.name!r} has no verdicts on target {target_name!r}")

    verdicts = judged.verdict_map()
    votes = pd.DataFrame({
        "item_id": labels["item_id"].astype(str),
        "annotator": labels["annotator"].astype(str),
        "human": labels["verdict"].astype(str),
    })
    votes["judge"] = votes["item_id"].map(verdicts)
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
    confusion = pairwise_confusion(human, judge_v)
    human_agreement, human_alpha = _human_agreement(labels, rng, n_boot, confidence)

    ids, consensus = vote_consensus(rows, human)
    judge_on_ids = np.array([verdicts[i] for i in ids], dtype=object)
    target_frame = target_items.items
    win = corrected_win_rate(consensus, judge_on_ids, target_frame["verdict"].to_numpy(object),
                             confidence=confidence)
    by_pair = _by_pair(store, target_name, target_items, consensus, judge_on_ids, confidence)
    warnings = _warnings(judged, target_items, win, not_judged, rule_name)
    return PairwiseReport(
        dataset=dataset, target=target_name, criterion=crit, judge=ref, rule=rule_name,
        votes=votes, agreement=agreement, confusion=confusion, kappa=kappa,
        human_agreement=human_agreement, human_alpha=human_alpha,
        consistency=judged.consistency, judge_items=judged,
        calibration=pairwise_confusion(consensus, judge_on_ids), win_rate=win, by_pair=by_pair,
        n_rows=len(ids), not_judged=not_judged, warnings=warnings,
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


def _by_pair(
    store: LabelStore, target: str, target_items: JudgeItems, consensus: np.ndarray,
    judge_on_ids: np.ndarray, confidence: float,
) -> tuple[ModelPairWinRate, ...]:
    pairs = _model_pairs(store, target)
    frame = target_items.items.assign(pair=target_items.items["item_id"].astype(str).map(pairs))
    if frame["pair"].isna().all():
        return ()
    out = []
    for pair, group in frame.dropna(subset=["pair"]).groupby("pair", sort=True):
        win = corrected_win_rate(consensus, judge_on_ids, group["verdict"].to_numpy(object),
                                 confidence=confidence)
        model_a, model_b = cast(tuple[str, str], pair)
        out.append(ModelPairWinRate(model_a, model_b, win))
    return tuple(out)


def _warnings(
    judged: JudgeItems, target: JudgeItems, win: WinRateEstimate, not_judged: int, rule: str
) -> tuple[str, ...]:
    out: list[str] = []
    if not_judged:
        out.append(f"{not_judged} labelled rows have no verdict from this judge yet and are "
                   "left out")
    c = judged.consistency
    if c is not None and c.n_order_pairs == 0:
        out.append("the judge ran one order only: position consistency not measured (run it "
                   "with --swap, or import both orders)")
    elif c is not None and c.n_order_pairs_flipped:
        fate = "counted as tie (MT-Bench rule)" if rule == "all_agree" else "settled by majority"
        out.append(f"{c.n_order_pairs_flipped} of {c.n_order_pairs} rows changed verdict when A "
                   f"and B swapped places ({fate})")
    unscored = int(target.items["verdict"].isin(["unscored", "unsure"]).sum())
    if unscored:
        out.append(f"{unscored} target rows without a decided verdict (unscored/unsure) are "
                   "left out of the win rate")
    if win.refused:
        out.append(f"corrected win rate refused: {win.reason}")
    out += [f"corrected win rate: {w}" for w in win.warnings]
    out.append("the correction assumes the judge's errors (its 3 x 3 misclassification matrix) "
               "are the same on the target as on the labelled rows; the shares may differ")
    return tuple(out)


__all__ = ["PAIRWISE_CRITERION", "ModelPairWinRate", "PairwiseReport", "pairwise_report"]
