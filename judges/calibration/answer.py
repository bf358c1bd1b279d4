"""One question, one answer: the true pass rate of a run, from calibration evidence.

:func:`answer_pass_rate` is the single estimation path behind every surface that shows a
corrected pass rate (``calibrate report`` and its JSON, the Calibration page, ``card export``,
``score``, ``gate``, ``compare``, the notebooks). It takes the calibration evidence
(:class:`~judges.calibration.CalibrationEvidence`) and the target run's judge outcomes
(:class:`TargetRun`) and returns a :class:`PassRateAnswer`: the headline number (or a refusal
with its reason), the estimator the labels' provenance supports and why, what population it
estimates in words, the labels-only interval beside it, the judge's population error rates and
one list of warnings.

The rules that decide the headline:

* **Design from provenance** (:func:`~judges.calibration.resolve_design`): labels of the target
  run are estimated within judge-verdict strata (any allocation between strata; active labels
  by inverse-probability weighting), labels of another run correct the target through the
  judge's verdict-reweighted error rates. Labels drawn in file order are checked: a file whose
  judge verdicts trend along it is sorted, and such labels are refused. Labels drawn flips
  first make the flipped rows their own strata, so every aggregation rule stays valid.
* **A warning never sits beside the number it warns about.** When the transfer check finds the
  judge's accuracy differs by segment and the target's segment mix differs, the headline is the
  segment-aware correction (or its refusal). When human-unsure labelled rows could move the
  estimate beyond its interval, the headline is the bound over both resolutions. Target rows in
  a judge outcome the calibration never showed are bounded, and refused when they are all.
* **Worse than chance is said first**: a judge whose population Youden index or kappa is at
  most 0 gets that message at the top of the warnings.
* **Never worse than labels alone**: the labels-only interval is always shown; when the labels
  are a random sample of the target run it is valid there too, and it is the headline when a
  judge-verdict stratum without labels leaves the stratified estimate a mere bound. Otherwise
  the stratified interval, narrower on average in every cell of ``bench/coverage.py`` (a judge
  with kappa 0.07 included), stays the headline: picking whichever interval happens to be
  narrower would under-cover.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._results import (
    Estimate,
    PassRateEstimate,
    _refused,
    _ToDict,
    describe_interval,
    interval_json,
)
from ._verdicts import PASS
from .active import active_pass_rate_from_strata
from .answer_strata import EvidenceStrata, _strata, evidence_strata
from .clustered import document_counts
from .counts import CalibrationCounts
from .design_check import (
    DesignDecision,
    SelectionCheck,
    decide_design,
    labels_alone,
)
from .estimators import estimate_pass_rate
from .evidence import (
    NO_SEGMENT,
    OUTCOME_FAIL,
    OUTCOME_NOT_RUN,
    OUTCOME_PASS,
    CalibrationEvidence,
    LabelledRows,
    RunCounts,
)
from .kappa_interval import SMALL_N, kappa_interval
from .pass_rate import labels_only_pass_rate
from .rates import ConfusionMatrix, check_confidence
from .strata import (
    DESIGN_EFFECT_THRESHOLD,
    OUTCOME_NOT_JUDGED,
    StratumCounts,
    bound_over_unsure,
    stratified_run_pass_rate_from_counts,
)
from .transfer import TransferDiagnostics, transfer_diagnostics
from .transport import (
    PopulationRates,
    _population_rates,
    transported_pass_rate_from_counts,
)

__all__ = [
    "AnswerKind",
    "AnswerSummary",
    "EvidenceStrata",
    "PassRateAnswer",
    "SegmentAnswer",
    "TargetRun",
    "answer_pass_rate",
    "design_decision",
    "evidence_strata",
]

AnswerKind = Literal["corrected", "labels_only", "segment_aware", "bounds", "refused"]


@dataclass(frozen=True)
class TargetRun:
    """The judge's outcomes on the rows whose true pass rate is wanted.

    Attributes:
        counts: Rows per (outcome, flipped, segment).
        same_run: The target *is* the calibration dataset (its labels are rows of it); then
            ``counts`` must equal the evidence's population.
    """

    counts: RunCounts
    same_run: bool = False


@dataclass(frozen=True)
class SegmentAnswer(_ToDict):
    """One segment's rows: the judge's rates there and its corrected pass rate.

    Attributes:
        segment: Segment name.
        n_labelled: Labelled rows with both a human and a judge pass/fail verdict.
        n_target: Target rows of the segment.
        rates: The judge's population rates in the segment.
        corrected: The design's estimator on the segment's rows.
        observed: The judge's pass rate on the segment's target rows.
        confusion: Raw judge-vs-human counts of the segment's labelled rows.
    """

    segment: str
    n_labelled: int
    n_target: int
    rates: PopulationRates
    corrected: PassRateEstimate
    observed: PassRateEstimate
    confusion: ConfusionMatrix


_KIND_WORDS: Mapping[str, str] = MappingProxyType({
    "corrected": "the corrected pass rate",
    "labels_only": "the labelled rows alone",
    "segment_aware": "the segment-aware correction",
    "bounds": "the corrected pass rate bounded over the human-unsure rows",
    "refused": "the corrected pass rate",
})


@dataclass(frozen=True)
class AnswerSummary(_ToDict):
    """The answer in the few words a first screen or a report's first line has room for.

    Attributes:
        says: Whether the headline makes a claim: a number whose interval does not cover every
            pass rate from 0 to 1. ``False``: "can't say", and ``because`` says why.
        because: Why there is no claim (``None`` when ``says``).
        headline: The headline's interval (``estimate``, ``low``, ``high``, ``n``, ``reason``);
            shown even when it makes no claim, so the refusal can be checked.
        interval: The headline as text (:func:`~judges.calibration.describe_interval`: words
            where the interval collapsed), ``—`` when refused.
        source: Which estimate the headline is, in words ("the segment-aware correction").
        estimand: One sentence: the population the headline estimates.
        n_labelled: Labelled rows the headline rests on.
    """

    says: bool
    because: str | None
    headline: Mapping[str, Any]
    interval: str
    source: str
    estimand: str
    n_labelled: int

    def sentence(self) -> str:
        """The answer in one line: the number with its interval and n, or "can't say" and why.

        ``0.352 [0.000, 0.780] (the corrected pass rate, n = 95 labelled rows)``, or
        ``can't say, because …; 0.520 [0.000, 1.000] (the segment-aware correction, …)``.
        """
        numbers = f"{self.interval} ({self.source}, n = {self.n_labelled:,} labelled rows)"
        if self.says:
            return numbers
        if self.headline.get("estimate") is None:
            return f"can't say, because {self.because}"
        return f"can't say, because {self.because}; {numbers}"


@dataclass(frozen=True)
class PassRateAnswer(_ToDict):
    """The answer to "what is the true pass rate of this run?", with everything behind it.

    Attributes:
        headline: The number to show (``refused`` with a ``reason`` when there is none).
        kind: Which of the estimates below the headline is (``bounds``: the human-unsure bound).
        decision: The design and estimator the labels' provenance supports, and why.
        corrected: The design's estimator.
        labels_only: The human pass rate of the labelled rows alone (Wilson).
        labels_only_valid: Whether ``labels_only`` estimates the target too (a random sample of
            the target run), so that it may be the headline.
        segment_aware: The segment-aware correction (separate calibration with segments).
        observed: The judge's own pass rate on the target's judged rows (Wilson).
        rates: The judge's population sensitivity, specificity, FPR and kappa.
        kappa: The headline kappa (a small-n bootstrap interval for a random sample).
        worse_than_chance: Why the judge is no better than chance, or ``None``.
        transfer: The transfer check (separate calibration with segments), else ``None``.
        strata: The calibration strata the estimate used.
        population: In words, what population the headline estimates.
        selections: Labelled rows per recorded selection.
        check: The verdict check of labels of unknown selection (or ``None``).
        confusion: Raw judge-vs-human counts of the labelled rows used.
        counts: The vocabulary counts: ``target``, ``labelled`` and ``human``.
        segments: Per-segment answers (when rows carry segments).
        warnings: Every caveat, once, the most important first.
    """

    headline: PassRateEstimate
    kind: AnswerKind
    decision: DesignDecision
    corrected: PassRateEstimate
    labels_only: PassRateEstimate
    labels_only_valid: bool
    segment_aware: PassRateEstimate | None
    observed: PassRateEstimate
    rates: PopulationRates
    kappa: Estimate
    worse_than_chance: str | None
    transfer: TransferDiagnostics | None
    strata: StratumCounts
    population: str
    selections: Mapping[str, int]
    check: SelectionCheck | None
    confusion: ConfusionMatrix
    counts: Mapping[str, Mapping[str, int]]
    segments: tuple[SegmentAnswer, ...] = ()
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def refused(self) -> bool:
        """Whether there is no headline number."""
        return self.headline.refused

    def summary(self) -> AnswerSummary:
        """The headline in a few words: the number, or "can't say" and why (one rule for all).

        The headline says nothing when it is refused, when the judge is not shown to be better
        than chance (its interval widened to [0, 1]), or when its interval covers every pass
        rate from 0 to 1 (a segment-aware correction bounded where the judge cannot tell pass
        from fail).
        """
        h = self.headline
        value = interval_json(h)
        because: str | None = None
        if h.refused:
            because = h.reason or "the estimator refused"
        elif h.uninformative or (h.low is not None and h.high is not None
                                 and h.low <= 0.0 and h.high >= 1.0):
            because = _why_no_claim(self)
        return AnswerSummary(
            says=because is None, because=because, headline=MappingProxyType(value),
            interval=describe_interval(value), source=_KIND_WORDS[self.kind],
            estimand=self.population, n_labelled=int(value["n"]),
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The answer's JSON entries (the report's, the card's and the score's)."""
        h = self.headline
        return {
            "corrected_pass_rate": interval_json(h),
            "method": h.method,
            "answer_kind": self.kind,
            "design": self.decision.design,
            "design_reason": self.decision.reason,
            "assumption": h.assumption,
            "population": self.population,
            "labels_only_pass_rate": {**interval_json(self.labels_only),
                                      "valid_for_target": self.labels_only_valid},
            "observed_pass_rate": interval_json(self.observed),
            "estimators": {
                name: {**interval_json(est), "method": est.method, "assumption": est.assumption}
                for name, est in (("design", self.corrected), ("labels_only", self.labels_only),
                                  ("segment_aware", self.segment_aware)) if est is not None
            },
            "human_unsure_bounds": _json_safe_mapping(
                (self.corrected.params or {}).get("human_unsure_bounds")),
            "worse_than_chance": self.worse_than_chance,
            "warnings": list(self.warnings),
        }


def _json_safe_mapping(value: Any) -> Any:
    if value is None:
        return None
    return {str(k): (None if v is None else float(v)) for k, v in dict(value).items()}


def _target_outcomes(target: RunCounts) -> tuple[int, int, int]:
    """Target rows the judge ran on: judge pass, judge fail, not judged (unsure/unscored)."""
    o = target.by_outcome()
    return int(o[OUTCOME_PASS]), int(o[OUTCOME_FAIL]), int(o[2] + o[3])


# --------------------------------------------------------------------------- the answer


def answer_pass_rate(
    evidence: CalibrationEvidence, target: TargetRun,
    *, design: str | None = None, confidence: float = 0.95, seed: int = 0, n_boot: int = 2000,
    segments: bool = True,
) -> PassRateAnswer:
    """The true pass rate of ``target``, by the estimator the labels' provenance supports.

    Args:
        evidence: The calibration dataset's labelled rows and the judge's outcomes on it.
        target: The run whose pass rate is wanted (``same_run`` for the calibration dataset).
        design: An explicit design (:data:`~judges.calibration.DESIGN_ESTIMATORS`), checked
            against the evidence; ``None`` chooses it.
        confidence: Level of every interval.
        seed: Seed of every resampling (document bootstrap, exact tests, small-n kappa).
        n_boot: Bootstrap replicates.
        segments: Compute the transfer check and the per-segment answers.

    Returns:
        A :class:`PassRateAnswer`; an explicit ``design`` the evidence contradicts gives a
        refused headline whose reason says why (``decision.refused``).
    """
    conf = check_confidence(confidence)
    lab = evidence.labelled
    same = target.same_run
    selections = lab.selections()
    present = {k for k, v in selections.items() if v}
    decision, check = _decide(evidence, same_run=same, design=design)
    strata = evidence_strata(evidence, same_run=same)
    result = _estimate(evidence, target, decision, strata, conf=conf, seed=seed, n_boot=n_boot)
    corrected = result
    rates = _population_rates(strata.counts, conf)
    kappa = rates.kappa
    decided_rows = (lab.human >= 0) & (lab.outcome <= OUTCOME_FAIL)
    if present <= {"random", "all"} and int(decided_rows.sum()) < SMALL_N:
        kappa = kappa_interval(_human_words(lab.human), _judge_words(lab.outcome),
                               confidence=conf)  # fmt: skip
    labels_only = labels_only_pass_rate(_human_words(lab.human), confidence=conf)
    clustered = float((result.params or {}).get("design_effect", 1.0)) > DESIGN_EFFECT_THRESHOLD
    # Wilson treats the rows as independent: with rows that cluster by document it is too
    # narrow, so the labels alone are then not a valid headline.
    random_sample, assumption = labels_alone("pass rate", same_run=same, present=present,
                                             clustered=clustered, check=check)
    labels_only = replace(labels_only, assumption=assumption)
    warnings: list[str] = []
    worse = _worse_than_chance(rates)
    if worse:
        warnings.append(f"WORSE THAN CHANCE: {worse}")
    warnings += list(decision.warnings)
    kind: AnswerKind = "corrected"
    headline = result
    transfer = None
    aware = None
    target_counts = target.counts
    if decision.refused:
        kind = "refused"
    else:
        warnings += list(result.warnings)
        if not same and segments and (evidence.population.has_segments
                                      or target_counts.has_segments):
            transfer = _transfer(evidence, target_counts, conf=conf, seed=seed)
            aware = transfer.segment_aware
            if transfer.warning:
                warnings.append(f"transfer: {transfer.warning}")
                warnings += [f"segment-aware corrected pass rate: {w}" for w in aware.warnings]
                headline, kind = aware, "segment_aware"
                if aware.refused:
                    headline = replace(aware, reason=(
                        "the correction does not transfer to the target (see the transfer "
                        f"check) and the segment-aware correction is refused: {aware.reason}"))
                    kind = "refused"
        unidentified = not (result.params or {}).get("identified", True)
        if (kind == "corrected" and random_sample and design is None and labels_only.claims
                and result.claims and unidentified
                and (labels_only.width or 0) < (result.width or 0)):
            # A judge-verdict stratum without labels leaves the stratified estimate a bound;
            # a random sample's labels alone still estimate the run. (Only then: choosing the
            # narrower of two intervals whenever one happens to be narrower under-covers, 0.931
            # at pass rate 0.3 with 50 labels in bench/coverage.py; the stratified interval is
            # the narrower on average in every cell measured, a weak judge's too.)
            headline, kind = labels_only, "labels_only"
            warnings.append(
                "a judge-verdict stratum has no labelled rows, so the judge-stratified estimate "
                f"is only a bound ({result.format()}); the labelled rows are a random sample "
                f"of the run, and alone give {labels_only.format()}: the headline"
            )
        if kind in ("corrected", "labels_only") and headline.refused:
            kind = "refused"
        if kind == "corrected":
            headline, said = bound_over_unsure(
                headline, int(sum(strata.counts.human_unsure)),
                (corrected.params or {}).get("human_unsure_bounds"))
            if said is not None:
                kind = "bounds"
                warnings.append(said)
    if headline.refused and headline.reason:
        warnings.append(f"corrected pass rate refused: {headline.reason}")
    not_run = int((lab.outcome == OUTCOME_NOT_RUN).sum())
    if not_run:
        fate = ("in the not-judged stratum" if same and not decision.refused
                else "left out")  # fmt: skip
        warnings.append(f"{not_run} labelled rows have no verdict from this judge yet ({fate})")
    seg_answers: tuple[SegmentAnswer, ...] = ()
    if segments and not decision.refused and (evidence.population.has_segments
                                              or target_counts.has_segments):
        seg_answers = _segment_answers(evidence, target, decision, conf=conf, seed=seed,
                                       n_boot=n_boot)  # fmt: skip
    observed = _observed(target_counts if not same else evidence.population, conf)
    return PassRateAnswer(
        headline=headline, kind=kind, decision=decision, corrected=corrected,
        labels_only=labels_only, labels_only_valid=random_sample, segment_aware=aware,
        observed=observed, rates=rates, kappa=kappa, worse_than_chance=worse,
        transfer=transfer, strata=strata.counts,
        population=_population(target_counts if not same else evidence.population, same,
                               headline),
        selections=MappingProxyType(selections), check=check,
        confusion=_confusion(lab), counts=_counts(evidence, target),
        segments=seg_answers, warnings=tuple(dict.fromkeys(warnings)),
    )  # fmt: skip


def design_decision(evidence: CalibrationEvidence, *, same_run: bool,
                    design: str | None = None) -> DesignDecision:
    """The design the labels' provenance supports (what :func:`answer_pass_rate` decides).

    ``same_run``: whether the estimand is the calibration dataset's own rows.
    """
    return _decide(evidence, same_run=same_run, design=design)[0]


def _decide(evidence: CalibrationEvidence, *, same_run: bool,
            design: str | None) -> tuple[DesignDecision, SelectionCheck | None]:
    lab = evidence.labelled

    def base_counts() -> tuple[npt.ArrayLike, npt.ArrayLike]:
        base = _strata(evidence, same_run=same_run, split_flips=False)
        labelled = np.bincount(base.of_labelled[base.of_labelled >= 0], minlength=3)[:3]
        return labelled, base.counts.population

    return decide_design(
        design, selections=lab.selections(), selection=lab.selection, share=lab.share,
        same_run=same_run, base_counts=base_counts,
        order_trend_p=None if evidence.order_trend is None else evidence.order_trend.p_value,
        escalation_recorded=evidence.escalated is not None,
    )


def _estimate(
    evidence: CalibrationEvidence, target: TargetRun, decision: DesignDecision,
    strata: EvidenceStrata,
    *, conf: float, seed: int, n_boot: int,
) -> PassRateEstimate:
    """The design's estimator on the strata (a refusal when the decision is refused)."""
    lab = evidence.labelled
    if decision.refused or decision.estimator is None:
        return _refused(PassRateEstimate, decision.reason, method="refused", confidence=conf,
                        n_labelled=int((lab.human >= 0).sum()),
                        n_target=target.counts.n_rows)  # fmt: skip
    counts, stratum = strata.counts, strata.of_labelled
    kept = stratum >= 0
    docs = lab.document[kept]
    has_docs = bool((docs >= 0).any())
    if decision.estimator == "lee_stratified":
        deff = 1.0
        if has_docs:
            # Rows of one source document fail together: their within-stratum rates carry less
            # information than their count says (the design effect of the stratified mean).
            big_n = np.asarray(counts.population, dtype=float)
            m = np.asarray(counts.labelled, dtype=float)
            weights = np.where(m > 0, big_n / max(big_n.sum(), 1.0), 0.0)
            dc = document_counts(lab.human[kept], stratum[kept].astype(np.int8), docs, weights)
            if dc.n_documents >= 3 and dc.design_effect > DESIGN_EFFECT_THRESHOLD:
                deff = float(dc.design_effect)
        return transported_pass_rate_from_counts(counts, _target_outcomes(target.counts),
                                                 confidence=conf, design_effect=deff)  # fmt: skip
    if decision.estimator == "active_ipw":
        share = lab.share[kept]
        pi = np.minimum(1.0, lab.n * share)
        return active_pass_rate_from_strata(
            lab.human[kept], stratum[kept], pi, counts.population, names=counts.names,
            not_judged=[o == OUTCOME_NOT_JUDGED for o in counts.outcomes], confidence=conf,
        )  # fmt: skip
    # Strata split by an escalation are many and some small: each stratum's unbiased (m - 1)
    # variance, as the cascade's whole-run estimate uses (cascade_pass_rate), so the two give
    # one answer for one stage.
    escalated = bool(evidence.labelled.selections().get("escalated")) and (
        evidence.escalated is not None)
    return stratified_run_pass_rate_from_counts(
        counts, confidence=conf, human=lab.human[kept] if has_docs else None,
        strata=stratum[kept] if has_docs else None, doc_ids=docs if has_docs else None,
        rng=np.random.default_rng(seed) if has_docs else None, n_boot=n_boot,
        unbiased_variance=escalated,
    )  # fmt: skip


def _worse_than_chance(rates: PopulationRates) -> str | None:
    sens, spec, kappa = rates.sensitivity, rates.specificity, rates.kappa
    if sens.estimate is None or spec.estimate is None:
        return None
    youden = sens.estimate + spec.estimate - 1.0
    k = kappa.estimate
    if youden > 0.0 and (k is None or k > 0.0):
        return None
    return (
        f"the judge's sensitivity + specificity - 1 = {youden:+.3f}"
        + (f" and kappa = {k:+.3f}" if k is not None else "")
        + ": its verdicts agree with the experts no better than chance"
        + (" (or point the wrong way)" if youden < 0 else "")
        + ", so no judge-based correction can be trusted; fix or replace the judge"
    )


def _human_words(h: npt.NDArray[np.int8]) -> npt.NDArray[Any]:
    return np.where(h == PASS, "pass", np.where(h == 0, "fail", "unsure")).astype(object)


def _judge_words(o: npt.NDArray[np.int8]) -> npt.NDArray[Any]:
    return np.where(o == OUTCOME_PASS, "pass", np.where(o == OUTCOME_FAIL, "fail",
                                                        "unscored")).astype(object)


def _confusion(lab: LabelledRows) -> ConfusionMatrix:
    ok = (lab.human >= 0) & (lab.outcome <= OUTCOME_FAIL)
    h, j = lab.human[ok], lab.outcome[ok] == OUTCOME_PASS
    return ConfusionMatrix(tp=int(((h == PASS) & j).sum()), fn=int(((h == PASS) & ~j).sum()),
                           fp=int(((h == 0) & j).sum()), tn=int(((h == 0) & ~j).sum()))


def _observed(run: RunCounts, conf: float) -> PassRateEstimate:
    o = run.by_outcome()
    k, n = int(o[OUTCOME_PASS]), int(o[OUTCOME_PASS] + o[OUTCOME_FAIL])
    return estimate_pass_rate(CalibrationCounts(ConfusionMatrix(0, 0, 0, 0), k, n),
                              method="naive", confidence=conf)  # fmt: skip


def _counts(evidence: CalibrationEvidence, target: TargetRun) -> dict[str, dict[str, int]]:
    lab = evidence.labelled
    labelled = RunCounts.from_rows(lab.outcome).vocabulary()
    decided = int((lab.human >= 0).sum())
    run = evidence.population if target.same_run else target.counts
    return {
        "target": run.vocabulary(),
        "labelled": labelled,
        "human": {"rows": lab.n, "decided": decided, "unsure": lab.n - decided},
        "used": {"rows": int(((lab.human >= 0) & (lab.outcome <= OUTCOME_FAIL)).sum())},
    }


def _why_no_claim(answer: PassRateAnswer) -> str:
    """Why a headline whose interval is [0, 1] makes no claim, in plain words."""
    h = answer.headline
    bounded = (h.params or {}).get("bounded") or {}
    if bounded.get("groups"):
        why = (f"in {', '.join(bounded['groups'])} ({bounded['target_share']:.0%} of the target "
               "rows) the judge is not shown to tell pass from fail, so their pass rate could be "
               "anything from 0 to 1")
    elif h.uninformative:
        why = ("the judge is not shown to tell pass from fail (its Youden index is not "
               "significantly above 0), so the pass rate could be anything from 0 to 1")
    else:
        why = "the interval covers every pass rate from 0 to 1"
    if answer.kind == "segment_aware":
        why = ("the judge's accuracy differs by segment and the target's mix of segments "
               "differs from the calibration set's, and " + why)
    return why


def _population(run: RunCounts, same: bool, headline: PassRateEstimate) -> str:
    v = run.vocabulary()
    if same:
        text = f"the true (human) pass rate of all {v['rows']:,} rows of the run"
        if v["not_judged"]:
            text += (f", including the {v['not_judged']:,} rows the judge did not judge "
                     f"({v['unscored']:,} unscored, {v['unsure']:,} unsure, {v['not_run']:,} "
                     "not run)")
        return text
    ran = v["rows"] - v["not_run"]
    # The counts of "N of M target rows judged" beside it: M rows, the judge ran on some,
    # judged N of those; every number here is one of those or their difference.
    if v["not_run"]:
        text = (f"the true (human) pass rate of the {ran:,} of {v['rows']:,} target rows the "
                "judge ran on")
    else:
        text = f"the true (human) pass rate of all {v['rows']:,} target rows"
    if v["unscored"] + v["unsure"]:
        text += (f": the {v['judged']:,} the judge judged and the "
                 f"{v['unscored'] + v['unsure']:,} it did not ({v['unscored']:,} unscored, "
                 f"{v['unsure']:,} unsure)")
    if v["not_run"]:
        text += f"; the {v['not_run']:,} it never ran on are outside"
    return text


# --------------------------------------------------------------------------- segments


def _judge_codes(outcome: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    """Verdict codes of outcomes: 1 pass, 0 fail, -1 not judged."""
    return np.where(outcome == OUTCOME_PASS, 1,
                    np.where(outcome == OUTCOME_FAIL, 0, -1)).astype(np.int8)  # fmt: skip


def _transfer(
    evidence: CalibrationEvidence, target: RunCounts, *, conf: float, seed: int
) -> TransferDiagnostics:
    lab = evidence.labelled
    ran = lab.outcome != OUTCOME_NOT_RUN
    names = np.asarray(evidence.segments, dtype=object)
    cal_o, _, cal_s = evidence.population.rows()
    tgt_o, _, tgt_s = target.rows()
    cal_ran, tgt_ran = cal_o != OUTCOME_NOT_RUN, tgt_o != OUTCOME_NOT_RUN
    return transfer_diagnostics(
        lab.human[ran], _judge_codes(lab.outcome[ran]), names[lab.segment[ran]],
        _judge_codes(cal_o[cal_ran]), cal_s[cal_ran],
        _judge_codes(tgt_o[tgt_ran]), tgt_s[tgt_ran],
        confidence=conf, rng=np.random.default_rng(seed),
    )  # fmt: skip


def _segment_answers(
    evidence: CalibrationEvidence, target: TargetRun, decision: DesignDecision,
    *, conf: float, seed: int, n_boot: int,
) -> tuple[SegmentAnswer, ...]:
    names = sorted(set(evidence.segments) | set(target.counts.segments))
    out = []
    for name in names:
        if name not in evidence.segments:
            continue
        ev = evidence.restrict(name)
        run = (ev.population if target.same_run else
               target.counts.restrict(name) if name in target.counts.segments else
               RunCounts(np.zeros((5, 2, 1), dtype=np.int64), (name,)))  # fmt: skip
        tgt = TargetRun(run, same_run=target.same_run)
        strata = evidence_strata(ev, same_run=target.same_run)
        corrected = _estimate(ev, tgt, decision, strata, conf=conf, seed=seed, n_boot=n_boot)
        confusion = _confusion(ev.labelled)
        out.append(SegmentAnswer(
            segment=name, n_labelled=confusion.n, n_target=run.n_rows,
            rates=_population_rates(strata.counts, conf), corrected=corrected,
            observed=_observed(run, conf), confusion=confusion,
        ))  # fmt: skip
    return tuple(s for s in out if s.segment != NO_SEGMENT or len(out) > 1)
