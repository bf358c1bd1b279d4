"""The calibration report of one judge on one dataset: labels and verdicts in, numbers out.

:func:`calibration_report` loads the inputs (:mod:`judges.reporting.inputs`), builds the
calibration evidence and the target run (:mod:`judges.reporting.evidence`), and asks the one
estimation path, :func:`judges.calibration.answer_pass_rate`, for the answer. It adds what only
the database knows (disagreements with their text, human-human agreement, flip rates, a
labelling plan) and a stable JSON form (:meth:`JudgeReport.to_json`, documented in
``docs/report-json.md``).

Nothing here renders anything; the CLI (``calibrate report``) and the app's Calibration page
are thin layers over :func:`calibration_report`, and a judge card carries the same evidence, so
``calibrate score`` on the target's verdicts gives the same number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.aggregation import rule_for
from judges.calibration import (
    VOCABULARY,
    CalibrationEvidence,
    PassRateAnswer,
    TargetRun,
    answer_pass_rate,
    interval_json,
    kappa_from_table,
    rates_from_confusion,
)
from judges.calibration.evidence import OUTCOME_UNSCORED, OUTCOME_UNSURE
from judges.providers import STAND_IN_NOTE
from judges.reporting.design import DEFAULT_HALF_WIDTH, Plan, plan_labels
from judges.reporting.evidence import (
    calibration_evidence,
    escalation_of_labels,
    judged_rows,
    per_row,
    run_counts,
)
from judges.reporting.inputs import (
    DEFAULT_SEED,
    AnswerDesign,
    HumanLabels,
    JudgeItems,
    JudgeRef,
    find_judge,
    load_human_labels,
    load_judge_items,
    stand_in_specs,
)
from judges.reporting.transfer import transfer_json
from judges.workspace import Workspace
from labels.errors import CalibrateError, NotFoundError
from labels.models import DEFAULT_CRITERION
from labels.stores.label_store import LabelStore

SCHEMA_VERSION = 3
"""Version of the JSON shape of :meth:`JudgeReport.to_json` (see ``docs/report-json.md``)."""

DEFAULT_N_BOOT = 2000
NO_SEGMENT = "(none)"


# -- the report -----------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeReport(AnswerDesign):
    """Everything the Calibration page and ``calibrate report`` show for one judge.

    Attributes:
        dataset: Dataset holding the human labels.
        target: Dataset whose pass rate is estimated (``dataset`` unless ``--target``).
        criterion: Label criterion.
        judge: The judge.
        rule: Aggregation rule of repeated/swapped calls.
        answer: The answer of the one estimation path (headline, design, rates, warnings).
        evidence: The calibration evidence the answer rests on (what a judge card carries).
        options: The estimation options (``design``, ``confidence``, ``seed``, ``n_boot``).
        human: Human labels and human-human agreement.
        judge_items: The judge's verdicts on ``dataset``.
        target_items: The judge's verdicts on ``target`` (same object when it is ``dataset``).
        rows: The joined labelled rows: ``item_id``, ``human``, ``judge``, ``segment``,
            ``document_id``, ``agree`` (both pass/fail and equal; ``NA`` otherwise),
            ``flipped``, ``order_flipped``, ``repeat_flipped``, ``reasoning``, ``note``,
            ``annotators``, ``unscored_reason``.
        not_judged: Labelled items the judge has no verdict for yet.
        plan: The labelling plan.
        warnings: Every caveat: the answer's, then what only the database knows.
        stand_in: The stand-in providers (``scripted/…``) behind the verdicts; empty for a
            model. Said in the warnings, the JSON (``judge.stand_in``) and the page.
    """

    dataset: str
    target: str
    criterion: str
    judge: JudgeRef
    rule: str
    answer: PassRateAnswer
    evidence: CalibrationEvidence
    options: dict[str, Any]
    human: HumanLabels
    judge_items: JudgeItems
    target_items: JudgeItems
    rows: pd.DataFrame
    not_judged: int
    plan: Plan
    warnings: tuple[str, ...]
    stand_in: tuple[str, ...] = ()

    # -- derived views ----------------------------------------------------------------------

    def disagreements(self) -> pd.DataFrame:
        """Labelled rows where the judge and the human disagree, or the judge flipped.

        Rows with both verdicts pass/fail and different come first, then flips.
        """
        rows = self.rows
        disagree = rows["agree"].eq(False).fillna(False).astype(bool)
        flipped = rows["flipped"].fillna(False).astype(bool)
        out = rows[disagree | flipped].copy()
        out["kind"] = np.where(disagree[disagree | flipped], "disagree", "flip")
        return out.sort_values(["kind", "item_id"], kind="stable").reset_index(drop=True)

    def segments_frame(self) -> pd.DataFrame:
        """Per-segment table: segment, n, sensitivity, FPR, kappa, corrected pass rate.

        Intervals as text for people (:func:`~judges.calibration.describe_interval`): a
        segment's interval that collapsed is said in words ("all 14 agree").
        """
        records = []
        for seg in self.answer.segments:
            records.append({
                "segment": seg.segment,
                "n_labelled": seg.n_labelled,
                "n_target": seg.n_target,
                "sensitivity": seg.rates.sensitivity.describe(),
                "fpr": seg.rates.fpr.describe(),
                "kappa": seg.rates.kappa.describe(agreement=True),
                "corrected_pass_rate": seg.corrected.describe(),
                "observed_pass_rate": seg.observed.describe(),
            })
        return pd.DataFrame(records, columns=[
            "segment", "n_labelled", "n_target", "sensitivity", "fpr", "kappa",
            "corrected_pass_rate", "observed_pass_rate",
        ])

    def swap_flip_rate(self) -> dict[str, Any]:
        """Share of judged items of ``dataset`` whose verdict changed when positions swapped."""
        c = self.judge_items.consistency
        return interval_json(c.flip_rate_order if c is not None else None)

    def repeat_flip_rate(self) -> dict[str, Any]:
        """Share of judged items of ``dataset`` whose repeated calls disagreed."""
        c = self.judge_items.consistency
        return interval_json(c.flip_rate_repeat if c is not None else None)

    def _decided_with(self, outcome: int) -> int:
        lab = self.evidence.labelled
        return int(((lab.human >= 0) & (lab.outcome == outcome)).sum())

    # -- JSON -------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form documented in ``docs/report-json.md``."""
        a = self.answer
        cm = a.confusion
        counts = a.counts
        consistency = self.judge_items.consistency
        agreement = self.human.agreement
        human_agreement = None
        if agreement is not None:
            human_agreement = {
                "annotators": len(self.human.annotators),
                "items": self.human.n_overlap,
                "kappa": interval_json(agreement.mean_pairwise_kappa),
                "krippendorff_alpha": interval_json(agreement.krippendorff),
                "pairs": [
                    {"a": p.rater_a, "b": p.rater_b, "kappa": interval_json(p.kappa)}
                    for p in agreement.pairwise
                ],
            }
        sample = rates_from_confusion(cm, confidence=a.kappa.confidence)
        target = counts["target"]
        return {
            "schema_version": SCHEMA_VERSION,
            "dataset": self.dataset,
            "target": self.target,
            "criterion": self.criterion,
            "judge": {**self.judge.to_json(), "stand_in": bool(self.stand_in)},
            "aggregation": self.rule,
            "confidence": a.kappa.confidence,
            "n": cm.n,
            "n_target": target["judged"],
            "m0": cm.m0,
            "m1": cm.m1,
            "confusion": {"tp": cm.tp, "fn": cm.fn, "fp": cm.fp, "tn": cm.tn},
            **a.to_json(),
            "sensitivity": interval_json(a.rates.sensitivity),
            "specificity": interval_json(a.rates.specificity),
            "fpr": interval_json(a.rates.fpr),
            "kappa": interval_json(a.kappa),
            "sample_rates": {
                "sensitivity": interval_json(sample.sensitivity),
                "specificity": interval_json(sample.specificity),
                "fpr": interval_json(sample.fpr),
                "kappa": interval_json(kappa_from_table([[cm.tn, cm.fp], [cm.fn, cm.tp]],
                                                        confidence=a.kappa.confidence)),
            },
            "human_pass_rate": interval_json(a.labels_only),
            "selection": {
                "labels": dict(a.selections),
                "check": None if a.check is None else a.check.message,
            },
            "counts": {k: dict(v) for k, v in counts.items()},
            "calibration_strata": a.strata.by_name(),
            "vocabulary": dict(VOCABULARY),
            # The judge's unscored / unsure labelled rows among those the humans decided (the
            # rows a rate could have used), as in every earlier schema.
            "unscored": {"labelled": self._decided_with(OUTCOME_UNSCORED),
                         "target": target["unscored"]},
            "unsure": {
                "human": counts["human"]["unsure"],
                "judge_labelled": self._decided_with(OUTCOME_UNSURE),
                "judge_target": target["unsure"],
            },
            "not_judged": self.not_judged,
            "swap_flip_rate": self.swap_flip_rate(),
            "repeat_flip_rate": self.repeat_flip_rate(),
            "flipped_items": 0 if consistency is None else int(consistency.any_flipped.sum()),
            "human_agreement": human_agreement,
            "segments": [
                {
                    "segment": seg.segment,
                    "n": seg.n_labelled,
                    "n_target": seg.n_target,
                    "confusion": {"tp": seg.confusion.tp, "fn": seg.confusion.fn,
                                  "fp": seg.confusion.fp, "tn": seg.confusion.tn},
                    "sensitivity": interval_json(seg.rates.sensitivity),
                    "fpr": interval_json(seg.rates.fpr),
                    "kappa": interval_json(seg.rates.kappa),
                    "observed_pass_rate": interval_json(seg.observed),
                    "corrected_pass_rate": interval_json(seg.corrected),
                }
                for seg in a.segments
            ],
            "transfer": None if a.transfer is None else transfer_json(a.transfer),
            "disagreements": int(self.rows["agree"].eq(False).fillna(False).astype(bool).sum()),
            "plan": self.plan.to_json(),
            "warnings": list(self.warnings),
        }


def _rows_of(few: npt.NDArray[Any], ids: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """For each of the (unique) ids ``few``, its row in ``ids`` (-1: none).

    The few are hashed and every id probes them: cheaper than hashing 1 M ids for 10 k.
    """
    found = np.asarray(pd.Index(few, dtype=object).get_indexer(ids))
    out = np.full(len(few), -1, dtype=np.int64)
    out[found[found >= 0]] = np.flatnonzero(found >= 0)
    return out


def calibration_report(
    workspace: Workspace, dataset: str, judge: str | JudgeRef,
    *, criterion: str | None = None, target: str | None = None, design: str | None = None,
    rule: str | None = None, confidence: float = 0.95,
    target_half_width: float = DEFAULT_HALF_WIDTH, seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_N_BOOT,
) -> JudgeReport:
    """Calibrate one judge against the human labels of ``dataset``.

    Args:
        workspace: The open database (labels, judge runs, alignment records).
        dataset: Dataset with the human labels (and the judge's verdicts on them).
        judge: Judge name (latest revision run on ``dataset``), config id or :class:`JudgeRef`.
        criterion: Label criterion (default: the judge's criterion, else ``faithfulness``).
        target: Dataset whose pass rate to estimate (default ``dataset``); another dataset
            judged by the same config means a separate calibration set (Lee et al. 2025).
        design: Force a sampling design (one of
            :data:`judges.calibration.DESIGN_ESTIMATORS`), checked against the labels'
            recorded provenance; default: the design that provenance supports.
        rule: How repeated / position-swapped calls combine per item (``all_agree`` or
            ``majority``); default: the judge config's ``aggregation`` (``all_agree`` for
            imported verdicts).
        confidence: Level of every interval.
        target_half_width: Half-width the labelling plan aims for.
        seed: Seed of every bootstrap (document-clustered intervals, human agreement), so the
            same data always give the same numbers.
        n_boot: Bootstrap replicates of the document-clustered intervals.

    Returns:
        A :class:`JudgeReport`.

    Raises:
        NotFoundError: unknown dataset, target or judge.
        CalibrateError: a pairwise dataset, or an explicit design the labels' provenance
            contradicts (the reason says how).
    """
    store = workspace.labels
    info = store.dataset(dataset)
    if info.kind != "pointwise":
        raise CalibrateError(
            f"dataset {dataset!r} is {info.kind}: calibration_report covers pass/fail "
            "(pointwise) judges; use judges.reporting.pairwise_report (calibrate report "
            "chooses it by itself)"
        )
    target_name = target or dataset
    if target_name != dataset:
        store.dataset(target_name)
    ref = judge if isinstance(judge, JudgeRef) else find_judge(workspace, judge, dataset=dataset)
    crit = criterion or ref.criterion or DEFAULT_CRITERION
    rule_name = rule_for(ref.config, rule)

    human = load_human_labels(store, dataset, crit, seed=seed, confidence=confidence)
    if human.items.empty:
        raise NotFoundError(
            f"dataset {dataset!r} has no human labels for criterion {crit!r}: label some rows "
            "(Label page) or import them (calibrate labels import)"
        )
    # the judge's reasoning is shown for the labelled rows only: read it for those
    judged = load_judge_items(workspace, dataset, ref, rule=rule_name, confidence=confidence,
                              texts_for=human.items["item_id"].astype(str).tolist())
    if judged.items.empty:
        raise NotFoundError(
            f"judge {ref.name!r} ({ref.config_id}) has no verdicts on dataset {dataset!r}: run "
            "it or import its verdicts first"
        )
    target_items = (
        judged if target_name == dataset
        else load_judge_items(workspace, target_name, ref, rule=rule_name, confidence=confidence,
                              texts_for=())
    )
    if target_items.items.empty:
        raise NotFoundError(
            f"judge {ref.name!r} has no verdicts on target dataset {target_name!r}"
        )

    # Labels and verdicts meet by row position: a 1 M-row dataset is joined through arrays,
    # never through pandas maps of 1 M-key dicts.
    groups = store.item_groups(dataset)
    population, outcome = run_counts(groups, judged.items)
    provenance = store.provenance_frame(dataset, criterion=crit)
    evidence = calibration_evidence(
        labelled=human.items, provenance=provenance, groups=groups, population=population,
        outcome=outcome, judged=judged.items, rule=rule_name,
        escalated_ids=escalated_rows(store, dataset, crit, provenance),
    )  # fmt: skip
    if target_name == dataset:
        run = TargetRun(population, same_run=True)
    else:
        run = TargetRun(run_counts(store.item_groups(target_name), target_items.items)[0])
    answer = answer_pass_rate(evidence, run, design=design, confidence=confidence, seed=seed,
                              n_boot=n_boot)  # fmt: skip
    if design is not None and answer.decision.refused:
        raise CalibrateError(answer.decision.reason)
    rows = _labelled_rows(human, judged, groups)
    not_judged = int(rows["judge"].isna().sum())
    rows = rows[rows["judge"].notna()].reset_index(drop=True)

    warnings = list(answer.warnings)
    stand_in = stand_in_specs(workspace, ref, dataset, target_name)
    if stand_in:
        warnings.insert(0, f"STAND-IN: the verdicts come from {', '.join(stand_in)}, a "
                           f"{STAND_IN_NOTE}")
    consistency = judged.consistency
    if consistency is not None and int(consistency.any_flipped.sum()):
        n_flip = int(consistency.any_flipped.sum())
        fate = "excluded as unsure" if rule_name == "all_agree" else "settled by majority"
        warnings.append(f"{n_flip} items flipped across repeats/orders ({fate})")
    for name, est in (("sensitivity", answer.rates.sensitivity),
                      ("specificity", answer.rates.specificity), ("kappa", answer.kappa)):
        if est.refused:
            warnings.append(f"{name} refused: {est.reason}")
    reuse = workspace.alignment.reuse_warning(dataset, crit)  # calibrate judge align's test use
    if reuse:
        warnings.append(f"test rows of {dataset}/{crit}: {reuse}")
    all_labelled = target_name == dataset and len(human.items) >= store.count_items(dataset)
    plan = plan_labels(answer, target_half_width=target_half_width, all_labelled=all_labelled)
    return JudgeReport(
        dataset=dataset, target=target_name, criterion=crit, judge=ref, rule=rule_name,
        answer=answer, evidence=evidence,
        options={"design": design, "confidence": confidence, "seed": seed, "n_boot": n_boot},
        human=human, judge_items=judged, target_items=target_items, rows=rows,
        not_judged=not_judged, plan=plan, warnings=tuple(dict.fromkeys(warnings)),
        stand_in=tuple(stand_in),
    )


def escalated_rows(store: LabelStore, dataset: str, criterion: str,
                   provenance: pd.DataFrame) -> tuple[str, ...] | None:
    """The rows of the escalation the dataset's escalated labels were drawn from, if one."""
    rule = escalation_of_labels(provenance)
    if rule is None:
        return None
    escalation = store.escalation(dataset, criterion, rule=rule)
    return None if escalation is None else escalation.item_ids


def _labelled_rows(human: HumanLabels, judged: JudgeItems, groups: dict[str, Any]) -> pd.DataFrame:
    """One row per labelled item with its human and judge verdicts and the judge's texts."""
    judged_at = judged_rows(groups["item_id"], judged.items)
    verdicts = judged.items["verdict"].to_numpy(dtype=object)
    dataset_verdicts = per_row(verdicts, judged_at)
    labelled = human.items.copy()
    at = _rows_of(labelled["item_id"].to_numpy(dtype=object), groups["item_id"])
    for column in ("segment", "document_id"):
        labelled[column] = per_row(groups[column], at)
    labelled["judge"] = per_row(dataset_verdicts, at)
    rows = labelled.rename(columns={"verdict": "human"})
    in_judged = judged_at[np.maximum(at, 0)]
    has = (at >= 0) & (in_judged >= 0)
    for column in ("flipped", "order_flipped", "repeat_flipped", "reasoning",
                   "unscored_reason"):
        values = judged.items[column].to_numpy(dtype=object)
        out = np.full(len(rows), np.nan, dtype=object)
        out[has] = values[in_judged[has]]
        rows[column] = pd.Series(out, dtype=object)
    decided = rows["human"].isin(["pass", "fail"]) & rows["judge"].isin(["pass", "fail"])
    rows["agree"] = pd.array(
        [bool(h == j) if d else pd.NA
         for h, j, d in zip(rows["human"], rows["judge"], decided, strict=True)],
        dtype="boolean",
    )
    return rows[[
        "item_id", "human", "judge", "segment", "document_id", "agree", "flipped",
        "order_flipped", "repeat_flipped", "reasoning", "note", "annotators",
        "unscored_reason",
    ]]
