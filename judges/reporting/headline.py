"""The report's headline numbers, conditioned on the judge's verdict, for the whole run.

The headline corrected pass rate estimates the true pass rate of *every* row of the target run
(rows the judge did not judge included), by the estimator the labels' recorded provenance
supports (:func:`judges.calibration.resolve_design`):

* labels from the target run (any queue order but active) -> verdict-stratified;
* labels drawn by the active queue, with their probabilities -> inverse-probability weighting;
* labels from another dataset -> the judge's verdict-reweighted error rates transferred to the
  target (Lee et al. 2025 with three judge outcomes).

Headline sensitivity, specificity, FPR and kappa are the population rates of the labelled
dataset's judged rows (within-verdict rates reweighted by the dataset's verdict mix), not the raw
sample rates. An explicit ``--design`` that contradicts the recorded provenance, the verdict
check or where the rows come from is refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.calibration import (
    NOT_JUDGED,
    NOT_RUN,
    SMALL_N,
    UNSCORED,
    UNSURE,
    VOCABULARY,
    DesignDecision,
    Estimate,
    PassRateEstimate,
    PopulationRates,
    SelectionCheck,
    active_pass_rate,
    kappa_interval,
    normalize_verdicts,
    population_rates,
    resolve_design,
    selection_check,
    stratified_run_pass_rate,
    stratum_counts,
    transported_pass_rate,
)
from labels.errors import CalibrateError

__all__ = ["Headline", "design_headline", "headline_json", "verdict_counts"]


@dataclass(frozen=True)
class Headline:
    """The design-based headline of a report.

    Attributes:
        decision: The design and estimator, and why.
        corrected: The whole-run corrected pass rate.
        rates: Population sensitivity / specificity / FPR / kappa of the labelled dataset.
        kappa: The headline kappa (bootstrap below ``SMALL_N`` rows for a random sample).
        population: In words, what population the corrected pass rate estimates.
        selections: How many labels carry each recorded selection.
        check: The verdict check of labels whose selection is unknown/imported (or ``None``).
        counts: The vocabulary counts (judged / not judged / unscored / unsure) per side.
        strata: Per-stratum counts of the labelled dataset (what a judge card carries).
    """

    decision: DesignDecision
    corrected: PassRateEstimate
    rates: PopulationRates
    kappa: Estimate
    population: str
    selections: dict[str, int]
    check: SelectionCheck | None
    counts: dict[str, dict[str, int]]
    strata: dict[str, list[int]]


def verdict_counts(verdicts: pd.Series) -> dict[str, int]:
    """Judged / not judged / unscored / unsure / not run counts of judge verdicts.

    ``verdicts`` holds one entry per row: the judge's verdict, ``unscored``, or NaN where the
    judge was never run on the row. ``not_judged = unscored + unsure + not_run``.
    """
    unscored = int(verdicts.eq("unscored").sum())
    unsure = int(verdicts.eq("unsure").sum())
    not_run = int(verdicts.isna().sum())
    return {
        "rows": len(verdicts),
        "judged": int(verdicts.isin(["pass", "fail"]).sum()),
        NOT_JUDGED.replace(" ", "_"): unscored + unsure + not_run,
        UNSCORED: unscored,
        UNSURE: unsure,
        NOT_RUN.replace(" ", "_"): not_run,
    }


def design_headline(
    *,
    labelled: pd.DataFrame,
    provenance: pd.DataFrame,
    dataset_verdicts: npt.NDArray[Any],
    target_verdicts: npt.NDArray[Any],
    same_dataset: bool,
    requested: str | None,
    confidence: float,
    seed: int,
    n_boot: int,
) -> Headline:
    """Compute the headline from the labelled rows, their provenance and the judge's verdicts.

    Args:
        labelled: One row per labelled item: ``item_id``, ``human`` (consensus verdict),
            ``judge`` (its verdict, NaN when not judged), ``document_id``.
        provenance: :meth:`LabelStore.provenance_frame` of the labelled dataset.
        dataset_verdicts: The judge's verdict on every row of the labelled dataset, in file
            order (``None`` or NaN where it never ran).
        target_verdicts: The same for every row of the target dataset.
        same_dataset: The target is the labelled dataset.
        requested: An explicit ``--design``, or ``None``.
        confidence: Level of every interval.
        seed: Seed of the document bootstrap.
        n_boot: Document bootstrap replicates.

    Returns:
        A :class:`Headline`.

    Raises:
        CalibrateError: ``requested`` contradicts the evidence (the reason says how).
    """
    selections = {str(k): int(v) for k, v in provenance["selection"].value_counts().items()}
    human = labelled["human"].to_numpy(dtype=object)
    judge = labelled["judge"].fillna("unscored").to_numpy(dtype=object)
    # rows the judge never ran on count as unscored in the population (codes: every
    # estimator below normalises its verdicts, and int codes pass through at once)
    population = normalize_verdicts(dataset_verdicts)
    check = None
    if set(selections) - {"random", "all", "by_verdict", "flips_first", "active", "file"}:
        check = selection_check(judge, population)
    active = provenance[provenance["selection"].eq("active")]
    has_probabilities = bool(len(active) and active["selection_share"].notna().all())
    decision = resolve_design(
        requested, labelled_in_target=same_dataset, selections=selections,
        has_probabilities=has_probabilities, check=check,
    )  # fmt: skip
    if decision.refused:
        raise CalibrateError(decision.reason)
    corrected: PassRateEstimate
    if decision.estimator == "active_ipw":
        share = labelled["item_id"].map(
            provenance.groupby("item_id")["selection_share"].max()
        ).to_numpy(dtype=float)
        pi = np.minimum(1.0, len(labelled) * share)
        corrected = active_pass_rate(human, judge, pi, population, confidence=confidence)
    elif decision.estimator == "lee_stratified":
        # Rows the judge never ran on are not a judge outcome (unlike unscored replies): the
        # transfer uses the rows it ran on, in the calibration set and in the target.
        ran = labelled["judge"].notna().to_numpy()
        corrected = transported_pass_rate(
            human[ran], judge[ran], population[pd.notna(dataset_verdicts)],
            normalize_verdicts(target_verdicts[pd.notna(target_verdicts)]), confidence=confidence,
        )  # fmt: skip
    else:
        docs = labelled["document_id"]
        has_docs = bool(docs.notna().any() and docs.dropna().duplicated().any())
        corrected = stratified_run_pass_rate(
            human, judge, population, confidence=confidence, n_boot=n_boot,
            doc_ids=(docs.where(docs.notna(), "item:" + labelled["item_id"].astype(str))
                     .astype(str).to_numpy() if has_docs else None),
            rng=np.random.default_rng(seed) if has_docs else None,
        )  # fmt: skip
    rates = population_rates(human, judge, population, confidence=confidence)
    random_like = set(selections) <= {"random", "all"}
    kappa = rates.kappa
    if random_like and int(pd.Series(judge).isin(["pass", "fail"]).sum()) < SMALL_N:
        kappa = kappa_interval(human, judge, confidence=confidence)
    counts = {
        # Counted before rows without a call are filled in as "unscored" for the estimators.
        "target": verdict_counts(pd.Series(
            dataset_verdicts if same_dataset else target_verdicts, dtype=object)),
        "labelled": verdict_counts(labelled["judge"]),
        "human": {
            "rows": len(human),
            "decided": int(pd.Series(human).isin(["pass", "fail"]).sum()),
            UNSURE: int((~pd.Series(human).isin(["pass", "fail"])).sum()),
        },
    }
    statement = str(corrected.params.get("population", "")) if corrected.params else ""
    return Headline(
        decision=decision,
        corrected=corrected,
        rates=rates,
        kappa=kappa,
        population=statement,
        selections=selections,
        check=check,
        counts=counts,
        strata={k: list(v) for k, v in stratum_counts(human, judge, population).to_dict().items()},
    )


def headline_json(h: Headline, interval_json: Any) -> dict[str, Any]:
    """The headline's entries of the report JSON (see ``docs/report-json.md``)."""
    return {
        "design": h.decision.design,
        "design_reason": h.decision.reason,
        "method": h.corrected.method,
        "assumption": h.corrected.assumption,
        "population": h.population,
        "corrected_pass_rate": interval_json(h.corrected),
        "sensitivity": interval_json(h.rates.sensitivity),
        "specificity": interval_json(h.rates.specificity),
        "fpr": interval_json(h.rates.fpr),
        "kappa": interval_json(h.kappa),
        "selection": {
            "labels": h.selections,
            "check": None if h.check is None else h.check.message,
        },
        "counts": h.counts,
        "human_unsure_bounds": (h.corrected.params or {}).get("human_unsure_bounds"),
        "calibration_strata": h.strata,
        "vocabulary": dict(VOCABULARY),
    }
