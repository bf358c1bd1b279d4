"""Selective judging: take a judge's verdict only where it is certified, escalate the rest.

A judge that knows when to abstain accepts its verdict on a row only when its own signals say it
is sure (its calls agree across repeats and swapped source orders, its verdict log-probability
is far from 0.5, other judges agree), and sends the other rows on: to a stronger judge, then to
an expert. This module chooses the acceptance rule so that

    P( error rate among accepted verdicts <= alpha ) >= 1 - delta,

finite-sample, by **Learn then Test** (Angelopoulos, Bates, Candes, Jordan & Lei 2021/2025):

1. A family of rules ordered before any label is read: "accept a row when its confidence score
   is at least ``t``", for thresholds ``t_1 > t_2 > ...`` taken from the scores of the rows
   (never from the labels), most cautious first.
2. For each rule the null hypothesis ``H_t: error among the rows it accepts > alpha``, with an
   exact p-value from the labelled rows it accepts: given which labelled rows it accepts (a
   function of their scores only), their number of wrong verdicts is binomial, so
   ``p_t = P(Bin(n_t, alpha) <= errors_t)`` (the exact binomial tail; the Hoeffding-Bentkus
   bound of the LTT paper is offered too, :func:`hoeffding_bentkus_p_value`).
3. **Fixed-sequence testing**: test ``H_t1, H_t2, ...`` in order at level ``delta`` each and
   stop at the first that is not rejected. Fixed-sequence testing controls the family-wise
   error at ``delta`` with no correction, so with probability at least ``1 - delta`` every
   rejected rule, and the chosen one (the last rejected, which accepts the most rows), has
   error at most ``alpha``. Rules whose labelled rows are too few to ever pass (``(1 -
   alpha)^n > delta``) are dropped from the front of the sequence: that depends on the labelled
   rows' scores, not on their labels, so the test stays valid.

**A threshold per stratum.** A judge's passes and fails are not equally reliable (its error
among the verdicts it passes is one minus its positive predictive value, among those it fails
one minus the negative one), so a rule gets one threshold per stratum: each from its own fixed
sequence on the stratum's labelled rows at level ``delta / S`` (``S`` strata with scored rows;
Bonferroni). With probability at least ``1 - delta`` every stratum's accepted verdicts have
error at most ``alpha``, hence all of them, whatever the strata's population weights (so the
guarantee survives a change of the verdict mix); a stratum whose labels cannot certify anything
accepts nothing there. The strata are those of the labels' design (the one estimation path's
:func:`~judges.calibration.evidence_strata`: judge pass, judge fail, not judged, split further
for flips-first or escalated labels): labels drawn within them in unequal proportions are
still random within each, so the test is valid for random, stratified, flips-first and
escalated labels alike. Labels that are a random sample may instead use **one threshold** and
the pooled test above (``strata=None``). Labels drawn by the active queue (unequal chances
within a stratum) are refused by the callers.

:func:`cascade_pass_rate` is the whole-run pass rate of a cascade (judge A, then judge B, then
experts on what both abstained on): every row falls in one cell, settled (by any stage) or
escalated, within a stratum of the labels' own design; the labels of each cell are random
within it (post-stratification; the cells are not split by stage or verdict, which follow
thresholds tuned on the same labels: :func:`cascade_cells`), and the estimate is the
verdict-stratified estimator of :mod:`judges.calibration.strata` on those cells,
``theta = sum_c (N_c / N) r_c`` with ``r_c`` the experts' pass share of the labelled rows of
cell ``c`` and a finite-population correction (escalated rows all labelled give their exact
share). With one stage it is :func:`~judges.calibration.answer_pass_rate`'s estimate with the
escalated rows as their own strata.

References:
    Angelopoulos, A. N., Bates, S., Candes, E. J., Jordan, M. I. & Lei, L. (2021/2025). Learn
    then Test: calibrating predictive algorithms to achieve risk control. Ann. Appl. Stat.
    Jung, J., Brahman, F. & Choi, Y. (2025). Trust or Escalate: LLM judges with provable
    guarantees for human agreement. ICLR 2025.
    Bauer, P. (1991). Multiple testing in clinical trials. Stat. Med. 10, 871-890 (fixed
    sequence).
    Bates, S., Angelopoulos, A., Lei, L., Malik, J. & Jordan, M. (2021). Distribution-free,
    risk-controlling prediction sets. J. ACM 68(6) (the Hoeffding-Bentkus p-value).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy.stats import binom

from ._results import CalibrationInputError, PassRateEstimate, _ToDict
from .strata import (
    OUTCOME_NOT_JUDGED,
    OUTCOME_PASS,
    StratumCounts,
    bound_over_unsure,
    counts_of_strata,
    stratified_run_pass_rate_from_counts,
)
from .vocabulary import P_VALUES

__all__ = [
    "P_VALUES",
    "AcceptanceRule",
    "CascadeCells",
    "ThresholdTest",
    "binomial_p_value",
    "cascade_cells",
    "cascade_pass_rate",
    "confidence_score",
    "hoeffding_bentkus_p_value",
    "learn_then_test",
    "min_labels_to_certify",
    "threshold_grid",
]

PValue = Literal["binomial", "hoeffding_bentkus"]

GUARANTEE_POOLED = (
    "with probability at least {conf} the error rate among the verdicts this rule accepts is "
    "at most {alpha} (Learn then Test, fixed-sequence testing, {p}), for rows drawn like the "
    "calibration rows"
)
GUARANTEE_STRATA = (
    "with probability at least {conf} the error rate among the verdicts this rule accepts is "
    "at most {alpha} in every judge-verdict stratum of the labels' design, hence among all "
    "accepted verdicts whatever their mix (Learn then Test: a threshold per stratum by "
    "fixed-sequence testing, delta split over the strata, {p}), for rows drawn like the "
    "calibration rows"
)


def binomial_p_value(errors: int, n: int, alpha: float) -> float:
    """Exact p-value of ``H: error rate > alpha`` from ``errors`` wrong of ``n`` rows.

    ``P(Bin(n, alpha) <= errors)``: the chance of so few errors if the rate were ``alpha``.

    Examples:
        >>> round(binomial_p_value(0, 22, 0.1), 4)  # 0.9 ** 22
        0.0985
        >>> binomial_p_value(3, 0, 0.1)
        1.0
    """
    if n <= 0:
        return 1.0
    return float(min(1.0, binom.cdf(int(errors), int(n), float(alpha))))


def hoeffding_bentkus_p_value(errors: int, n: int, alpha: float) -> float:
    """The Hoeffding-Bentkus p-value of ``H: mean loss > alpha`` (Bates et al. 2021, Prop. 3).

    ``min(exp(-n h(r ^ alpha, alpha)), e P(Bin(n, alpha) <= ceil(n r)))`` with ``r`` the mean
    loss and ``h(a, b) = a log(a / b) + (1 - a) log((1 - a) / (1 - b))``.

    Examples:
        >>> round(hoeffding_bentkus_p_value(2, 60, 0.1), 3), round(binomial_p_value(2, 60, 0.1), 3)
        (0.143, 0.053)
    """
    if n <= 0:
        return 1.0
    r = errors / n
    a = min(r, alpha)

    def h(x: float, y: float) -> float:
        left = 0.0 if x == 0 else x * math.log(x / y)
        return left + (1 - x) * math.log((1 - x) / (1 - y))

    hoeffding = math.exp(-n * h(a, alpha))
    bentkus = math.e * float(binom.cdf(math.ceil(n * r), n, alpha))
    return float(min(1.0, hoeffding, bentkus))


def _p_value(name: str) -> Any:
    if name == "binomial":
        return binomial_p_value
    if name == "hoeffding_bentkus":
        return hoeffding_bentkus_p_value
    raise CalibrationInputError(f"unknown p-value {name!r} (p-values: {', '.join(P_VALUES)})")


def min_labels_to_certify(alpha: float, delta: float) -> int:
    """Fewest accepted labelled rows that can certify ``alpha`` at ``delta`` (with no error).

    ``(1 - alpha)^n <= delta``.

    Examples:
        >>> min_labels_to_certify(0.1, 0.1), min_labels_to_certify(0.05, 0.1)
        (22, 45)
    """
    _check_levels(alpha, delta)
    return math.ceil(math.log(delta) / math.log(1.0 - alpha))


def _check_levels(alpha: float, delta: float) -> None:
    if not 0.0 < alpha < 1.0 or not 0.0 < delta < 1.0:
        raise CalibrationInputError(f"alpha and delta must be in (0, 1), got {alpha}, {delta}")


def confidence_score(
    *,
    agreeing: npt.ArrayLike | None = None,
    scored: npt.ArrayLike | None = None,
    pass_probability: npt.ArrayLike | None = None,
    others_agreeing: npt.ArrayLike | None = None,
    others: npt.ArrayLike | None = None,
) -> npt.NDArray[np.float64]:
    """The judge's confidence in its verdict on each row, in (0, 1), from its own signals.

    The product of the signals each row has (a missing one counts 1):

    * **agreement across repeats and swapped orders**: ``(agreeing + 1) / (scored + 2)``, the
      smoothed share of the row's scored calls that gave its verdict (one call: 2/3; six
      agreeing calls: 7/8; 2 of 3: 3/5);
    * **verdict log-probability**: ``max(p, 1 - p)`` of the judge's probability of ``pass``
      (``NaN``: not available);
    * **other judges**: ``(others_agreeing + 1) / (others + 2)``, the smoothed share of other
      judges' verdicts on the row that agree with it (``others = 0``: none).

    A rule accepting rows at or above a threshold of this score is certified by
    :func:`learn_then_test`; the score itself needs no calibration (the test is valid for any
    score computed without the labels).

    Returns:
        Scores; ``NaN`` where the row has no verdict (``scored == 0``), so no rule accepts it.

    Examples:
        >>> confidence_score(agreeing=[6, 2, 1, 0], scored=[6, 3, 1, 0]).round(3).tolist()
        [0.875, 0.6, 0.667, nan]
        >>> confidence_score(pass_probability=[0.9, 0.2]).tolist()
        [0.9, 0.8]
    """
    arrays = [np.asarray(v, dtype=float) for v in (agreeing, scored, pass_probability,
                                                   others_agreeing, others) if v is not None]
    if not arrays:
        raise CalibrationInputError("confidence_score needs at least one signal")
    n = arrays[0].shape[0]
    if any(a.shape != (n,) for a in arrays):
        raise CalibrationInputError("every signal needs one value per row")
    score = np.ones(n)
    if (agreeing is None) != (scored is None):
        raise CalibrationInputError("agreeing and scored go together")
    if agreeing is not None and scored is not None:
        k, m = np.asarray(agreeing, dtype=float), np.asarray(scored, dtype=float)
        if np.any(k > m) or np.any(k < 0):
            raise CalibrationInputError("agreeing calls must be between 0 and scored")
        score *= (k + 1.0) / (m + 2.0)
        score[m <= 0] = np.nan
    if pass_probability is not None:
        p = np.asarray(pass_probability, dtype=float)
        if np.any((p < 0) | (p > 1)):
            raise CalibrationInputError("pass probabilities must be in [0, 1]")
        score *= np.where(np.isnan(p), 1.0, np.maximum(p, 1.0 - p))
    if (others_agreeing is None) != (others is None):
        raise CalibrationInputError("others_agreeing and others go together")
    if others_agreeing is not None and others is not None:
        k, m = np.asarray(others_agreeing, dtype=float), np.asarray(others, dtype=float)
        score *= np.where(m > 0, (k + 1.0) / (m + 2.0), 1.0)
    return score


def threshold_grid(scores: npt.ArrayLike, *, max_points: int = 60) -> npt.NDArray[np.float64]:
    """The thresholds to test, most cautious first: the distinct scores, or quantiles of them.

    Taken from the rows' scores (labelled and unlabelled alike), never from the labels.

    Examples:
        >>> threshold_grid([0.5, 0.9, 0.9, np.nan, 0.7]).tolist()
        [0.9, 0.7, 0.5]
    """
    s = np.asarray(scores, dtype=float)
    s = s[np.isfinite(s)]
    distinct = np.unique(s)[::-1]
    if distinct.size <= max_points:
        return distinct
    # Quantiles of the rows (not of the distinct values): each step accepts about as many rows.
    q = np.quantile(s, np.linspace(1.0, 0.0, max_points), method="inverted_cdf")
    return np.unique(q)[::-1]


@dataclass(frozen=True)
class ThresholdTest(_ToDict):
    """One rule of a sequence: "accept when the score is at least ``threshold``".

    Attributes:
        threshold: The threshold.
        stratum: The stratum of the labels' design the rule is for (-1: every row).
        accepted: Rows of the population (of the stratum) it accepts.
        accepted_labelled: Labelled rows (with a decided human verdict) it accepts.
        errors: Of those, rows where the judge's verdict is not the human's.
        p_value: The p-value of ``error among accepted > alpha``.
        rejected: Whether ``p_value`` is at most the sequence's level (the rule is certified,
            if all before it were).
    """

    threshold: float
    stratum: int
    accepted: int
    accepted_labelled: int
    errors: int
    p_value: float
    rejected: bool


@dataclass(frozen=True)
class AcceptanceRule(_ToDict):
    """An acceptance rule certified by Learn then Test, or its refusal with the reason.

    Attributes:
        alpha: The error rate among accepted verdicts the rule controls.
        delta: The chance the control fails.
        p_value: The p-value used (:data:`P_VALUES`).
        thresholds: Accept a row when its score is at least its stratum's threshold (one
            threshold, for every row, when the labels are a random sample); ``None``: accept
            nothing there.
        strata: Names of the strata of ``thresholds`` (empty for the pooled rule).
        level: The level of each stratum's sequence (``delta`` split over the strata tested).
        rows: Rows of the population (with or without a verdict).
        accepted: Population rows accepted.
        accepted_share: ``accepted / rows``.
        labelled: Labelled rows with a decided human verdict and a judge verdict.
        accepted_labelled: Of those, rows the rule accepts.
        errors: Of those, rows where the judge's verdict is not the human's.
        error_estimate: The population-weighted error among accepted labelled rows.
        tests: Every rule tested, in order (the calibration evidence of the choice).
        guarantee: The guarantee in words.
        refused: Whether no row is accepted (no rule certified, or none could be).
        reason: Why.
    """

    alpha: float
    delta: float
    p_value: str
    thresholds: tuple[float | None, ...]
    strata: tuple[str, ...]
    level: float
    rows: int
    accepted: int
    accepted_share: float
    labelled: int
    accepted_labelled: int
    errors: int
    error_estimate: float | None
    tests: tuple[ThresholdTest, ...] = ()
    guarantee: str = ""
    refused: bool = False
    reason: str | None = None

    @property
    def per_stratum(self) -> bool:
        """Whether each stratum of the labels' design has its own threshold."""
        return bool(self.strata)

    @property
    def threshold(self) -> float | None:
        """The pooled rule's threshold (the lowest stratum threshold of a per-stratum rule)."""
        values = [t for t in self.thresholds if t is not None]
        return min(values) if values else None

    def accepts(self, scores: npt.ArrayLike,
                strata: npt.ArrayLike | None = None) -> npt.NDArray[np.bool_]:
        """Which rows the rule accepts (never a row without a score, nor outside the strata).

        ``strata``: each row's stratum, for a per-stratum rule (required then).
        """
        s = np.asarray(scores, dtype=float)
        if self.per_stratum:
            if strata is None:
                raise CalibrationInputError("a per-stratum rule needs each row's stratum")
            st = np.asarray(strata, dtype=np.int64)
            bar = np.array([np.inf if t is None else t for t in self.thresholds] + [np.inf])
            cut = bar[np.where((st >= 0) & (st < len(self.thresholds)), st, -1)]
        else:
            cut = np.full(s.shape, np.inf if self.thresholds[0] is None else self.thresholds[0])
        accepted: npt.NDArray[np.bool_] = np.isfinite(s) & (s >= cut)
        return accepted


def learn_then_test(
    score: npt.ArrayLike,
    wrong: npt.ArrayLike,
    *,
    population_score: npt.ArrayLike,
    alpha: float,
    delta: float,
    strata: npt.ArrayLike | None = None,
    population_strata: npt.ArrayLike | None = None,
    strata_names: Sequence[str] = (),
    p_value: str = "binomial",
    max_points: int = 60,
) -> AcceptanceRule:
    """Choose acceptance thresholds with error among accepted verdicts <= alpha (LTT).

    Labels that are a random sample (``strata=None``): one threshold for every row, one
    fixed sequence at level ``delta``, the pooled test. Labels drawn within strata in unequal
    proportions: a threshold per stratum, each from its own fixed sequence on the stratum's
    labelled rows at level ``delta / S`` (``S`` the strata with a scored row): with probability
    at least ``1 - delta`` every stratum's accepted verdicts have error at most ``alpha``
    (Bonferroni over the strata), hence all accepted verdicts, whatever the strata's weights.
    A stratum whose labels cannot certify anything accepts nothing; the others still may.

    Args:
        score: Confidence score of each labelled row (``NaN``: no judge verdict).
        wrong: Whether the judge's verdict on each labelled row differs from the human's
            (labelled rows with a decided human verdict only).
        population_score: Score of every row of the population the rule is for (the labelled
            rows included); the grid and the accepted share come from it.
        alpha: The error rate to control, in (0, 1).
        delta: The chance the control may fail, in (0, 1).
        strata: Each labelled row's stratum of the labels' design (per-stratum rule); ``None``:
            the labels are a random sample of the population (pooled rule).
        population_strata: Each population row's stratum (with ``strata``).
        strata_names: A name per stratum, for messages.
        p_value: ``binomial`` (exact, default) or ``hoeffding_bentkus``.
        max_points: Most thresholds in a sequence.

    Returns:
        The :class:`AcceptanceRule`; ``refused`` with the reason when it accepts nothing.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> conf = rng.uniform(0.5, 1.0, 400)
        >>> wrong = rng.uniform(size=400) > conf   # sure rows are rarely wrong
        >>> rule = learn_then_test(conf, wrong, population_score=conf, alpha=0.1, delta=0.1)
        >>> rule.refused, 0.0 < rule.accepted_share < 1.0, rule.error_estimate <= 0.1
        (False, True, True)
    """
    _check_levels(alpha, delta)
    test = _p_value(p_value)
    s = np.asarray(score, dtype=float)
    w = np.asarray(wrong, dtype=bool)
    pop = np.asarray(population_score, dtype=float)
    if s.shape != w.shape or s.ndim != 1:
        raise CalibrationInputError("score and wrong need one entry per labelled row")
    per_stratum = strata is not None
    if per_stratum != (population_strata is not None):
        raise CalibrationInputError("strata and population_strata go together")
    st = np.zeros(s.shape, dtype=np.int64) if strata is None else np.asarray(strata, np.int64)
    pst = (np.zeros(pop.shape, dtype=np.int64) if population_strata is None
           else np.asarray(population_strata, dtype=np.int64))
    if st.shape != s.shape or pst.shape != pop.shape:
        raise CalibrationInputError("strata need one entry per row")
    k = int(max(st.max(initial=-1), pst.max(initial=-1)) + 1)
    names = tuple(strata_names) if strata_names else tuple(f"stratum {i}" for i in range(k))
    if len(names) < k:
        raise CalibrationInputError(f"strata_names needs a name per stratum ({k})")
    scored = [j for j in range(k) if np.isfinite(pop[pst == j]).any()]
    level = delta / max(len(scored), 1) if per_stratum else delta
    n_min = min_labels_to_certify(alpha, level)
    labelled = int(np.isfinite(s).sum())
    conf = f"{1 - delta:.0%}"
    guarantee = (GUARANTEE_STRATA if per_stratum else GUARANTEE_POOLED).format(
        conf=conf, alpha=f"{alpha:g}", p=P_VALUES[p_value].split(" (")[0])
    tests: list[ThresholdTest] = []
    thresholds: list[float | None] = [None] * (k if per_stratum else 1)
    notes: list[str] = []
    for j in (scored if per_stratum else [-1]):
        in_pop = np.ones(pop.shape, bool) if j < 0 else pst == j
        in_lab = np.ones(s.shape, bool) if j < 0 else st == j
        ps, ls, ws = pop[in_pop], s[in_lab], w[in_lab]
        where = "" if j < 0 else f" in stratum {names[j]}"
        chosen: float | None = None
        started = False
        for t in threshold_grid(ps, max_points=max_points):
            acc_lab = np.isfinite(ls) & (ls >= t)
            n, e = int(acc_lab.sum()), int(ws[acc_lab].sum())
            if not started and n < n_min:
                continue  # too few labelled rows to ever pass: dropped from the front
            started = True
            p = test(e, n, alpha)
            row = ThresholdTest(threshold=float(t), stratum=j,
                                accepted=int((np.isfinite(ps) & (ps >= t)).sum()),
                                accepted_labelled=n, errors=e, p_value=float(p),
                                rejected=bool(p <= level))
            tests.append(row)
            if not row.rejected:
                if chosen is None:
                    notes.append(f"no rule is certified{where}: even the most cautious one "
                                 f"that could be (score >= {t:.3g}, {n} labelled rows "
                                 f"accepted, {e} wrong) has p = {p:.3g} > {level:.3g}")
                break
            chosen = float(t)
        if not started:
            notes.append(f"too few labelled rows{where} to certify a rule: at least {n_min} "
                         f"with a judge verdict are needed to show an error rate <= {alpha:g} "
                         f"at level {level:.3g} ({int(np.isfinite(ls).sum())} have one)")
        thresholds[0 if j < 0 else j] = chosen
    rule = AcceptanceRule(
        alpha=alpha, delta=delta, p_value=p_value, thresholds=tuple(thresholds),
        strata=names[:k] if per_stratum else (), level=level, rows=int(pop.size), accepted=0,
        accepted_share=0.0, labelled=labelled, accepted_labelled=0, errors=0,
        error_estimate=None, tests=tuple(tests), guarantee=guarantee,
    )  # fmt: skip
    acc_pop = rule.accepts(pop, pst if per_stratum else None)
    acc_lab = rule.accepts(s, st if per_stratum else None)
    big = np.bincount(pst[acc_pop], minlength=k) if k else np.zeros(0)
    n_s = np.bincount(st[acc_lab], minlength=k) if k else np.zeros(0)
    e_s = np.bincount(st[acc_lab], weights=w[acc_lab].astype(float), minlength=k) if k else \
        np.zeros(0)
    estimate = None
    if acc_lab.any():
        share = big / max(big.sum(), 1)
        estimate = float((share * np.divide(e_s, n_s, out=np.zeros(k), where=n_s > 0)).sum())
    accepted = int(acc_pop.sum())
    refused = accepted == 0
    reason = None
    if refused:
        reason = "; ".join(notes) + "; every row is escalated" if notes else (
            "the rule accepts no row of the population; every row is escalated")
    return replace(rule, accepted=accepted, accepted_share=accepted / pop.size if pop.size
                   else 0.0, accepted_labelled=int(acc_lab.sum()), errors=int(w[acc_lab].sum()),
                   error_estimate=estimate, refused=refused, reason=reason)


# --------------------------------------------------------------------------- cascade


@dataclass(frozen=True)
class CascadeCells:
    """The cells of a cascade's whole-run estimate: settled or escalated, within a design stratum.

    Attributes:
        counts: Population and labelled counts per cell (empty cells dropped).
        of_rows: Each population row's cell.
        of_labelled: Each labelled row's cell.
    """

    counts: StratumCounts
    of_rows: npt.NDArray[np.int64]
    of_labelled: npt.NDArray[np.int64] = field(repr=False)


def cascade_cells(
    stage: npt.ArrayLike,
    design_stratum: npt.ArrayLike,
    labelled: npt.ArrayLike,
    human: npt.ArrayLike,
    *,
    stage_names: Sequence[str],
    stratum_names: Sequence[str],
    stratum_outcomes: Sequence[int] | None = None,
) -> CascadeCells:
    """Cells of a cascade run: each design stratum split into its settled and escalated rows.

    The cells are not split by which stage settled a row or by that stage's verdict. Those
    splits follow the stages' thresholds, which were chosen on the same labelled rows, so a
    cell such as "judge A pass" would hold the labelled rows the rule was tuned to get right
    and its pass share would lean toward the verdict (``bench/coverage.py --block selective``
    measured whole-run coverage 0.939 with them, 0.95 without). The split into settled and
    escalated rows is kept because the experts' extra labels are random only among the
    escalated rows.

    Args:
        stage: Per row of the run: the stage that accepted it (0, 1, ...) or ``len(stage_names)``
            for rows every stage escalated.
        design_stratum: Per row: its stratum of the labels' design
            (:func:`~judges.calibration.evidence_strata` of the first judge).
        labelled: Indices of the labelled rows in the run.
        human: Their human verdict codes (1 pass, 0 fail, -1 unsure).
        stage_names: A name per stage.
        stratum_names: A name per design stratum.
        stratum_outcomes: The judge outcome of each design stratum (the settled cells keep it;
            default :data:`OUTCOME_PASS`); escalated cells count as not judged.
    """
    g = np.asarray(stage, dtype=np.int64)
    d = np.asarray(design_stratum, dtype=np.int64)
    n_stages = len(stage_names)
    if g.shape != d.shape:
        raise CalibrationInputError("stage and design_stratum need one entry per row")
    if g.size and (g.min() < 0 or g.max() > n_stages or d.min() < 0):
        raise CalibrationInputError("stage codes must be 0..len(stage_names), strata >= 0")
    raw = d * 2 + (g == n_stages)
    used, codes = np.unique(raw, return_inverse=True)
    names, outcomes = [], []
    for r in used.tolist():
        base, escalated = divmod(int(r), 2)
        where = stratum_names[base] if base < len(stratum_names) else f"stratum {base}"
        if escalated:
            names.append(f"escalated · {where}")
            outcomes.append(OUTCOME_NOT_JUDGED)
        else:
            names.append(f"settled · {where}")
            outcomes.append(OUTCOME_PASS if stratum_outcomes is None or base >= len(
                stratum_outcomes) else int(stratum_outcomes[base]))
    lab = np.asarray(labelled, dtype=np.int64)
    h = np.asarray(human, dtype=np.int8)
    if h.shape != lab.shape:
        raise CalibrationInputError("human needs one entry per labelled row")
    population = np.bincount(codes, minlength=len(used))
    of_labelled = codes[lab] if lab.size else np.zeros(0, dtype=np.int64)
    counts = counts_of_strata(h, of_labelled, population.tolist(), outcomes=tuple(outcomes),
                              names=tuple(names))  # fmt: skip
    return CascadeCells(counts, codes.astype(np.int64), of_labelled.astype(np.int64))


def cascade_pass_rate(
    cells: CascadeCells | StratumCounts,
    *,
    confidence: float = 0.95,
    transferred: Sequence[bool] | None = None,
) -> PassRateEstimate:
    """The true pass rate of the whole cascade run, from its cells (see the module docstring).

    The verdict-stratified estimator over the cells
    (:func:`~judges.calibration.stratified_run_pass_rate_from_counts`, with each cell's
    unbiased variance): valid when the labelled
    rows of each cell are a random sample of it, which holds for labels drawn at random, within
    the design strata, or from the escalated rows at random. A cell without labels makes the
    interval a bound over its rows (not identified).

    Args:
        cells: The run's cells (:func:`cascade_cells`), or their counts.
        confidence: Two-sided level.
        transferred: Per cell, whether its labels come from another run (the calibration run
            of a cascade applied to a new run: its accepted cells' pass shares are transferred,
            without a finite-population correction); default none.
    """
    counts = cells.counts if isinstance(cells, CascadeCells) else cells
    # The unbiased (m - 1) variance of each cell, as the pairwise shares use: a cascade's cells
    # are many and some small (escalated rows of a small stratum), where Agresti-Caffo's
    # m + 2 made the interval too narrow (bench/coverage.py --block selective: 0.937 with it,
    # 0.955 without, in the weak-judge cell with 200 labels).
    est = stratified_run_pass_rate_from_counts(counts, confidence=confidence,
                                               transferred=transferred,
                                               unbiased_variance=True)
    assumption = (
        "every row of the run falls in one cascade cell (settled by a stage, or escalated, "
        "within a stratum of the labels' design); the labelled rows of each cell "
        "are a random sample of it (random, stratified or escalated-queue labels)"
    )
    if transferred is not None and any(transferred):
        assumption += ("; the accepted cells' pass shares are those of the calibration run's "
                       "cells (the new run's rows are drawn like the calibration rows)")
    # The same headline rule as the report's: human-unsure rows that can move the answer past
    # the interval make the bounds the answer.
    est, said = bound_over_unsure(replace(est, method="cascade_stratified", assumption=assumption),
                                  int(sum(counts.human_unsure)))
    return est if said is None else replace(est, warnings=(*est.warnings, said))
