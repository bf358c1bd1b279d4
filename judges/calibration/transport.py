"""Judge error rates from labels drawn by verdict, and their transfer to another run (Lee).

When labels were drawn within judge-verdict strata (the Label page's by-verdict order, flips
first, ...), the raw sample sensitivity and specificity are biased toward the over-sampled
stratum. Reweighting the within-stratum rates by the dataset's own verdict distribution gives
the population rates (Bayes' rule), valid for any allocation of labels between strata:

* :func:`population_rates` — sensitivity, specificity, FPR and kappa of the dataset's judged rows;
* :func:`transported_pass_rate` — a separate calibration set: ``sens = p PPV / (p PPV + (1 - p)
  FOR)`` generalised to three judge outcomes (pass, fail, not judged), delta-method interval,
  then the Rogan-Gladen correction of the target run, whose estimand includes its not-judged
  rows.

References:
    Lee, C., Zeng, T., Jeong, J., Sohn, J. & Lee, K. (2025). How to correctly report
    LLM-as-a-judge evaluations. arXiv:2511.21140.
    Rogan, W. J. & Gladen, B. (1978). Am. J. Epidemiology 107(1), 71-76.
    Agresti, A. & Caffo, B. (2000). Am. Stat. 54, 280-288 (the +1/+2 smoothing).
    Oehlert, G. W. (1992). A note on the delta method. Am. Stat. 46(1), 27-29.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, Estimate, PassRateEstimate, _refused, _ToDict
from ._verdicts import PerRow
from .rates import check_confidence, z_value
from .strata import OUTCOME_NOT_JUDGED, OUTCOME_PASS, StratumCounts, stratum_counts, verdict_strata
from .vocabulary import STRATA

__all__ = [
    "PopulationRates",
    "TransferredRates",
    "error_rates",
    "population_rates",
    "transported_pass_rate",
    "transported_pass_rate_from_counts",
]

ASSUMPTION_TRANSPORT = (
    "the judge's error rates (including how often it does not judge) transfer from the "
    "calibration set to the target run (the pass rate itself may differ); calibration labels "
    "drawn at random within each judge-verdict stratum of the calibration set, in any proportions"
)


# --------------------------------------------------------------------------- delta method


def _delta(
    fun: Callable[[npt.NDArray[np.float64]], float],
    x: npt.NDArray[np.float64],
    cov: npt.NDArray[np.float64],
) -> tuple[float, float]:
    """Value and delta-method standard error of ``fun`` at ``x`` (central differences)."""
    value = fun(x)
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = 1e-6
        grad[i] = (fun(x + step) - fun(x - step)) / 2e-6
    return value, math.sqrt(max(0.0, float(grad @ cov @ grad)))


def _logit_interval(value: float, se: float, z: float) -> tuple[float, float]:
    """Interval on the logit scale (stays inside (0, 1) for rates near the edges)."""
    v = min(max(value, 1e-9), 1.0 - 1e-9)
    lg, s = math.log(v / (1.0 - v)), se / (v * (1.0 - v))
    return 1.0 / (1.0 + math.exp(-(lg - z * s))), 1.0 / (1.0 + math.exp(-(lg + z * s)))


def _containing(bounds: tuple[float, float], point: float) -> tuple[float, float]:
    """``bounds`` widened, if needed, so that they contain ``point``."""
    return min(bounds[0], point), max(bounds[1], point)


def _multinomial_cov(w: npt.NDArray[np.float64], n: float) -> npt.NDArray[np.float64]:
    return (np.diag(w) - np.outer(w, w)) / max(n, 1.0)


# --------------------------------------------------------------------------- population rates


@dataclass(frozen=True)
class PopulationRates(_ToDict):
    """The judge's error rates on the population of judged rows (not the raw sample rates).

    Attributes:
        sensitivity: ``P(judge pass | human pass)`` among judged rows.
        specificity: ``P(judge fail | human fail)`` among judged rows.
        fpr: ``1 - specificity``: the share of truly failing rows the judge lets through.
        kappa: Cohen's kappa of the population judge-vs-human table.
        not_judged_share: Share of the dataset's rows the judge did not judge.
        method: How the rates were obtained.
    """

    sensitivity: Estimate
    specificity: Estimate
    fpr: Estimate
    kappa: Estimate
    not_judged_share: float
    method: str = "verdict-reweighted"


def population_rates(
    human: PerRow, judge_labelled: PerRow, judge_population: PerRow,
    *, confidence: float = 0.95,
) -> PopulationRates:
    """Sensitivity, specificity, FPR and kappa of the dataset's judged rows, by reweighting.

    With ``w`` the judge pass share of judged rows and ``PPV``/``FOR`` the human pass shares
    of labelled judge-pass / judge-fail rows: ``sens = w PPV / (w PPV + (1 - w) FOR)``,
    ``spec = (1 - w)(1 - FOR) / ((1 - w)(1 - FOR) + w (1 - PPV))``, kappa of the population
    table ``[[ (1-w)(1-FOR), w(1-PPV) ], [ (1-w) FOR, w PPV ]]``. Valid for any allocation of
    labels between the verdict strata; for a random sample they equal the sample rates up to
    noise. Delta-method intervals (logit scale for rates) from smoothed ``PPV``/``FOR``, with
    ``w`` treated as estimated from the dataset's verdicts (multinomial variance).

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same rows.
        judge_population: Judge verdicts on every row of the dataset (labelled rows included).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`PopulationRates`; a rate the data cannot support is refused with a reason.
    """
    conf = check_confidence(confidence)
    counts = stratum_counts(human, judge_labelled, judge_population)
    return _population_rates(counts, conf)


def _population_rates(counts: StratumCounts, conf: float) -> PopulationRates:
    z = z_value(conf)
    outcomes = np.asarray(counts.outcomes)
    judged = np.flatnonzero(outcomes != OUTCOME_NOT_JUDGED)
    big_n = np.asarray(counts.population, dtype=float)[judged]
    m = np.asarray(counts.labelled, dtype=float)[judged]
    k = np.asarray(counts.human_pass, dtype=float)[judged]
    passes = outcomes[judged] == OUTCOME_PASS
    n_judged = float(big_n.sum())
    total = float(sum(counts.population))
    nj_share = (total - n_judged) / total if total else 0.0
    n_lab = int(m.sum())
    method = "verdict-reweighted-delta"

    def refused(reason: str) -> Estimate:
        return Estimate.refusal(reason, n=n_lab, method=method, confidence=conf)

    reason = None
    empty = [counts.names[judged[i]] for i in range(judged.size) if big_n[i] > 0 and m[i] == 0]
    if n_judged == 0:
        reason = "the judge judged no rows"
    elif empty:
        reason = f"no labelled rows in stratum {', '.join(empty)}: label some of them"
    elif k.sum() == 0 or (m - k).sum() == 0:
        which = "passing" if k.sum() == 0 else "failing"
        reason = f"no human-{which} labelled rows: label at least one failing and one passing row"
    if reason is not None:
        r = refused(reason)
        return PopulationRates(r, r, r, r, nj_share, method)
    used = big_n > 0
    big_n, m, k, passes = big_n[used], m[used], k[used], passes[used]
    n_s = big_n.size
    w = big_n / n_judged
    r_s = (k + 1.0) / (m + 2.0)
    r_hat = k / np.maximum(m, 1.0)
    # Error rates describe the judge (they are transferred to other runs), so their estimand is
    # the population the rows come from: no finite-population correction, unlike the run's
    # pass rate (a fully labelled dataset still leaves the judge's sensitivity uncertain).
    cov = np.zeros((2 * n_s - 1, 2 * n_s - 1))
    cov[:n_s, :n_s] = np.diag(r_s * (1.0 - r_s) / (m + 2.0))
    cov[n_s:, n_s:] = _multinomial_cov(w, n_judged)[: n_s - 1, : n_s - 1]

    def cells(x: npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
        r, ww = x[:n_s], np.append(x[n_s:], 1.0 - x[n_s:].sum())
        tp = float((ww * r)[passes].sum())
        fn = float((ww * r)[~passes].sum())
        fp = float((ww * (1 - r))[passes].sum())
        tn = float((ww * (1 - r))[~passes].sum())
        return tp, fn, fp, tn

    def sens(x: npt.NDArray[np.float64]) -> float:
        tp, fn, _, _ = cells(x)
        return tp / (tp + fn) if tp + fn > 0 else math.nan

    def spec(x: npt.NDArray[np.float64]) -> float:
        _, _, fp, tn = cells(x)
        return tn / (tn + fp) if tn + fp > 0 else math.nan

    def kappa(x: npt.NDArray[np.float64]) -> float:
        tp, fn, fp, tn = cells(x)
        pe = (tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)
        return (tp + tn - pe) / (1.0 - pe) if pe < 1.0 else 0.0

    x_hat = np.concatenate([r_hat, w[:-1]])
    x_s = np.concatenate([r_s, w[:-1]])
    out: dict[str, Estimate] = {}
    for name, fun in (("sensitivity", sens), ("specificity", spec)):
        value = fun(x_hat)
        _, se = _delta(fun, x_s, cov)
        # The interval is centred on the smoothed rates (coverage at the edges) but the point is
        # the raw rate: with a stratum of 14 rows and no human-pass row among the judge's fails,
        # sensitivity is 1.000 while the smoothed interval ends at 0.996. An interval that
        # excludes its own estimate reads as a bug, so it is widened to reach the point.
        lo, hi = _containing(_logit_interval(fun(x_s), se, z), value)
        out[name] = Estimate(value, lo, hi, n_lab, method, conf, se=se)
        if name == "specificity":  # FPR = 1 - specificity, bounds swapped
            out["fpr"] = Estimate(1.0 - value, 1.0 - hi, 1.0 - lo, n_lab, method, conf, se=se)
    sp = out["specificity"]
    kv = kappa(x_hat)
    kc, kse = _delta(kappa, x_s, cov)
    klo, khi = _containing((max(-1.0, kc - z * kse), min(1.0, kc + z * kse)), kv)
    out["kappa"] = Estimate(kv, klo, khi, n_lab, method, conf, se=kse)
    return PopulationRates(out["sensitivity"], sp, out["fpr"], out["kappa"], nj_share, method)


# --------------------------------------------------------------------------- transport (Lee)


def transported_pass_rate(
    human: PerRow, judge_labelled: PerRow, judge_calibration: PerRow, judge_target: PerRow,
    *, confidence: float = 0.95,
) -> PassRateEstimate:
    """Corrected pass rate of a target run from a separate calibration set labelled by verdict.

    The judge has three outcomes (pass, fail, not judged). On the calibration set, with ``W_j``
    its share of rows in stratum ``j`` (over every calibration row) and ``r_j`` the human pass
    share of labelled rows in stratum ``j``:
    ``a = P(judge pass | human pass) = W_pass r_pass / sum_j W_j r_j`` and
    ``b = P(judge pass | human fail) = W_pass (1 - r_pass) / sum_j W_j (1 - r_j)`` (Bayes; for
    two outcomes ``sens = p PPV / (p PPV + (1 - p) FOR)``). Not judged is an outcome in both
    denominators, so the target's not-judged rows stay in the estimand:
    ``theta = (t - b) / (a - b)`` with ``t`` the judge pass share over *every* target row
    (Rogan & Gladen 1978; Lee et al. 2025 with verdict-stratified calibration). Delta-method
    interval from Agresti-Caffo-smoothed ``r_j``, multinomial ``W`` and adjusted ``t`` (Lee's
    smoothing). A not-judged calibration stratum without labels is not identified: the interval
    is the union over its pass rate at 0 and 1.

    Guards (as :func:`lee_pass_rate`): refuses without human-pass or human-fail labels, with an
    unlabelled judge-pass/judge-fail stratum, when ``a - b <= 0`` or when the interval lies
    outside [0, 1]; flags ``uninformative`` ([0, 1]) when the lower bound of ``a - b`` is <= 0.

    Args:
        human: Human verdicts on the labelled calibration rows.
        judge_labelled: Judge verdicts on the same rows.
        judge_calibration: Judge verdicts on every row of the calibration set.
        judge_target: Judge verdicts on every row of the target run.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="lee_stratified"``;
        ``params`` holds ``sensitivity``, ``fpr``, ``youden`` and the strata.
    """
    conf = check_confidence(confidence)
    counts = stratum_counts(human, judge_labelled, judge_calibration)
    target = np.bincount(verdict_strata(judge_target), minlength=3)
    return _transport(counts, (int(target[0]), int(target[1]), int(target[2])), conf)


def transported_pass_rate_from_counts(
    counts: StratumCounts,
    target: tuple[int, int, int],
    *,
    confidence: float = 0.95,
    design_effect: float = 1.0,
) -> PassRateEstimate:
    """:func:`transported_pass_rate` from counts.

    Args:
        counts: Per-stratum counts of the calibration set (population = every calibration row
            the judge ran on); any number of strata, each with its judge outcome.
        target: Target rows per judge outcome (judge pass, judge fail, not judged).
        confidence: Two-sided confidence level.
        design_effect: Factor (>= 1) on the variance of the within-stratum rates, for
            calibration rows that cluster by source document (Kish 1965).

    Returns:
        A :class:`~judges.calibration.PassRateEstimate`.
    """
    if len(target) != 3 or min(target) < 0:
        raise CalibrationInputError(f"target must be three non-negative counts, got {target}")
    if not design_effect >= 1.0:
        raise CalibrationInputError(f"design_effect must be >= 1, got {design_effect}")
    return _transport(counts, target, check_confidence(confidence), design_effect)


@dataclass(frozen=True)
class TransferredRates:
    """The judge's error rates a separate-calibration correction transfers.

    Attributes:
        a: ``P(judge pass | human pass)`` (raw within-stratum rates).
        b: ``P(judge pass | human fail)`` (raw).
        a_smoothed: ``a`` from the Agresti-Caffo-smoothed rates (the interval's centre).
        b_smoothed: ``b`` likewise.
        cov: 2 x 2 delta-method covariance of ``(a, b)`` at the smoothed rates.
    """

    a: float
    b: float
    a_smoothed: float
    b_smoothed: float
    cov: npt.NDArray[np.float64]


def error_rates(counts: StratumCounts) -> TransferredRates | None:
    """The judge's ``P(pass | human pass)`` and ``P(pass | human fail)`` with their covariance.

    The same verdict-reweighted rates :func:`transported_pass_rate_from_counts` corrects with
    (Agresti-Caffo-smoothed within-stratum rates, delta method), for estimators that combine
    them otherwise (the paired difference of two versions).

    Args:
        counts: Per-stratum counts of the calibration set.

    Returns:
        The rates, or ``None`` when a stratum with rows has no labels or a human class is
        missing.
    """
    big_n = np.asarray(counts.population, dtype=float)
    m = np.asarray(counts.labelled, dtype=float)
    k = np.asarray(counts.human_pass, dtype=float)
    if big_n.sum() == 0 or k.sum() == 0 or (m - k).sum() == 0 or np.any((big_n > 0) & (m == 0)):
        return None
    model = _Model(counts, (1, 0, 0), 1.96)
    x_s, cov = model.smoothed, model.cov
    a, b = model.ab(x_s)
    grads = []
    for index in (0, 1):
        g = np.zeros_like(x_s)
        for i in range(x_s.size):
            step = np.zeros_like(x_s)
            step[i] = 1e-6
            g[i] = (model.ab(x_s + step)[index] - model.ab(x_s - step)[index]) / 2e-6
        grads.append(g)
    jac = np.stack(grads)
    a_raw, b_raw = model.ab(model.raw)
    return TransferredRates(a_raw, b_raw, a, b, jac @ cov @ jac.T)


class _Model:
    """The transport model's parameters ``x = (r_1..r_K, W_1..W_{K-1}, t)`` and their covariance.

    ``r_s`` is the human pass share of stratum ``s``, ``W_s`` its share of the calibration rows,
    ``t`` the judge's pass share of the target rows.
    """

    def __init__(
        self, counts: StratumCounts, target: tuple[int, int, int], z: float, deff: float = 1.0
    ) -> None:
        self.k = counts.k
        self.passes = np.asarray(counts.outcomes) == OUTCOME_PASS
        big_n = np.asarray(counts.population, dtype=float)
        m = np.asarray(counts.labelled, dtype=float)
        h = np.asarray(counts.human_pass, dtype=float)
        n_t = float(sum(target))
        w = big_n / big_n.sum()
        t_hat = target[0] / n_t if n_t else 0.0
        t_s = (target[0] + z * z / 2.0) / (n_t + z * z)
        r_hat = h / np.maximum(m, 1.0)
        r_s = (h + 1.0) / (m + 2.0)
        kk = self.k
        size = 2 * kk
        cov = np.zeros((size, size))
        cov[:kk, :kk] = np.diag(deff * r_s * (1.0 - r_s) / (m + 2.0))
        cov[kk : 2 * kk - 1, kk : 2 * kk - 1] = _multinomial_cov(w, big_n.sum())[: kk - 1, : kk - 1]
        cov[-1, -1] = t_s * (1.0 - t_s) / (n_t + z * z)
        self.raw = np.concatenate([r_hat, w[:-1], [t_hat]])
        self.smoothed = np.concatenate([r_s, w[:-1], [t_s]])
        self.cov = cov

    def ab(self, x: npt.NDArray[np.float64]) -> tuple[float, float]:
        kk = self.k
        r = x[:kk]
        w = np.append(x[kk : 2 * kk - 1], 1.0 - x[kk : 2 * kk - 1].sum())
        den1, den0 = float((w * r).sum()), float((w * (1.0 - r)).sum())
        a = float((w * r)[self.passes].sum()) / den1 if den1 > 0 else 0.0
        b = float((w * (1.0 - r))[self.passes].sum()) / den0 if den0 > 0 else 0.0
        return a, b

    def theta(self, x: npt.NDArray[np.float64]) -> float:
        a, b = self.ab(x)
        return (x[-1] - b) / (a - b) if a != b else math.nan

    def youden(self, x: npt.NDArray[np.float64]) -> float:
        a, b = self.ab(x)
        return a - b


def _ran_on(n_rows: int, n_not_judged: int) -> str:
    """The transported estimate's population: the target rows the judge ran on.

    Rows it never ran on are not among ``n_rows``, so this is not "all rows of the target run"
    (the answer's population sentence names both counts).
    """
    text = f"the true (human) pass rate of the {n_rows:,} target rows the judge ran on"
    if n_not_judged:
        text += f", including the {n_not_judged:,} it did not judge (unscored or unsure)"
    return text


def _transport(
    counts: StratumCounts, target: tuple[int, int, int], conf: float, deff: float = 1.0
) -> PassRateEstimate:
    method = "lee_stratified"
    z = z_value(conf)
    big_n = np.asarray(counts.population, dtype=float)
    m = np.asarray(counts.labelled, dtype=float)
    k = np.asarray(counts.human_pass, dtype=float)
    outcomes = np.asarray(counts.outcomes)
    n_t = float(sum(target))
    params: dict[str, Any] = {
        "strata": counts.by_name(),
        "target_strata": dict(zip(STRATA, target, strict=True)),
        "population": _ran_on(int(n_t), target[2]),
    }

    def refuse(reason: str) -> PassRateEstimate:
        return _refused(
            PassRateEstimate, reason, method=method, confidence=conf, n_labelled=int(m.sum()),
            n_target=int(n_t), assumption=ASSUMPTION_TRANSPORT, params=MappingProxyType(params),
        )  # fmt: skip

    if n_t == 0:
        return refuse("the target run has no rows")
    if np.any(m + np.asarray(counts.human_unsure) > big_n):
        return refuse(
            "more labelled calibration rows than calibration rows in a stratum: pass the judge "
            "verdicts on every row of the calibration set"
        )
    if k.sum() == 0 or (m - k).sum() == 0:
        which = "passing" if k.sum() == 0 else "failing"
        return refuse(f"no human-{which} labelled rows: label at least one failing and one "
                      "passing row")  # fmt: skip
    empty = [counts.names[s] for s in range(counts.k)
             if big_n[s] > 0 and m[s] == 0 and outcomes[s] != OUTCOME_NOT_JUDGED]
    if empty:
        return refuse(f"no labelled calibration rows in stratum {', '.join(empty)}: label some")
    # A judge outcome the calibration set never showed says nothing about the target rows that
    # have it: their pass rate is anywhere in [0, 1] (a bound), never borrowed from the others.
    seen = [bool(big_n[outcomes == o].sum() > 0) for o in range(3)]
    unseen_rows = sum(n for n, ok in zip(target, seen, strict=True) if not ok)
    if unseen_rows:
        names = [STRATA[o] for o in range(3) if not seen[o] and target[o]]
        if unseen_rows == n_t:
            return refuse(
                f"not identified: every target row is {' or '.join(names)}, a judge outcome the "
                "calibration set never showed, so nothing is known about their pass rate"
            )
        kept = tuple(n if ok else 0 for n, ok in zip(target, seen, strict=True))
        inner = _transport(counts, (kept[0], kept[1], kept[2]), conf, deff)
        if inner.refused:
            return inner
        share = unseen_rows / n_t
        assert inner.estimate is not None and inner.low is not None and inner.high is not None
        inner_params = dict(inner.params)
        inner_params.update(target_strata=dict(zip(STRATA, target, strict=True)),
                            unseen_share=share, identified=False,
                            population=_ran_on(int(n_t), target[2]))
        return dataclasses.replace(
            inner, estimate=(1 - share) * inner.estimate + share / 2.0,
            low=(1 - share) * inner.low, high=(1 - share) * inner.high + share,
            n_target=int(n_t), params=MappingProxyType(inner_params),
            warnings=(*inner.warnings, (
                f"not identified: {unseen_rows} target rows ({share:.0%}) are "
                f"{' or '.join(names)}, a judge outcome the calibration set never showed; "
                "the interval bounds their pass rate by [0, 1]")),
        )  # fmt: skip
    model = _Model(counts, target, z, deff)
    unlabelled = [s for s in range(counts.k) if big_n[s] > 0 and m[s] == 0]
    corners: list[tuple[float, ...]] = [()]
    for _ in unlabelled:
        corners = [(*c, v) for c in corners for v in (0.0, 1.0)]
    lows, highs, points, youdens = [], [], [], []
    for corner in corners:
        xh, xs, c = model.raw.copy(), model.smoothed.copy(), model.cov.copy()
        for s, value in zip(unlabelled, corner, strict=True):
            # an unlabelled not-judged stratum at an extreme pass rate
            xh[s] = xs[s] = value
            c[s, s] = 0.0
        j_hat = model.youden(xh)
        j_s, j_se = _delta(model.youden, xs, c)
        if j_hat <= 0.0 or j_s <= 0.0:
            return refuse(
                f"judge no better than chance on the calibration set: P(pass | human pass) - "
                f"P(pass | human fail) = {j_hat:.3f} <= 0, so the correction is undefined"
            )
        center, se = _delta(model.theta, xs, c)
        points.append(model.theta(xh))
        lows.append(center - z * se)
        highs.append(center + z * se)
        youdens.append((j_hat, j_s - z * j_se))
    raw_low, raw_high = min(lows), max(highs)
    a, b = model.ab(model.raw)
    t_hat = float(model.raw[-1])
    params.update(
        sensitivity=a, fpr=b, youden=youdens[0][0], youden_low=min(y for _, y in youdens),
        t=t_hat, identified=len(corners) == 1,
    )  # fmt: skip
    if raw_high < 0.0 or raw_low > 1.0:
        return refuse(
            f"the judge's pass share on the target ({t_hat:.3f}) lies outside [FPR {b:.3f}, "
            f"sensitivity {a:.3f}] of the calibration set beyond sampling noise: the error rates "
            "do not transfer"
        )
    warnings: list[str] = []
    if deff > 1.0:
        params["design_effect"] = deff
        warnings.append(
            f"calibration rows cluster by source document (design effect {deff:.2f}): the "
            "variance of the judge's error rates is inflated by it"
        )
    if len(corners) > 1:
        warnings.append(
            "not identified: no labelled calibration rows the judge did not judge; the interval "
            "is the union over every possible pass rate of those rows"
        )
    uninformative = params["youden_low"] <= 0.0
    if uninformative:
        warnings.append(
            f"uninformative: the judge's Youden index ({params['youden']:.3f}) has a lower "
            f"{conf:.0%} bound <= 0; interval widened to [0, 1]"
        )
    est = float(np.mean(points))
    unsure = counts.human_unsure
    if sum(unsure):
        # Human-unsure calibration rows counted as all pass / all fail: the estimate's range.
        hi_r = _transport(counts.resolved(as_pass=True), target, conf, deff)
        lo_r = _transport(counts.resolved(as_pass=False), target, conf, deff)
        if not (hi_r.refused or lo_r.refused):
            params["human_unsure_bounds"] = {
                "if_all_pass": hi_r.estimate, "if_all_fail": lo_r.estimate,
                "low": min(v for v in (lo_r.low, hi_r.low) if v is not None),
                "high": max(v for v in (lo_r.high, hi_r.high) if v is not None),
            }  # fmt: skip
            warnings.append(f"{sum(unsure)} labelled calibration rows human-unsure: left out "
                            "and bounded")  # fmt: skip
    return PassRateEstimate.clipped_to_unit(
        method, conf, est, (raw_low, raw_high), bounds=(0.0, 1.0) if uninformative else None,
        point_counts=True, warnings=warnings, params=params, n_labelled=int(m.sum()),
        n_target=int(n_t),
        center=float(np.mean([(lo + hi) / 2 for lo, hi in zip(lows, highs, strict=True)])),
        se=float((raw_high - raw_low) / (2 * z)), uninformative=uninformative,
        assumption=ASSUMPTION_TRANSPORT,
    )  # fmt: skip
