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

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._results import Estimate, PassRateEstimate, _refused, _ToDict, interval_json
from .active import active_pass_rate_from_strata
from .clustered import document_counts
from .design_check import (
    CHECKED_BY_DESIGN,
    SELECTIONS,
    DesignDecision,
    SelectionCheck,
    resolve_design,
    selection_check_from_counts,
)
from .pairwise import CLASSES, _project_simplex
from .pairwise_evidence import (
    NO_PAIR,
    PW_NOT_JUDGED,
    PW_NOT_RUN,
    PW_TIE,
    PairwiseEvidence,
    PairwiseLabelledRows,
    PairwiseRunCounts,
)
from .pass_rate import labels_only_pass_rate
from .rates import check_confidence, wilson_interval, z_value
from .strata import (
    DESIGN_EFFECT_THRESHOLD,
    OUTCOME_FAIL,
    OUTCOME_NOT_JUDGED,
    OUTCOME_PASS,
    counts_of_strata,
    stratified_run_pass_rate_from_counts,
)

__all__ = [
    "PairAnswer",
    "PairwiseAnswer",
    "PairwiseStratum",
    "PairwiseTarget",
    "WinShares",
    "answer_win_rate",
]

PairwiseKind = Literal["corrected", "labels_only", "bounds", "refused"]
_K = len(CLASSES)
_SELECTION_INDEX = {name: i for i, name in enumerate(SELECTIONS)}
_BASE_NAMES = ("judge a", "judge b", "judge tie", "not judged")
METHOD_TRANSPORT = "matrix_stratified"

ASSUMPTION_SAME_RUN = (
    "the labelled rows are rows of this run, drawn at random within each judge-verdict stratum "
    "(judge a / judge b / judge tie / not judged; one-order and flipped rows apart where they "
    "are strata of their own) in any proportions; stratum sizes come from the judge's verdicts "
    "on every row of the run"
)
ASSUMPTION_ACTIVE = (
    "each labelled row was drawn from this run with the recorded inclusion probability (> 0 "
    "for every row; active labelling); within each judge-verdict stratum rows are weighted by "
    "its inverse"
)
ASSUMPTION_TRANSPORT = (
    "the judge's misclassification matrix P(judge verdict | human verdict) over rows with a "
    "decided verdict transfers from the calibration set to the target (the shares themselves "
    "may differ); calibration labels drawn at random within each judge-verdict stratum of the "
    "calibration set, in any proportions"
)


@dataclass(frozen=True)
class PairwiseTarget:
    """The judge's outcomes on the rows whose a / b / tie shares are wanted.

    Attributes:
        counts: Rows per (outcome, flipped, one order, model pair).
        same_run: The target *is* the calibration dataset (its labels are rows of it); then
            ``counts`` must be the evidence's population.
    """

    counts: PairwiseRunCounts
    same_run: bool = False


@dataclass(frozen=True)
class WinShares(_ToDict):
    """The a / b / tie shares of one estimator.

    Attributes:
        a: True share of rows where A wins, with its interval.
        b: True share of rows where B wins.
        tie: True share of ties.
        method: The estimator (``verdict_stratified``, ``active_ipw``, ``matrix_stratified``,
            ``labels_only``; ``+unsure_bounds`` when a share is the human-unsure bound).
        assumption: The sampling assumption its intervals rest on.
        refused: No shares can be given; see ``reason``.
        reason: Why (``None`` unless refused).
        clipped: The matrix solution left the simplex and was projected back.
        warnings: The estimator's caveats.
        params: Intermediate quantities (misclassification matrix, unsure bounds, ...).
    """

    a: PassRateEstimate
    b: PassRateEstimate
    tie: PassRateEstimate
    method: str
    assumption: str = ""
    refused: bool = False
    reason: str | None = None
    clipped: bool = False
    warnings: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def shares(self) -> dict[str, PassRateEstimate]:
        """``{"a": ..., "b": ..., "tie": ...}``."""
        return {"a": self.a, "b": self.b, "tie": self.tie}

    @property
    def claims(self) -> bool:
        """Every share makes a claim (none refused or uninformative)."""
        return not self.refused and all(s.claims for s in self.shares().values())

    @property
    def width(self) -> float:
        """Sum of the three interval widths (``inf`` when refused)."""
        widths = [s.width for s in self.shares().values()]
        return math.inf if self.refused or None in widths else float(sum(w or 0.0 for w in widths))

    def to_json(self) -> dict[str, Any]:
        """``{a, b, tie (intervals), method, assumption, refused, reason, clipped}``."""
        return {**{k: interval_json(v) for k, v in self.shares().items()}, "method": self.method,
                "assumption": self.assumption, "refused": self.refused, "reason": self.reason,
                "clipped": self.clipped}


@dataclass(frozen=True)
class PairwiseStratum(_ToDict):
    """One judge-verdict stratum of the calibration rows.

    Attributes:
        name: e.g. ``judge a``, ``judge tie, flipped``, ``judge b, one order only``.
        outcome: The judge outcome code of its rows (a, b, tie or not judged).
        decided: Its rows carry a decided verdict (they enter the misclassification matrix).
        population: Rows of the calibration dataset in it.
        labelled: Labelled rows with a decided human consensus.
        human: Of those, rows per human verdict (a, b, tie).
        human_unsure: Labelled rows without a decided human consensus.
    """

    name: str
    outcome: int
    decided: bool
    population: int
    labelled: int
    human: tuple[int, int, int]
    human_unsure: int


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


def _json_bounds(value: Any) -> Any:
    if value is None:
        return None
    return {side: {k: (None if v is None else float(v)) for k, v in dict(b).items()}
            for side, b in dict(value).items()}


# --------------------------------------------------------------------------- strata


@dataclass(frozen=True)
class _Strata:
    """The strata of one estimate and each labelled row's stratum (-1: left out)."""

    strata: tuple[PairwiseStratum, ...]
    of_labelled: npt.NDArray[np.int64]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.strata)

    @property
    def population(self) -> tuple[int, ...]:
        return tuple(s.population for s in self.strata)


def _strata(evidence: PairwiseEvidence, *, same_run: bool, split_flips: bool) -> _Strata:
    """Judge-verdict strata of the calibration rows.

    Judge a, judge b, judge tie and not judged (with the rows the judge never ran on in the
    same run: the whole run is the estimand). Under ``all_agree`` the one-order rows of each
    verdict are a stratum of their own that is not decided; with ``split_flips`` the flipped
    rows of each verdict are (labels drawn flips first over-sample them).
    """
    pop = evidence.population.counts.sum(axis=3)  # (outcome, flipped, one order)
    all_agree = evidence.rule == "all_agree"
    table = np.full(pop.shape, -1, dtype=np.int64)
    specs: list[tuple[str, int, bool]] = []

    def add(name: str, outcome: int, decided: bool, cells: list[tuple[int, int, int]]) -> None:
        for cell in cells:
            table[cell] = len(specs)
        specs.append((name, outcome, decided))

    for v, name in enumerate(_BASE_NAMES[:3]):
        one = all_agree and pop[v, :, 1].sum() > 0
        orders = [0] if one else [0, 1]
        if split_flips and pop[v, 1, orders].sum() > 0:
            add(name, v, True, [(v, 0, o) for o in orders])
            add(f"{name}, flipped", v, True, [(v, 1, o) for o in orders])
        else:
            add(name, v, True, [(v, f, o) for f in (0, 1) for o in orders])
        if one:
            add(f"{name}, one order only", v, False, [(v, f, 1) for f in (0, 1)])
    not_judged = [PW_NOT_JUDGED, *([PW_NOT_RUN] if same_run else [])]
    add(_BASE_NAMES[3], PW_NOT_JUDGED, False,
        [(o, f, k) for o in not_judged for f in (0, 1) for k in (0, 1)])
    lab = evidence.labelled
    of = table[lab.outcome.astype(np.int64), lab.flipped.astype(np.int64),
               lab.one_order.astype(np.int64)]
    strata = []
    for s, (name, outcome, decided) in enumerate(specs):
        rows = of == s
        h = lab.human[rows]
        per = np.bincount(h[h >= 0].astype(np.int64), minlength=_K)
        strata.append(PairwiseStratum(
            name=name, outcome=outcome, decided=decided, population=int(pop[table == s].sum()),
            labelled=int((h >= 0).sum()), human=(int(per[0]), int(per[1]), int(per[2])),
            human_unsure=int((h < 0).sum())))  # fmt: skip
    return _Strata(tuple(strata), of)


def _base_counts(evidence: PairwiseEvidence, same_run: bool
                 ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Labelled and population rows per base stratum (judge a / b / tie / not judged)."""
    lab = evidence.labelled
    o = lab.outcome.astype(np.int64)
    keep = o != PW_NOT_RUN if not same_run else np.ones(o.shape, dtype=bool)
    labelled = np.bincount(np.minimum(o[keep], PW_NOT_JUDGED), minlength=4)[:4]
    by = evidence.population.by_outcome()
    population = np.array([by[0], by[1], by[2],
                           by[PW_NOT_JUDGED] + (by[PW_NOT_RUN] if same_run else 0)])
    return labelled.astype(np.int64), population.astype(np.int64)


# --------------------------------------------------------------------------- the answer


def answer_win_rate(
    evidence: PairwiseEvidence,
    target: PairwiseTarget,
    *,
    design: str | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    n_boot: int = 2000,
    pairs: bool = True,
) -> PairwiseAnswer:
    """The true a / b / tie shares of ``target``, by the estimator the labels' provenance supports.

    Args:
        evidence: The calibration dataset's labelled rows and the judge's outcomes on it.
        target: The run whose shares are wanted (``same_run`` for the calibration dataset).
        design: An explicit design (:data:`~judges.calibration.DESIGN_ESTIMATORS`), checked
            against the evidence; ``None`` chooses it.
        confidence: Level of every interval.
        seed: Seed of the document bootstrap.
        n_boot: Bootstrap replicates.
        pairs: Compute the per-model-pair answers.

    Returns:
        A :class:`PairwiseAnswer`; an explicit ``design`` the evidence contradicts gives a
        refused headline whose reason says why (``decision.refused``).
    """
    conf = check_confidence(confidence)
    lab = evidence.labelled
    same = target.same_run
    rule = evidence.rule
    selections = lab.selections()
    present = {k for k, v in selections.items() if v}
    check = None
    if present - CHECKED_BY_DESIGN:
        labelled, population = _base_counts(evidence, same)
        if labelled.sum() and population.sum():
            check = selection_check_from_counts(labelled, population, names=_BASE_NAMES)
    active = lab.selection == _SELECTION_INDEX["active"]
    has_probabilities = bool(active.any() and np.isfinite(lab.share[active]).all())
    decision = resolve_design(
        design, labelled_in_target=same, selections=selections,
        has_probabilities=has_probabilities, check=check,
        order_trend_p=None if evidence.order_trend is None else evidence.order_trend.p_value,
        quantity="win and tie shares",
    )  # fmt: skip
    split = "flips_first" in present
    strata = _strata(evidence, same_run=same, split_flips=split)
    target_counts = evidence.population if same else target.counts
    decided = target_counts.decided(rule)
    corrected = _estimate(evidence, strata, decision, decided, conf=conf, seed=seed,
                          n_boot=n_boot)
    labels_only = _labels_only(lab.human, conf)
    clustered = bool(corrected.params.get("clustered", False))
    random_sample = same and present <= {"random", "all"} and not clustered and (
        check is None or check.consistent_with_random)
    labels_only = replace(labels_only, assumption=(
        "the labelled rows are a random sample of the target run" if random_sample else
        "the human shares of the labelled rows themselves; not an estimate of the target "
        + ("(the rows cluster by document)" if clustered else
           "(the labels are not a random sample of it)" if same else "(another run)")))
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
    evidence: PairwiseEvidence,
    strata: _Strata,
    decision: DesignDecision,
    decided: npt.NDArray[np.int64],
    *,
    conf: float,
    seed: int,
    n_boot: int,
    n_draws: int | None = None,
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


def _refused_shares(reason: str, method: str, conf: float, lab: PairwiseLabelledRows,
                    n_target: int, assumption: str = "") -> WinShares:
    r = _refused(PassRateEstimate, reason, method=method, confidence=conf,
                 n_labelled=int((lab.human >= 0).sum()), n_target=n_target,
                 assumption=assumption)
    return WinShares(r, r, r, method, assumption=assumption, refused=True, reason=reason)


# --------------------------------------------------------------------------- same run


def _same_run(strata: _Strata, lab: PairwiseLabelledRows, estimator: str, *, conf: float,
              seed: int, n_boot: int, n_draws: int) -> WinShares:
    """Verdict-stratified (or active IPW) shares: one one-vs-rest pass rate per class."""
    kept = strata.of_labelled >= 0
    s_lab = strata.of_labelled[kept]
    h = lab.human[kept]
    method = "active_ipw" if estimator == "active_ipw" else "verdict_stratified"
    assumption = ASSUMPTION_ACTIVE if estimator == "active_ipw" else ASSUMPTION_SAME_RUN
    if not (h >= 0).any():
        return _refused_shares("no labelled row with a decided human verdict (a, b or tie)",
                               method, conf, lab, sum(strata.population), assumption)
    docs = lab.document[kept]
    has_docs = bool((docs >= 0).any())
    not_judged = [not s.decided for s in strata.strata]
    shares: list[PassRateEstimate] = []
    for c in range(_K):
        binary = np.where(h < 0, -1, (h == c).astype(np.int8)).astype(np.int8)
        if estimator == "active_ipw":
            pi = np.minimum(1.0, n_draws * lab.share[kept])
            est = active_pass_rate_from_strata(binary, s_lab, pi, strata.population,
                                               names=strata.names, not_judged=not_judged,
                                               confidence=conf)  # fmt: skip
        else:
            outcomes = tuple(
                OUTCOME_NOT_JUDGED if not s.decided else
                OUTCOME_PASS if s.outcome == c else OUTCOME_FAIL for s in strata.strata)
            counts = counts_of_strata(binary, s_lab, strata.population, outcomes=outcomes,
                                      names=strata.names)
            est = stratified_run_pass_rate_from_counts(
                counts, confidence=conf, human=binary if has_docs else None,
                strata=s_lab if has_docs else None, doc_ids=docs if has_docs else None,
                rng=np.random.default_rng([seed, c]) if has_docs else None, n_boot=n_boot,
                prior=1.0 / _K, unbiased_variance=True,
            )  # fmt: skip
        shares.append(replace(est, assumption=assumption))
    refused = [s for s in shares if s.refused]
    if refused:
        return _refused_shares(str(refused[0].reason), method, conf, lab,
                               sum(strata.population), refused[0].assumption)
    warnings: list[str] = []
    missing = [s.name for s in strata.strata if s.population and not s.labelled]
    if missing:
        share = sum(s.population for s in strata.strata if s.population and not s.labelled)
        warnings.append(
            f"not identified: no labelled rows in stratum {', '.join(missing)} "
            f"({share / max(sum(strata.population), 1):.1%} of the run); each share's interval "
            "is a bound over every possible verdict of those rows")
    warnings += [w for s in shares for w in s.warnings if "cluster" in w]
    n_unsure = sum(s.human_unsure for s in strata.strata)
    params: dict[str, Any] = {
        "clustered": any(s.method.endswith("_clustered") for s in shares),
        "identified": not missing,
    }
    if n_unsure:
        params["human_unsure_bounds"] = {
            side: {"if_all": b["if_all_pass"], "if_none": b["if_all_fail"], "low": b["low"],
                   "high": b["high"]}
            for side, s in zip(CLASSES, shares, strict=True)
            if (b := s.params.get("human_unsure_bounds")) is not None
        }
        warnings.append(f"{n_unsure} labelled rows without a decided human verdict: left out "
                        "and bounded")
    methods = sorted({s.method for s in shares})
    return WinShares(shares[0], shares[1], shares[2], "+".join(methods),
                     assumption=shares[0].assumption, warnings=tuple(dict.fromkeys(warnings)),
                     params=MappingProxyType(params))


def _labels_only(human: npt.NDArray[np.int8], conf: float) -> WinShares:
    shares = []
    for c in range(_K):
        words = np.where(human < 0, "unsure", np.where(human == c, "pass", "fail"))
        shares.append(labels_only_pass_rate(words.astype(object), confidence=conf))
    if any(s.refused for s in shares):
        reason = "no labelled row with a decided human verdict (a, b or tie)"
        r = _refused(PassRateEstimate, reason, method="labels_only", confidence=conf,
                     n_labelled=0, n_target=0)
        return WinShares(r, r, r, "labels_only", refused=True, reason=reason)
    return WinShares(shares[0], shares[1], shares[2], "labels_only",
                     assumption=shares[0].assumption)


def _bounded(shares: WinShares, bounds: Mapping[str, Mapping[str, float]]
             ) -> tuple[WinShares, list[str]]:
    """``shares`` with each share the unsure rows could move beyond its interval bounded."""
    out = dict(shares.shares())
    moved = []
    for side, est in shares.shares().items():
        b = bounds.get(side)
        if b is None or est.low is None or est.high is None:
            continue
        if b["if_all"] > est.high or b["if_none"] < est.low:
            moved.append(side)
            out[side] = replace(est, low=float(b["low"]), high=float(b["high"]),
                                method=f"{est.method}+unsure_bounds",
                                warnings=(*est.warnings, "bounded over the human-unsure rows"))
    if not moved:
        return shares, []
    return replace(shares, a=out["a"], b=out["b"], tie=out["tie"],
                   method=f"{shares.method}+unsure_bounds"), moved


# --------------------------------------------------------------------------- another run


@dataclass(frozen=True)
class _StratumRates:
    """Within-stratum human shares of the decided strata (weighted for active labels)."""

    shares: npt.NDArray[np.float64]  # (S, K)
    sizes: npt.NDArray[np.float64]  # (S,) effective labelled rows
    unsure: npt.NDArray[np.float64]  # (S,) human-unsure labelled rows
    weights: npt.NDArray[np.float64]  # (S,) population share among decided rows
    columns: npt.NDArray[np.int64]  # (S,) judge verdict of the stratum
    n_population: int
    names: tuple[str, ...]


def _decided_rates(strata: _Strata, lab: PairwiseLabelledRows, n_draws: int | None = None
                   ) -> _StratumRates | None:
    """The decided strata's human shares; ``None`` when a stratum with rows has no labels."""
    idx = [i for i, s in enumerate(strata.strata) if s.decided and s.population > 0]
    if not idx or any(strata.strata[i].labelled == 0 for i in idx):
        return None
    active = lab.selection == _SELECTION_INDEX["active"]
    shares = np.zeros((len(idx), _K))
    sizes = np.zeros(len(idx))
    for row, s in enumerate(idx):
        mask = (strata.of_labelled == s) & (lab.human >= 0)
        h = lab.human[mask].astype(np.int64)
        w = np.ones(h.size)
        if active[mask].any() and np.isfinite(lab.share[mask]).all():
            w = 1.0 / np.minimum(1.0, (lab.n if n_draws is None else n_draws)
                                 * lab.share[mask])
        shares[row] = np.bincount(h, weights=w, minlength=_K) / w.sum()
        sizes[row] = w.sum() ** 2 / (w**2).sum()
    pop = np.array([strata.strata[i].population for i in idx], dtype=float)
    return _StratumRates(
        shares, sizes, np.array([strata.strata[i].human_unsure for i in idx], dtype=float),
        pop / pop.sum(), np.array([strata.strata[i].outcome for i in idx], dtype=np.int64),
        int(pop.sum()), tuple(strata.strata[i].name for i in idx),
    )  # fmt: skip


def _joint(strata: _Strata, evidence: PairwiseEvidence) -> npt.NDArray[np.float64] | None:
    """``P(human h, judge j)`` over the calibration run's decided rows (``None``: not known)."""
    rates = _decided_rates(strata, evidence.labelled)
    if rates is None:
        return None
    onehot = np.eye(_K)[rates.columns]  # (S, K)
    joint: npt.NDArray[np.float64] = (rates.weights[:, None] * rates.shares).T @ onehot
    return joint


def _rows_normalised(joint: npt.NDArray[np.float64]) -> tuple[tuple[float, ...], ...] | None:
    prior = joint.sum(axis=1)
    if np.any(prior <= 0):
        return None
    return tuple(tuple(float(x) for x in row) for row in joint / prior[:, None])


def _kappa(joint: npt.NDArray[np.float64]) -> float | None:
    p = joint / joint.sum()
    pe = float(p.sum(axis=1) @ p.sum(axis=0))
    if pe >= 1.0:
        return None
    return (float(np.trace(p)) - pe) / (1.0 - pe)


def _worse_than_chance(kappa: float | None) -> str | None:
    if kappa is None or kappa > 0.0:
        return None
    return (f"the judge's kappa with the experts over the calibration run (verdict-reweighted) "
            f"is {kappa:+.3f}: its verdicts agree with them no better than chance, so no "
            "judge-based correction can be trusted; fix or replace the judge")


def _delta(fun: Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]],
           x: npt.NDArray[np.float64], cov: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Delta-method standard errors of the vector ``fun`` at ``x`` (central differences)."""
    base = fun(x)
    jac = np.zeros((base.size, x.size))
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = 1e-6
        jac[:, i] = (fun(x + step) - fun(x - step)) / 2e-6
    var = np.einsum("ij,jk,ik->i", jac, cov, jac)
    return np.asarray(np.sqrt(np.maximum(var, 0.0)), dtype=np.float64)


def _multinomial_cov(p: npt.NDArray[np.float64], n: float) -> npt.NDArray[np.float64]:
    return (np.diag(p) - np.outer(p, p)) / max(n, 1.0)


class _Matrix:
    """``pi`` from ``M^T pi = p`` as a function of ``x = (shares (S x k), W (S), p (c))``.

    ``rows`` are the human classes estimated (k), ``cols`` the judge verdicts observed (c). A
    square system is solved; with two human classes and three verdicts (the humans never tie,
    the judge does) ``pi_a`` is the least-squares solution of the three equations with
    ``pi_b = 1 - pi_a``.
    """

    def __init__(self, columns: npt.NDArray[np.int64], rows: list[int], cols: list[int]) -> None:
        self.k = len(rows)
        self.c = len(cols)
        self.s = columns.size
        self.onehot = np.eye(_K)[columns][:, cols]  # (S, c)

    def pack(self, shares: npt.NDArray[np.float64], w: npt.NDArray[np.float64],
             p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.concatenate([shares.ravel(), w, p])

    def matrix(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        sk = self.s * self.k
        r = x[:sk].reshape(self.s, self.k)
        w = x[sk:sk + self.s]
        joint = (w[:, None] * r).T @ self.onehot
        out: npt.NDArray[np.float64] = joint / joint.sum(axis=1)[:, None]
        return out

    def separation(self, x: npt.NDArray[np.float64]) -> float:
        """How well the verdicts separate the classes (both are the Youden index at K = 2).

        ``det M`` for a square system; for two classes over three verdicts the total-variation
        distance of their verdict distributions.
        """
        m = self.matrix(x)
        if self.k == self.c:
            return float(np.linalg.det(m))
        return float(0.5 * np.abs(m[0] - m[1]).sum())

    def solve(self, x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        m, p = self.matrix(x), x[-self.c:]
        if self.k == self.c:
            return np.asarray(np.linalg.solve(m.T, p), dtype=np.float64)
        d = m[0] - m[1]
        first = float(d @ (p - m[1]) / (d @ d))
        return np.array([first, 1.0 - first], dtype=np.float64)


def _transport(strata: _Strata, lab: PairwiseLabelledRows, target: npt.NDArray[np.int64], *,
               conf: float, deff: float | None = None, n_draws: int | None = None) -> WinShares:
    """Corrected shares of another run: the verdict-reweighted matrix, ``M^T pi = observed``."""
    method = METHOD_TRANSPORT
    n = float(target.sum())
    m_total = int((lab.human >= 0).sum())

    def refuse(reason: str) -> WinShares:
        return _refused_shares(reason, method, conf, lab, int(n), ASSUMPTION_TRANSPORT)

    if n == 0:
        return refuse("no target row with a decided judge verdict")
    empty = [s.name for s in strata.strata if s.decided and s.population and not s.labelled]
    if empty:
        return refuse(f"no labelled calibration rows in stratum {', '.join(empty)}: label some")
    rates = _decided_rates(strata, lab, n_draws)
    if rates is None:
        return refuse("the calibration set has no row with a decided judge verdict")
    per_class = (rates.shares * rates.sizes[:, None]).sum(axis=0)
    seen = np.bincount(rates.columns, minlength=_K) > 0
    # Forced choice: the humans never tie (no labelled tie). The tie share is then 0 and a vs b
    # is corrected over the judge's verdicts, its ties included when it gives them.
    forced = per_class[PW_TIE] == 0
    rows = [0, 1] if forced else [0, 1, 2]
    cols = [0, 1] if forced and not seen[PW_TIE] else [0, 1, 2]
    missing = [CLASSES[i] for i in rows if per_class[i] == 0]
    if missing:
        return refuse(f"no labelled row where the humans say {' or '.join(missing)}: label "
                      "rows of every outcome (a, b and tie) to estimate the judge's errors")
    unseen = [CLASSES[i] for i in range(_K) if not seen[i] and (i in cols or target[i])]
    if unseen:
        shown = [i for i in range(_K) if not seen[i] and target[i]]
        return refuse(
            f"the judge never says {' or '.join(unseen)} on the calibration set"
            + (f" but does on {int(sum(target[i] for i in shown))} target rows" if shown
               else "")
            + ": its errors cannot be separated, so the shares are not identified")
    if deff is None:
        deff = _design_effect(strata, lab)
    model = _Matrix(rates.columns, rows, cols)
    shares = rates.shares[:, rows]
    shares = shares / shares.sum(axis=1)[:, None]
    p_hat = target[cols].astype(float) / n
    x_hat = model.pack(shares, rates.weights, p_hat)
    k, c = len(rows), len(cols)
    if model.separation(x_hat) <= 1e-9:
        return refuse("the judge's misclassification matrix is singular or no better than "
                      "chance (det M <= 0): its verdicts carry no usable information")
    z = z_value(conf)
    raw = model.solve(x_hat)
    point = _project_simplex(raw)
    clipped = bool(np.any(np.abs(raw - point) > 1e-12))

    def interval(sh: npt.NDArray[np.float64], sizes: npt.NDArray[np.float64]
                 ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64],
                            npt.NDArray[np.float64], float]:
        """Smoothed centre (projected), unprojected smoothed solution, SEs, det."""
        r_s = (sizes[:, None] * sh + 2.0 / k) / (sizes[:, None] + 2.0)
        p_s = np.asarray((target[cols] + z * z / c) / (n + z * z), dtype=np.float64)
        x_s = model.pack(r_s, rates.weights, p_s)
        blocks = [_multinomial_cov(r_s[i], sizes[i] + 2.0) * deff for i in range(model.s)]
        size = x_s.size
        cov = np.zeros((size, size))
        at = 0
        for b in blocks:
            cov[at:at + k, at:at + k] = b
            at += k
        cov[at:at + model.s, at:at + model.s] = _multinomial_cov(rates.weights,
                                                                 rates.n_population)
        at += model.s
        cov[at:, at:] = _multinomial_cov(p_s, n + z * z)
        solved = model.solve(x_s)
        se = _delta(model.solve, x_s, cov)
        return _project_simplex(solved), solved, se, model.separation(x_s)

    centre, solved, se, det_s = interval(shares, rates.sizes)
    if np.any(solved + z * se < 0.0) or np.any(solved - z * se > 1.0):
        return refuse(
            "the judge's shares on the target lie outside what its error rates on the "
            "calibration set allow, beyond sampling noise: the error rates do not transfer")
    lows = np.minimum(np.clip(centre - z * se, 0.0, 1.0), point)
    highs = np.maximum(np.clip(centre + z * se, 0.0, 1.0), point)
    warnings: list[str] = []
    if forced:
        warnings.append(
            "no tie from the humans or the judge: a two-class correction of a vs b (the tie "
            "share is 0 by construction)" if c == 2 else
            "no tie from the humans: a two-class correction of a vs b over the judge's a / b / "
            "tie verdicts (least squares; the tie share is 0 by construction)")
    if clipped:
        warnings.append("the corrected shares left [0, 1] and were projected back: the judge's "
                        "errors on the labelled rows do not fit these target counts well")
    if det_s <= 0.05:
        warnings.append("the judge barely separates the outcomes (det M near 0): the corrected "
                        "shares are uninformative")
    if deff > 1.0:
        warnings.append(f"calibration rows cluster by source document (design effect "
                        f"{deff:.2f}): the variance of the judge's error rates is inflated by it")
    params: dict[str, Any] = {"misclassification": model.matrix(x_hat).tolist(),
                              "design_effect": deff}
    unsure = rates.unsure
    if unsure.sum():
        params["human_unsure_bounds"] = _transport_unsure_bounds(
            model, shares, rates, rows, target[cols], n, conf)
        warnings.append(f"{int(unsure.sum())} labelled calibration rows without a decided human "
                        "verdict: left out and bounded")
    out: list[PassRateEstimate] = []
    for i in range(k):
        out.append(PassRateEstimate(
            float(point[i]), float(lows[i]), float(highs[i]), method=method, confidence=conf,
            n_labelled=m_total, n_target=int(n), center=float(centre[i]), se=float(se[i]),
            clipped=clipped, assumption=ASSUMPTION_TRANSPORT, warnings=tuple(warnings)))
    if forced:
        out.append(PassRateEstimate(0.0, 0.0, 0.0, method=method, confidence=conf,
                                    n_labelled=m_total, n_target=int(n), se=0.0,
                                    assumption=ASSUMPTION_TRANSPORT, warnings=tuple(warnings)))
    return WinShares(out[0], out[1], out[2], method, assumption=ASSUMPTION_TRANSPORT,
                     clipped=clipped, warnings=tuple(warnings),
                     params=MappingProxyType(params))


def _transport_unsure_bounds(model: _Matrix, shares: npt.NDArray[np.float64],
                             rates: _StratumRates, rows: list[int],
                             target: npt.NDArray[np.int64], n: float, conf: float
                             ) -> dict[str, dict[str, float]]:
    """Each share over the resolutions "every unsure calibration row is class c"."""
    z = z_value(conf)
    k, c = model.k, model.c
    points, lows, highs = [], [], []
    for cls in range(k):
        sizes = rates.sizes + rates.unsure
        sh = (shares * rates.sizes[:, None] + np.outer(rates.unsure, np.eye(k)[cls])) / sizes[
            :, None]
        x = model.pack(sh, rates.weights, target.astype(float) / n)
        if model.separation(x) <= 1e-9:
            continue
        points.append(_project_simplex(model.solve(x)))
        r_s = (sizes[:, None] * sh + 2.0 / k) / (sizes[:, None] + 2.0)
        p_s = np.asarray((target + z * z / c) / (n + z * z), dtype=np.float64)
        x_s = model.pack(r_s, rates.weights, p_s)
        cov = np.zeros((x_s.size, x_s.size))
        for i in range(model.s):
            cov[i * k:(i + 1) * k, i * k:(i + 1) * k] = _multinomial_cov(r_s[i], sizes[i] + 2.0)
        at = model.s * k
        cov[at:at + model.s, at:at + model.s] = _multinomial_cov(rates.weights,
                                                                 rates.n_population)
        cov[at + model.s:, at + model.s:] = _multinomial_cov(p_s, n + z * z)
        centre = _project_simplex(model.solve(x_s))
        se = _delta(model.solve, x_s, cov)
        lows.append(np.clip(centre - z * se, 0, 1))
        highs.append(np.clip(centre + z * se, 0, 1))
    if not points:
        return {}
    pts, lo, hi = np.array(points), np.array(lows), np.array(highs)
    out = {}
    for i, side in enumerate(CLASSES[r] for r in rows):
        out[side] = {"if_all": float(pts[:, i].max()), "if_none": float(pts[:, i].min()),
                     "low": float(lo[:, i].min()), "high": float(hi[:, i].max())}
    return out


def _design_effect(strata: _Strata, lab: PairwiseLabelledRows) -> float:
    """The largest document design effect of the one-vs-rest shares (1 without documents)."""
    kept = (strata.of_labelled >= 0) & (lab.document >= 0)
    if not kept.any():
        return 1.0
    decided = np.array([s.decided for s in strata.strata])
    big_n = np.array(strata.population, dtype=float)
    m = np.array([s.labelled for s in strata.strata], dtype=float)
    weights = np.where(decided & (m > 0), big_n / max(big_n[decided].sum(), 1.0), 0.0)
    s_lab = strata.of_labelled[kept].astype(np.int8)
    deff = 1.0
    for c in range(_K):
        h = lab.human[kept]
        binary = np.where(h < 0, -1, (h == c).astype(np.int8)).astype(np.int8)
        dc = document_counts(binary, s_lab, lab.document[kept], weights)
        if dc.n_documents >= 3 and dc.design_effect > DESIGN_EFFECT_THRESHOLD:
            deff = max(deff, float(dc.design_effect))
    return deff


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
    evidence: PairwiseEvidence,
    target: PairwiseRunCounts,
    decision: DesignDecision,
    transport_strata: _Strata,
    *,
    same: bool,
    conf: float,
    seed: int,
    n_boot: int,
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
