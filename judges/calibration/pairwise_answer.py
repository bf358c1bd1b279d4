"""One question, one answer for a pairwise judge: the true a / b / tie shares of a run.

:func:`answer_win_rate` is the single estimation path behind every surface that shows the
corrected shares of a pairwise (A vs B) judge — ``calibrate report`` on a pairwise dataset and
its JSON, the Calibration page, the per-model-pair win rates, a pairwise card scored or gated in
CI. It takes the :class:`~judges.calibration.PairwiseEvidence` and the target's judge outcomes
(:class:`PairwiseTarget`) and returns a :class:`PairwiseAnswer`: the headline shares (or a
refusal with its reason), the estimator the labels' provenance supports and why, the population
in words, the labels-only shares beside them and one list of warnings.

Estimators (the design comes from :func:`~judges.calibration.resolve_design`, as for pass/fail):

* **Same run** (the labels are rows of the target): verdict-stratified shares
  ``share_h = sum_s W_s P(human = h | stratum s)`` over the judge strata a / b / tie / not
  judged (``W_s`` from every row of the run), valid for any allocation of labels between
  strata. Each share is the one-vs-rest pass rate of
  :func:`~judges.calibration.stratified_run_pass_rate_from_counts` with Dirichlet smoothing
  per stratum in the interval (``2/K`` pseudo-rows per class: ``(k + 2/3) / (m + 2)``, so a
  rare class is not pulled toward one half), the unbiased without-replacement variance
  (``m - 1``) and its finite-population correction, explicit bounds for a stratum without
  labels, a document bootstrap when rows cluster. (Agresti-Caffo's ``+1/+2`` and ``m + 2`` of
  the pass rate covered 0.938-0.944 in some cells at 4,000 replicates, this 0.945 or more.)
  Labels drawn by the active queue are
  weighted by their inverse inclusion probability per stratum
  (:func:`~judges.calibration.active_pass_rate_from_strata`).
* **Another run**: the judge's misclassification matrix ``M[h, j] = P(judge j | human h)`` by
  Bayes from the within-stratum human shares reweighted by the calibration run's judge-verdict
  shares (valid for any allocation between strata), then ``M^T pi = observed`` over the target
  rows with a decided verdict, projected onto the simplex. Delta-method interval whose
  covariance has a multinomial per judge stratum (Dirichlet-smoothed by ``2/K`` pseudo-rows),
  the calibration run's verdict shares ``W`` and the target's shares (``z^2/K`` pseudo-rows).

**One-order rows** (judged in one presentation order only while other rows of the run have
both; :func:`~judges.calibration.one_order_flags`): under ``all_agree`` a verdict counts only if
it survived both orders, so they are not decided verdicts — their own strata in the same run
(their labels count, an unlabelled one is bounded), outside the matrix and the target's decided
rows for another run. Under ``majority`` the single verdict is the row's verdict. Either way
they are counted and named.

Headline rules as :func:`~judges.calibration.answer_pass_rate`: a refused design refuses; the
labels-only shares are the headline when the labels are a random sample of the target run and
give a narrower interval; a share that human-unsure rows could move beyond its interval is
shown as the bound over their resolutions; a judge whose population kappa is at most 0 is said
first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._results import Estimate, _ToDict, interval_json
from .design_check import (
    DesignDecision,
    SelectionCheck,
    decide_design,
    labels_alone,
)
from .pairwise import CLASSES
from .pairwise_evidence import (
    NO_PAIR,
    PW_NOT_RUN,
    PW_TIE,
    PairwiseEvidence,
    PairwiseLabelledRows,
    PairwiseRunCounts,
)
from .pairwise_shares import (
    _BASE_NAMES,
    _K,
    PairwiseStratum,
    WinShares,
    _base_counts,
    _bounded,
    _labels_only,
    _refused_shares,
    _same_run,
    _Strata,
    _strata,
)
from .pairwise_transport import _joint, _kappa, _rows_normalised, _transport, _worse_than_chance
from .rates import check_confidence, wilson_interval

__all__ = [
    "PairAnswer",
    "PairwiseAnswer",
    "PairwiseStratum",
    "PairwiseTarget",
    "WinShares",
    "answer_win_rate",
]

PairwiseKind = Literal["corrected", "labels_only", "bounds", "refused"]


@dataclass(frozen=True)
class PairAnswer(_ToDict):
    """One model pair's rows: their corrected shares and the judge's own.

    Attributes:
        pair: The pair's name.
        n_target: Target rows of the pair with a decided verdict.
        shares: The design's estimator on the pair's rows.
        observed: The judge's own shares there (Wilson), a, b, tie.
        labelled_per_class: Labelled rows of the pair per human verdict.
    """

    pair: str
    n_target: int
    shares: WinShares
    observed: tuple[Estimate, Estimate, Estimate]
    labelled_per_class: tuple[int, int, int]


@dataclass(frozen=True)
class PairwiseAnswer(_ToDict):
    """The answer to "what are the true a / b / tie shares of this run?".

    Attributes:
        headline: The shares to show (``refused`` with a ``reason`` when there are none).
        kind: Which estimate the headline is (``bounds``: a share is the human-unsure bound).
        decision: The design and estimator the labels' provenance supports, and why.
        corrected: The design's estimator.
        labels_only: The human shares of the labelled rows alone (Wilson).
        labels_only_valid: Whether ``labels_only`` estimates the target too.
        observed: The judge's own shares of the target's decided rows (Wilson), a, b, tie.
        n_target: Target rows with a decided verdict.
        misclassification: ``P(judge j | human h)`` over the calibration run's decided rows,
            verdict-reweighted (``None`` when a stratum or class lacks labels).
        population_kappa: Cohen's kappa of the verdict-reweighted human x judge table.
        worse_than_chance: Why the judge is no better than chance, or ``None``.
        strata: The calibration strata.
        population: In words, which rows the headline is about.
        selections: Labelled rows per recorded selection.
        check: The verdict check of labels of unknown selection (or ``None``).
        confusion: Raw human consensus (rows) x judge verdict (columns) of the labelled rows
            with a decided verdict on both sides.
        one_order: The one-order rows: ``calibration``, ``labelled``, ``target`` and how they
            are ``counted``.
        counts: ``target``, ``labelled``, ``human`` and ``used`` counts.
        pairs: Per model pair (when the rows name them).
        warnings: Every caveat, once, the most important first.
    """

    headline: WinShares
    kind: PairwiseKind
    decision: DesignDecision
    corrected: WinShares
    labels_only: WinShares
    labels_only_valid: bool
    observed: tuple[Estimate, Estimate, Estimate]
    n_target: int
    misclassification: tuple[tuple[float, ...], ...] | None
    population_kappa: float | None
    worse_than_chance: str | None
    strata: tuple[PairwiseStratum, ...]
    population: str
    selections: Mapping[str, int]
    check: SelectionCheck | None
    confusion: tuple[tuple[int, ...], ...]
    one_order: Mapping[str, Any]
    counts: Mapping[str, Mapping[str, int]]
    pairs: tuple[PairAnswer, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def refused(self) -> bool:
        """Whether there are no headline shares."""
        return self.headline.refused

    @property
    def labelled_per_class(self) -> tuple[int, int, int]:
        """Labelled rows per human verdict (a, b, tie) among those with a decided verdict."""
        t = np.asarray(self.confusion)
        return int(t[0].sum()), int(t[1].sum()), int(t[2].sum())

    def to_json(self) -> dict[str, Any]:
        """The answer's JSON entries (the report's, the card's and the score's)."""
        h = self.headline
        observed = dict(zip(CLASSES, (interval_json(o) for o in self.observed), strict=True))
        per_class = dict(zip(CLASSES, self.labelled_per_class, strict=True))
        return {
            "win_rate": {
                "corrected": {k: interval_json(v) for k, v in h.shares().items()},
                "observed": observed, "n_target": self.n_target,
                "labelled_per_class": per_class, "method": h.method, "clipped": h.clipped,
                "refused": h.refused, "reason": h.reason, "assumption": h.assumption,
            },
            "method": h.method,
            "answer_kind": self.kind,
            "design": self.decision.design,
            "design_reason": self.decision.reason,
            "population": self.population,
            "labels_only": {**self.labels_only.to_json(),
                            "valid_for_target": self.labels_only_valid},
            "estimators": {"design": self.corrected.to_json(),
                           "labels_only": self.labels_only.to_json()},
            "human_unsure_bounds": _json_bounds(self.corrected.params.get("human_unsure_bounds")),
            "misclassification": (None if self.misclassification is None
                                  else [list(r) for r in self.misclassification]),
            "population_kappa": self.population_kappa,
            "worse_than_chance": self.worse_than_chance,
            "calibration_strata": {
                s.name: {"population": s.population, "labelled": s.labelled,
                         **dict(zip(CLASSES, s.human, strict=True)),
                         "human_unsure": s.human_unsure, "decided": s.decided}
                for s in self.strata
            },
            "one_order": dict(self.one_order),
            "selection": {"labels": dict(self.selections),
                          "check": None if self.check is None else self.check.message},
            "counts": {k: dict(v) for k, v in self.counts.items()},
            "by_pair": [
                {"pair": p.pair, "n_target": p.n_target,
                 "corrected": {k: interval_json(v) for k, v in p.shares.shares().items()},
                 "observed": dict(zip(CLASSES, (interval_json(o) for o in p.observed),
                                      strict=True)),
                 "labelled_per_class": dict(zip(CLASSES, p.labelled_per_class, strict=True)),
                 "method": p.shares.method, "clipped": p.shares.clipped,
                 "refused": p.shares.refused, "reason": p.shares.reason}
                for p in self.pairs
            ],
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class PairwiseTarget:
    """The pairwise :class:`~judges.calibration.TargetRun`: the rows whose shares are wanted.

    ``counts`` holds the judge's outcomes on them per (outcome, flipped, one order, model pair);
    with ``same_run`` they are the calibration dataset itself (``counts`` is its population).
    """

    counts: PairwiseRunCounts
    same_run: bool = False


def _json_bounds(value: Any) -> Any:
    if value is None:
        return None
    return {side: {k: (None if v is None else float(v)) for k, v in dict(b).items()}
            for side, b in dict(value).items()}


# --------------------------------------------------------------------------- the answer


def answer_win_rate(
    evidence: PairwiseEvidence, target: PairwiseTarget,
    *, design: str | None = None, confidence: float = 0.95, seed: int = 0, n_boot: int = 2000,
    pairs: bool = True,
) -> PairwiseAnswer:
    """The true a / b / tie shares of ``target``, by the estimator the labels' provenance supports.

    Args:
        evidence: The :class:`PairwiseEvidence` of the calibration dataset.
        target: The run whose shares are wanted (``same_run`` for the calibration dataset).
        design: An explicit design (:data:`~judges.calibration.DESIGN_ESTIMATORS`), checked
            against the evidence; ``None`` chooses it.
        confidence: Level of every interval.
        seed: Seed of the document bootstrap.
        n_boot: Bootstrap replicates.
        pairs: Compute the per-model-pair answers.

    Returns:
        The :class:`PairwiseAnswer`; its headline is refused, with the reason, when an explicit
        ``design`` contradicts the evidence (``decision.refused``).
    """
    conf = check_confidence(confidence)
    lab = evidence.labelled
    same = target.same_run
    rule = evidence.rule
    selections = lab.selections()
    present = {k for k, v in selections.items() if v}

    def base_counts() -> tuple[npt.ArrayLike, npt.ArrayLike] | None:
        labelled, population = _base_counts(evidence, same)
        return (labelled, population) if labelled.sum() and population.sum() else None

    decision, check = decide_design(
        design, selections=selections, selection=lab.selection, share=lab.share,
        same_run=same, base_counts=base_counts, names=_BASE_NAMES,
        order_trend_p=None if evidence.order_trend is None else evidence.order_trend.p_value,
        quantity="win and tie shares",
    )
    split = "flips_first" in present
    strata = _strata(evidence, same_run=same, split_flips=split)
    target_counts = evidence.population if same else target.counts
    decided = target_counts.decided(rule)
    corrected = _estimate(evidence, strata, decision, decided, conf=conf, seed=seed,
                          n_boot=n_boot)
    labels_only = _labels_only(lab.human, conf)
    clustered = bool(corrected.params.get("clustered", False))
    random_sample, assumption = labels_alone("shares", same_run=same, present=present,
                                             clustered=clustered, check=check)
    labels_only = replace(labels_only, assumption=assumption)
    transport_strata = strata if not same else _strata(evidence, same_run=False,
                                                       split_flips=split)
    joint = _joint(transport_strata, evidence)
    misclassification = None if joint is None else _rows_normalised(joint)
    kappa = None if joint is None else _kappa(joint)
    worse = _worse_than_chance(kappa)
    warnings: list[str] = []
    if worse:
        warnings.append(f"WORSE THAN CHANCE: {worse}")
    warnings += list(decision.warnings)
    kind: PairwiseKind = "corrected"
    headline = corrected
    if decision.refused:
        kind = "refused"
    else:
        warnings += list(corrected.warnings)
        if (random_sample and design is None and labels_only.claims and corrected.claims
                and labels_only.width < corrected.width):
            headline, kind = labels_only, "labels_only"
            warnings.append(
                "the labelled rows alone give narrower intervals than the judge-stratified "
                f"shares (total width {labels_only.width:.3f} against {corrected.width:.3f}): "
                "the judge adds nothing here, so the headline is the labels-only shares")
        if headline.refused:
            kind = "refused"
        bounds = corrected.params.get("human_unsure_bounds")
        if kind == "corrected" and bounds is not None:
            headline, moved = _bounded(headline, bounds)
            if moved:
                kind = "bounds"
                n_unsure = sum(s.human_unsure for s in strata.strata)
                warnings.append(
                    f"{n_unsure} labelled rows without a decided human verdict could move "
                    f"{', '.join(moved)} beyond its interval: shown as the bound over every "
                    "resolution of those rows")
    if headline.refused and headline.reason:
        warnings.append(f"corrected win rate refused: {headline.reason}")
    warnings += _one_order_warnings(evidence, target_counts, same=same)
    not_run = int((lab.outcome == PW_NOT_RUN).sum())
    if not_run:
        fate = "in the not-judged stratum" if same and not decision.refused else "left out"
        warnings.append(f"{not_run} labelled rows have no verdict from this judge yet ({fate})")
    pair_answers: tuple[PairAnswer, ...] = ()
    if pairs and not decision.refused and any(p != NO_PAIR for p in target_counts.pairs):
        pair_answers = _pair_answers(evidence, target_counts, decision, transport_strata,
                                     same=same, conf=conf, seed=seed, n_boot=n_boot)
    return PairwiseAnswer(
        headline=headline, kind=kind, decision=decision, corrected=corrected,
        labels_only=labels_only, labels_only_valid=random_sample,
        observed=_observed(decided, conf), n_target=int(decided.sum()),
        misclassification=misclassification, population_kappa=kappa,
        worse_than_chance=worse, strata=strata.strata,
        population=_population(target_counts, rule, same),
        selections=MappingProxyType(selections), check=check,
        confusion=_confusion(lab, rule), one_order=_one_order(evidence, target_counts, same),
        counts=_counts(evidence, target_counts), pairs=pair_answers,
        warnings=tuple(dict.fromkeys(warnings)),
    )  # fmt: skip


def _estimate(
    evidence: PairwiseEvidence, strata: _Strata, decision: DesignDecision,
    decided: npt.NDArray[np.int64],
    *, conf: float, seed: int, n_boot: int, n_draws: int | None = None,
) -> WinShares:
    """The design's estimator (a refusal when the decision is refused).

    ``n_draws`` is the number of labels the active queue drew (default: the evidence's); a
    row's inclusion probability is ``min(1, n_draws * share)``, also for one pair's rows.
    """
    lab = evidence.labelled
    draws = lab.n if n_draws is None else n_draws
    if decision.refused or decision.estimator is None:
        return _refused_shares(decision.reason, "refused", conf, lab, int(decided.sum()))
    if decision.estimator == "lee_stratified":
        return _transport(strata, lab, decided, conf=conf, n_draws=draws)
    return _same_run(strata, lab, decision.estimator, conf=conf, seed=seed, n_boot=n_boot,
                     n_draws=draws)


# --------------------------------------------------------------------------- the rest


def _observed(decided: npt.NDArray[np.int64], conf: float
              ) -> tuple[Estimate, Estimate, Estimate]:
    n = int(decided.sum())
    a, b, t = (wilson_interval(int(c), n, confidence=conf) for c in decided)
    return a, b, t


def _judge_decided(lab: PairwiseLabelledRows, rule: str) -> npt.NDArray[np.bool_]:
    ok = lab.outcome <= PW_TIE
    if rule == "all_agree":
        ok &= ~lab.one_order
    return np.asarray(ok, dtype=bool)


def _confusion(lab: PairwiseLabelledRows, rule: str) -> tuple[tuple[int, ...], ...]:
    ok = _judge_decided(lab, rule) & (lab.human >= 0)
    cells = lab.human[ok].astype(np.int64) * _K + lab.outcome[ok].astype(np.int64)
    t = np.bincount(cells, minlength=_K * _K).reshape(_K, _K)
    return tuple(tuple(int(x) for x in r) for r in t)


def _counts(evidence: PairwiseEvidence, target: PairwiseRunCounts) -> dict[str, dict[str, int]]:
    lab = evidence.labelled
    rule = evidence.rule
    labelled = PairwiseRunCounts.from_rows(lab.outcome, one_order=lab.one_order).vocabulary(rule)
    decided = int((lab.human >= 0).sum())
    used = int((_judge_decided(lab, rule) & (lab.human >= 0)).sum())
    return {"target": target.vocabulary(rule), "labelled": labelled,
            "human": {"rows": lab.n, "decided": decided, "unsure": lab.n - decided},
            "used": {"rows": used}}


def _one_order(evidence: PairwiseEvidence, target: PairwiseRunCounts, same: bool
               ) -> dict[str, Any]:
    lab = evidence.labelled
    counted = ("not a verdict that survived both orders (all_agree): its own strata in the "
               "same run, outside the decided rows otherwise" if evidence.rule == "all_agree"
               else "the single order's verdict is the row's verdict (majority)")
    return {"calibration": int(evidence.population.one_order()[:3].sum()),
            "labelled": int((lab.one_order & (lab.outcome <= PW_TIE)).sum()),
            "target": int(target.one_order()[:3].sum()), "counted": counted,
            "same_run": same}


def _one_order_warnings(evidence: PairwiseEvidence, target: PairwiseRunCounts, *,
                        same: bool) -> list[str]:
    out = []
    runs = [("calibration", evidence.population)] + ([] if same else [("target", target)])
    for name, run in runs:
        n = int(run.one_order()[:3].sum())
        if not n:
            continue
        what = f"{n} rows" if same else f"{n} {name} rows"
        if evidence.rule == "all_agree":
            fate = ("they are strata of their own in the estimate" if same
                    else "they are left out of the decided rows" if name == "target"
                    else "they are left out of the misclassification matrix")
            out.append(f"{what} were judged in one order only while the others have both: "
                       f"under all_agree a verdict counts only if it survived both orders, so "
                       f"they are not decided verdicts; {fate}")
        else:
            out.append(f"{what} were judged in one order only while the others have both: "
                       "under majority their single verdict counts as the row's verdict")
    return out


def _population(run: PairwiseRunCounts, rule: str, same: bool) -> str:
    v = run.vocabulary(rule)
    parts = [f"{v['not_judged']:,} unsure or unscored"]
    if v["one_order"]:
        parts.append(f"{v['one_order']:,} judged in one order only")
    if same:
        text = f"the true (human) shares of a / b / tie over all {v['rows']:,} rows of the run"
        parts.append(f"{v['not_run']:,} not run")
        rest = v["rows"] - v["decided"]
        if rest:
            text += (f", including the {rest:,} rows without a decided verdict "
                     f"({', '.join(parts)})")
        return text
    text = (f"the true (human) shares of a / b / tie over the {v['decided']:,} target rows with "
            "a decided judge verdict")
    rest = v["rows"] - v["decided"] - v["not_run"]
    if rest:
        text += f"; the {rest:,} without one ({', '.join(parts)}) are outside"
    if v["not_run"]:
        text += f"; the {v['not_run']:,} target rows it never ran on are outside"
    return text


def _pair_answers(
    evidence: PairwiseEvidence, target: PairwiseRunCounts, decision: DesignDecision,
    transport_strata: _Strata,
    *, same: bool, conf: float, seed: int, n_boot: int,
) -> tuple[PairAnswer, ...]:
    """Per model pair: the same-run estimator on the pair's rows, or the run's matrix."""
    out = []
    present = {k for k, v in evidence.labelled.selections().items() if v}
    for name in target.pairs:
        if name == NO_PAIR:
            continue
        run = target.restrict(name)
        decided = run.decided(evidence.rule)
        if same:
            ev = evidence.restrict(name)
            strata = _strata(ev, same_run=True, split_flips="flips_first" in present)
            shares = _estimate(ev, strata, decision, decided, conf=conf, seed=seed,
                               n_boot=n_boot, n_draws=evidence.labelled.n)
            per = np.asarray(_confusion(ev.labelled, evidence.rule)).sum(axis=1)
        else:
            shares = _transport(transport_strata, evidence.labelled, decided, conf=conf)
            per = np.zeros(_K, dtype=np.int64)
            if name in evidence.pairs:
                ev = evidence.restrict(name)
                per = np.asarray(_confusion(ev.labelled, evidence.rule)).sum(axis=1)
        out.append(PairAnswer(name, int(decided.sum()), shares, _observed(decided, conf),
                              (int(per[0]), int(per[1]), int(per[2]))))
    return tuple(out)
