"""The calibration report of one judge on one dataset: labels and verdicts in, numbers out.

:func:`calibration_report` loads the inputs (:mod:`judges.reporting.inputs`), chooses the design
(:mod:`judges.reporting.design`), joins labels and verdicts by item id, calls
:func:`judges.calibration.build_summary`, and adds disagreements, a labelling plan and a stable
JSON form (:meth:`JudgeReport.to_json`, documented in ``docs/report-json.md``).

Nothing here renders anything; the CLI (``calibrate report``) and the app's Calibration page
are thin layers over :func:`calibration_report`, so both show the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.aggregation import rule_for
from judges.alignment.store import AlignStore
from judges.calibration import (
    DESIGNS,
    CalibrationSummary,
    TransferDiagnostics,
    build_summary,
    format_interval,
    interval_json,
    normalize_verdicts,
)
from judges.providers import STAND_IN_NOTE
from judges.reporting.design import DEFAULT_HALF_WIDTH, Plan, plan_labels
from judges.reporting.headline import Headline, design_headline, headline_json
from judges.reporting.inputs import (
    DEFAULT_SEED,
    HumanLabels,
    JudgeItems,
    JudgeRef,
    find_judge,
    load_human_labels,
    load_judge_items,
    stand_in_specs,
)
from judges.reporting.transfer import transfer_check, transfer_json
from labels.errors import CalibrateError, NotFoundError
from labels.models import DEFAULT_CRITERION
from labels.store import LabelStore

SCHEMA_VERSION = 2
"""Version of the JSON shape of :meth:`JudgeReport.to_json` (see ``docs/report-json.md``)."""

DEFAULT_N_BOOT = 2000
NO_SEGMENT = "(none)"


# -- the report -----------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeReport:
    """Everything the Calibration page and ``calibrate report`` show for one judge.

    Attributes:
        dataset: Dataset holding the human labels.
        target: Dataset whose pass rate is estimated (``dataset`` unless ``--target``).
        criterion: Label criterion.
        judge: The judge.
        design: Sampling design (see :func:`choose_design`).
        design_reason: Why that design.
        rule: Aggregation rule of repeated/swapped calls.
        stats: The statistics (:class:`~judges.calibration.CalibrationSummary`).
        human: Human labels and human-human agreement.
        judge_items: The judge's verdicts on ``dataset``.
        target_items: The judge's verdicts on ``target`` (same object when it is ``dataset``).
        rows: The joined labelled rows: ``item_id``, ``human``, ``judge``, ``segment``,
            ``document_id``, ``agree`` (both pass/fail and equal; ``NA`` otherwise),
            ``flipped``, ``order_flipped``, ``repeat_flipped``, ``reasoning``, ``note``,
            ``annotators``, ``unscored_reason``.
        not_judged: Labelled items the judge has no verdict for yet (left out, counted).
        plan: The labelling plan.
        warnings: Every caveat, report-level first.
        headline: The design-based headline (whole-run corrected pass rate, population rates).
        transfer: Segment-mix and segment-accuracy checks with the segment-aware correction
            (target another dataset, rows with segments), else ``None``.
        stand_in: The stand-in providers (``scripted/…``) behind the verdicts; empty for a
            model. Said in the warnings, the JSON (``judge.stand_in``) and the page.
    """

    dataset: str
    target: str
    criterion: str
    judge: JudgeRef
    design: str
    design_reason: str
    rule: str
    stats: CalibrationSummary
    human: HumanLabels
    judge_items: JudgeItems
    target_items: JudgeItems
    rows: pd.DataFrame
    not_judged: int
    plan: Plan
    warnings: tuple[str, ...]
    headline: Headline | None = None
    transfer: TransferDiagnostics | None = None
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
        """Per-segment table: segment, n, sensitivity, FPR, kappa, corrected pass rate."""
        records = []
        for seg in self.stats.segments:
            records.append({
                "segment": seg.segment,
                "n_labelled": seg.n_labelled,
                "n_target": seg.n_target,
                "sensitivity": seg.sensitivity.format(),
                "fpr": seg.fpr.format(),
                "kappa": seg.kappa.format(),
                "corrected_pass_rate": format_interval(interval_json(seg.pass_rate)),
                "observed_pass_rate": format_interval(interval_json(seg.naive)),
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

    def counts(self) -> dict[str, int]:
        """Unsure / unscored counts shown beside the rates."""
        rows = self.rows
        human_decided = rows["human"].isin(["pass", "fail"])
        target = self.target_items.items
        return {
            "human_unsure": int((~human_decided).sum()),
            "judge_unsure_labelled": int((human_decided & rows["judge"].eq("unsure")).sum()),
            "judge_unscored_labelled": int((human_decided & rows["judge"].eq("unscored")).sum()),
            "judge_unsure_target": int(target["verdict"].eq("unsure").sum()),
            "judge_unscored_target": int(target["verdict"].eq("unscored").sum()),
            "not_judged": self.not_judged,
        }

    # -- JSON -------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form documented in ``docs/report-json.md``."""
        s = self.stats
        cm = s.counts.confusion
        counts = self.counts()
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
        clustered = None
        if s.clustered is not None:
            clustered = {name: interval_json(est) for name, est in sorted(s.clustered.items())}
        out = self._json(s, cm, counts, consistency, human_agreement, clustered)
        if self.headline is not None:
            head = headline_json(self.headline, interval_json)
            out["estimators"][self.headline.corrected.method] = {
                **head["corrected_pass_rate"], "assumption": head["assumption"],
            }  # fmt: skip
            out["sample_rates"] = {
                name: out[name] for name in ("sensitivity", "specificity", "fpr", "kappa")
            }
            out.update(head)
        out["transfer"] = None if self.transfer is None else transfer_json(self.transfer)
        return out

    def _json(
        self, s: CalibrationSummary, cm: Any, counts: dict[str, int], consistency: Any,
        human_agreement: Any, clustered: Any,
    ) -> dict[str, Any]:  # fmt: skip
        return {
            "schema_version": SCHEMA_VERSION,
            "dataset": self.dataset,
            "target": self.target,
            "criterion": self.criterion,
            "judge": {**self.judge.to_json(), "stand_in": bool(self.stand_in)},
            "design": self.design,
            "design_reason": self.design_reason,
            "aggregation": self.rule,
            "confidence": s.confidence,
            "n": cm.n,
            "n_target": s.counts.n_target,
            "m0": cm.m0,
            "m1": cm.m1,
            "confusion": {"tp": cm.tp, "fn": cm.fn, "fp": cm.fp, "tn": cm.tn},
            "sensitivity": interval_json(s.rates.sensitivity),
            "specificity": interval_json(s.rates.specificity),
            "fpr": interval_json(s.rates.fpr),
            "kappa": interval_json(s.kappa),
            "observed_pass_rate": interval_json(s.naive),
            "corrected_pass_rate": interval_json(s.corrected),
            "human_pass_rate": interval_json(s.estimators["labels_only"]),
            "method": s.corrected.method,
            "assumption": s.corrected.assumption,
            "estimators": {
                name: {**interval_json(est), "assumption": est.assumption}
                for name, est in sorted(s.estimators.items())
            },
            "unscored": {
                "labelled": counts["judge_unscored_labelled"],
                "target": counts["judge_unscored_target"],
            },
            "unsure": {
                "human": counts["human_unsure"],
                "judge_labelled": counts["judge_unsure_labelled"],
                "judge_target": counts["judge_unsure_target"],
            },
            "not_judged": self.not_judged,
            "swap_flip_rate": self.swap_flip_rate(),
            "repeat_flip_rate": self.repeat_flip_rate(),
            "flipped_items": 0 if consistency is None else int(consistency.any_flipped.sum()),
            "human_agreement": human_agreement,
            "clustered": clustered,
            "segments": [
                {
                    "segment": seg.segment,
                    "n": seg.n_labelled,
                    "n_target": seg.n_target,
                    "confusion": {"tp": seg.confusion.tp, "fn": seg.confusion.fn,
                                  "fp": seg.confusion.fp, "tn": seg.confusion.tn},
                    "sensitivity": interval_json(seg.sensitivity),
                    "fpr": interval_json(seg.fpr),
                    "kappa": interval_json(seg.kappa),
                    "observed_pass_rate": interval_json(seg.naive),
                    "corrected_pass_rate": interval_json(seg.pass_rate),
                }
                for seg in s.segments
            ],
            "disagreements": int(self.rows["agree"].eq(False).fillna(False).astype(bool).sum()),
            "plan": self.plan.to_json(),
            "warnings": list(self.warnings),
        }


def _judged_rows(ids: npt.NDArray[Any], judged: pd.DataFrame) -> npt.NDArray[np.int64]:
    """For each row of a dataset (``ids`` in file order), its row in ``judged`` (-1: none).

    ``judged`` holds the judged items in file order, a subset of the rows; when the judge ran
    on every row (the usual case at scale) the two id arrays are equal and no lookup is made.
    """
    judged_ids = judged["item_id"].to_numpy(dtype=object)
    if len(judged_ids) == len(ids) and np.array_equal(judged_ids, ids):
        return np.arange(len(ids), dtype=np.int64)
    return np.asarray(pd.Index(judged_ids, dtype=object).get_indexer(ids), dtype=np.int64)


def _rows_of(few: npt.NDArray[Any], ids: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
    """For each of the (unique) ids ``few``, its row in ``ids`` (-1: none).

    The few are hashed and every id probes them: cheaper than hashing 1 M ids for 10 k.
    """
    found = np.asarray(pd.Index(few, dtype=object).get_indexer(ids))
    out = np.full(len(few), -1, dtype=np.int64)
    out[found[found >= 0]] = np.flatnonzero(found >= 0)
    return out


def _per_row(values: npt.NDArray[Any], rows: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
    """``values[rows]`` as objects, NaN where ``rows`` is -1 (no such row)."""
    out = np.asarray(values, dtype=object)[np.maximum(rows, 0)] if len(values) else (
        np.full(len(rows), np.nan, dtype=object))
    out[rows < 0] = np.nan
    return out


def calibration_report(
    store: LabelStore,
    dataset: str,
    judge: str | JudgeRef,
    *,
    criterion: str | None = None,
    target: str | None = None,
    design: str | None = None,
    rule: str | None = None,
    confidence: float = 0.95,
    target_half_width: float = DEFAULT_HALF_WIDTH,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_N_BOOT,
) -> JudgeReport:
    """Calibrate one judge against the human labels of ``dataset``.

    Args:
        store: The label store.
        dataset: Dataset with the human labels (and the judge's verdicts on them).
        judge: Judge name (latest revision run on ``dataset``), config id or :class:`JudgeRef`.
        criterion: Label criterion (default: the judge's criterion, else ``faithfulness``).
        target: Dataset whose pass rate to estimate (default ``dataset``); another dataset
            judged by the same config means a separate calibration set (Lee et al. 2025).
        design: Force a sampling design (one of :data:`judges.calibration.DESIGNS`); default
            :func:`choose_design`.
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
        CalibrateError: a pairwise dataset, or a design name that does not exist.
    """
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
    ref = judge if isinstance(judge, JudgeRef) else find_judge(store, judge, dataset=dataset)
    crit = criterion or ref.criterion or DEFAULT_CRITERION
    rule_name = rule_for(ref.config, rule)

    human = load_human_labels(store, dataset, crit, seed=seed, confidence=confidence)
    if human.items.empty:
        raise NotFoundError(
            f"dataset {dataset!r} has no human labels for criterion {crit!r}: label some rows "
            "(Label page) or import them (calibrate labels import)"
        )
    # the judge's reasoning is shown for the labelled rows only: read it for those
    judged = load_judge_items(store, dataset, ref, rule=rule_name, confidence=confidence,
                              texts_for=human.items["item_id"].astype(str).tolist())
    if judged.items.empty:
        raise NotFoundError(
            f"judge {ref.name!r} ({ref.config_id}) has no verdicts on dataset {dataset!r}: run "
            "it or import its verdicts first"
        )
    target_items = (
        judged if target_name == dataset
        else load_judge_items(store, target_name, ref, rule=rule_name, confidence=confidence,
                              texts_for=())
    )
    if target_items.items.empty:
        raise NotFoundError(
            f"judge {ref.name!r} has no verdicts on target dataset {target_name!r}"
        )

    # Labels and verdicts meet by row position: a 1 M-row dataset is joined through arrays,
    # never through pandas maps of 1 M-key dicts.
    groups = store.item_groups(dataset)
    judged_at = _judged_rows(groups["item_id"], judged.items)
    verdicts = judged.items["verdict"].to_numpy(dtype=object)
    dataset_verdicts = _per_row(verdicts, judged_at)
    labelled = human.items.copy()
    at = _rows_of(labelled["item_id"].to_numpy(dtype=object), groups["item_id"])
    for column in ("segment", "document_id"):
        labelled[column] = _per_row(groups[column], at)
    labelled["judge"] = _per_row(dataset_verdicts, at)
    not_judged = int(labelled["judge"].isna().sum())
    has_verdict = labelled["judge"].notna().to_numpy()
    rows = labelled[has_verdict].reset_index(drop=True)
    rows = rows.rename(columns={"verdict": "human"})
    in_judged = judged_at[at[has_verdict]]
    for column in ("flipped", "order_flipped", "repeat_flipped", "reasoning",
                   "unscored_reason"):
        rows[column] = pd.Series(judged.items[column].iloc[in_judged].to_numpy(dtype=object),
                                 dtype=object)
    decided = rows["human"].isin(["pass", "fail"]) & rows["judge"].isin(["pass", "fail"])
    rows["agree"] = pd.array(
        [bool(h == j) if d else pd.NA
         for h, j, d in zip(rows["human"], rows["judge"], decided, strict=True)],
        dtype="boolean",
    )

    if target_name == dataset:
        target_groups, target_at = groups, judged_at
    else:
        target_groups = store.item_groups(target_name)
        target_at = _judged_rows(target_groups["item_id"], target_items.items)
    labelled_all = labelled.rename(columns={"verdict": "human"})
    target_verdicts = _per_row(target_items.items["verdict"].to_numpy(dtype=object), target_at)
    headline = design_headline(
        labelled=labelled_all,
        provenance=store.provenance_frame(dataset, criterion=crit),
        dataset_verdicts=dataset_verdicts,
        target_verdicts=target_verdicts,
        same_dataset=target_name == dataset,
        requested=design,
        confidence=confidence,
        seed=seed,
        n_boot=n_boot,
    )
    chosen = headline.decision.design or "same_run_stratified"
    reason, design_warnings = headline.decision.reason, headline.decision.warnings
    # The side-by-side estimators of the summary keep the previous release's design names.
    legacy = chosen if chosen in DESIGNS else "same_run_stratified"

    target_frame = target_items.items
    # the segment of each judged target row (its rows in target_frame's order)
    target_rows = np.empty(len(target_frame), dtype=np.int64)
    target_rows[target_at[target_at >= 0]] = np.flatnonzero(target_at >= 0)
    target_segments = pd.Series(target_groups["segment"][target_rows], dtype=object)
    has_segments = rows["segment"].notna().any() or target_segments.notna().any()
    doc = rows["document_id"]
    has_docs = bool(doc.notna().any() and doc.dropna().duplicated().any())

    stats = build_summary(
        rows["human"].to_numpy(dtype=object),
        rows["judge"].to_numpy(dtype=object),
        normalize_verdicts(target_frame["verdict"].to_numpy(dtype=object)),
        design=legacy,
        segments_labelled=(
            rows["segment"].fillna(NO_SEGMENT).astype(str).to_numpy() if has_segments else None
        ),
        segments_target=(
            target_segments.fillna(NO_SEGMENT).astype(str).to_numpy() if has_segments else None
        ),
        doc_ids=(
            doc.where(doc.notna(), "item:" + rows["item_id"].astype(str)).astype(str).to_numpy()
            if has_docs else None
        ),
        rng=np.random.default_rng(seed) if has_docs else None,
        n_boot=n_boot,
        confidence=confidence,
    )
    # The summary's exclusion warnings called unsure rows "unscored"; the headline counts them
    # in the one vocabulary and keeps them in the estimand.
    warnings = [w for w in stats.warnings if "excluded (judge unscored)" not in w]
    stand_in = stand_in_specs(store, ref, dataset, target_name)
    if stand_in:
        warnings.insert(0, f"STAND-IN: the verdicts come from {', '.join(stand_in)}, a "
                           f"{STAND_IN_NOTE}")
    warnings += list(design_warnings)
    tc = headline.counts["target"]
    if tc["not_judged"]:
        # The transported estimator covers the target rows the judge ran on; the others keep
        # every target row, never-run ones in the not-judged stratum.
        outside = tc["not_run"] if headline.decision.estimator == "lee_stratified" else 0
        kept = tc["not_judged"] - outside
        parts = [f"{tc['judged']} of {tc['rows']} target rows judged; {tc['not_judged']} not "
                 f"judged ({tc['unscored']} unscored, {tc['unsure']} unsure, {tc['not_run']} "
                 "not run)"]
        if outside:
            parts.append(f"the {outside} not run are outside the estimand")
        if kept:
            parts.append(f"{kept} are kept in it")
        warnings.append("; ".join(parts) + f" ({headline.population})")
    for w in headline.corrected.warnings:
        warnings.append(f"corrected pass rate: {w}")
    if headline.corrected.refused:
        warnings.append(f"corrected pass rate refused: {headline.corrected.reason}")
    if not_judged:
        warnings.append(
            f"{not_judged} labelled rows have no verdict from this judge yet and are left out"
        )
    consistency = judged.consistency
    if consistency is not None and int(consistency.any_flipped.sum()):
        n_flip = int(consistency.any_flipped.sum())
        fate = "excluded as unsure" if rule_name == "all_agree" else "settled by majority"
        warnings.append(f"{n_flip} items flipped across repeats/orders ({fate})")
    for name, est in (("sensitivity", headline.rates.sensitivity),
                      ("specificity", headline.rates.specificity), ("kappa", headline.kappa)):
        if est.refused:
            warnings.append(f"{name} refused: {est.reason}")
    transfer = None
    if target_name != dataset and has_segments:
        transfer = transfer_check(
            labelled=labelled_all, dataset_segments=groups["segment"],
            dataset_verdicts=dataset_verdicts, target_segments=target_groups["segment"],
            target_verdicts=target_verdicts, no_segment=NO_SEGMENT,
            confidence=confidence, seed=seed,
        )  # fmt: skip
        if transfer is not None and transfer.warning:
            warnings.append(f"transfer: {transfer.warning}")
            warnings += [f"segment-aware corrected pass rate: {w}"
                         for w in transfer.segment_aware.warnings]  # fmt: skip
    reuse = AlignStore(store.db).reuse_warning(dataset, crit)  # calibrate judge align's test use
    if reuse:
        warnings.append(f"test rows of {dataset}/{crit}: {reuse}")
    all_labelled = target_name == dataset and len(human.items) >= store.count_items(dataset)
    plan = plan_labels(stats, target_half_width=target_half_width, all_labelled=all_labelled)
    return JudgeReport(
        dataset=dataset,
        target=target_name,
        criterion=crit,
        judge=ref,
        design=chosen,
        design_reason=reason,
        rule=rule_name,
        stats=stats,
        human=human,
        judge_items=judged,
        target_items=target_items,
        rows=rows[[
            "item_id", "human", "judge", "segment", "document_id", "agree", "flipped",
            "order_flipped", "repeat_flipped", "reasoning", "note", "annotators",
            "unscored_reason",
        ]],
        not_judged=not_judged,
        plan=plan,
        warnings=tuple(dict.fromkeys(warnings)),
        headline=headline,
        transfer=transfer,
        stand_in=tuple(stand_in),
    )
