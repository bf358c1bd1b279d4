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

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, Estimate, PassRateEstimate, _refused, _ToDict
from .rates import check_confidence, z_value
from .strata import StratumCounts, stratum_counts, verdict_strata
from .vocabulary import STRATA, population_statement

__all__ = [
    "PopulationRates",
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
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_population: npt.ArrayLike | Sequence[Any],
    *,
    confidence: float = 0.95,
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
    big_n = np.asarray(counts.population[:2], dtype=float)
    m = np.asarray(counts.labelled[:2], dtype=float)
    k = np.asarray(counts.human_pass[:2], dtype=float)
    n_judged = float(big_n.sum())
    total = n_judged + counts.population[2]
    nj_share = counts.population[2] / total if total else 0.0
    n_lab = int(m.sum())
    method = "verdict-reweighted-delta"

    def refused(reason: str) -> Estimate:
        return Estimate.refusal(reason, n=n_lab, method=method, confidence=conf)

    reason = None
    if n_judged == 0:
        reason = "the judge judged no rows"
    elif any(big_n[s] > 0 and m[s] == 0 for s in range(2)):
        empty = [STRATA[s] for s in range(2) if big_n[s] > 0 and m[s] == 0]
        reason = f"no labelled rows in stratum {', '.join(empty)}: label some of them"
    elif k.sum() == 0 or (m - k).sum() == 0:
        which = "passing" if k.sum() == 0 else "failing"
        reason = f"no human-{which} labelled rows: label at least one failing and one passing row"
    if reason is not None:
        r = refused(reason)
        return PopulationRates(r, r, r, r, nj_share, method)
    w = big_n[0] / n_judged
    r_s = (k + 1.0) / (m + 2.0)
    r_hat = k / np.maximum(m, 1.0)
    # Error rates describe the judge (they are transferred to other runs), so their estimand is
    # the population the rows come from: no finite-population correction, unlike the run's
    # pass rate (a fully labelled dataset still leaves the judge's sensitivity uncertain).
    cov = np.diag([*(r_s * (1.0 - r_s) / (m + 2.0)), w * (1.0 - w) / n_judged])

    def cells(x: npt.NDArray[np.float64]) -> tuple[float, float, float, float]:
        ppv, fomr, ww = x
        return ww * ppv, (1 - ww) * fomr, ww * (1 - ppv), (1 - ww) * (1 - fomr)  # tp fn fp tn

    def sens(x: npt.NDArray[np.float64]) -> float:
        tp, fn, _, _ = cells(x)
        return tp / (tp + fn)

    def spec(x: npt.NDArray[np.float64]) -> float:
        _, _, fp, tn = cells(x)
        return tn / (tn + fp)

    def kappa(x: npt.NDArray[np.float64]) -> float:
        tp, fn, fp, tn = cells(x)
        pe = (tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)
        return (tp + tn - pe) / (1.0 - pe) if pe < 1.0 else 0.0

    x_hat = np.array([r_hat[0], r_hat[1], w])
    x_s = np.array([r_s[0], r_s[1], w])
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
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_calibration: npt.ArrayLike | Sequence[Any],
    judge_target: npt.ArrayLike | Sequence[Any],
    *,
    confidence: float = 0.95,
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
    counts: StratumCounts, target: tuple[int, int, int], *, confidence: float = 0.95
) -> PassRateEstimate:
    """:func:`transported_pass_rate` from counts.

    Args:
        counts: Per-stratum counts of the calibration set (population = every calibration row).
        target: Target rows per stratum (judge pass, judge fail, not judged).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate`.
    """
    if len(target) != 3 or min(target) < 0:
        raise CalibrationInputError(f"target must be three non-negative counts, got {target}")
    return _transport(counts, target, check_confidence(confidence))


def _ab(x: npt.NDArray[np.float64]) -> tuple[float, float]:
    r, w = x[0:3], np.array([x[3], x[4], 1.0 - x[3] - x[4]])
    den1, den0 = float((w * r).sum()), float((w * (1.0 - r)).sum())
    a = w[0] * r[0] / den1 if den1 > 0 else 0.0
    b = w[0] * (1.0 - r[0]) / den0 if den0 > 0 else 0.0
    return a, b


def _theta(x: npt.NDArray[np.float64]) -> float:
    a, b = _ab(x)
    return (x[5] - b) / (a - b) if a != b else math.nan


def _youden(x: npt.NDArray[np.float64]) -> float:
    a, b = _ab(x)
    return a - b


def _transport(
    counts: StratumCounts, target: tuple[int, int, int], conf: float
) -> PassRateEstimate:
    method = "lee_stratified"
    z = z_value(conf)
    big_n = np.asarray(counts.population, dtype=float)
    m = np.asarray(counts.labelled, dtype=float)
    k = np.asarray(counts.human_pass, dtype=float)
    n_t = float(sum(target))
    params: dict[str, Any] = {
        "strata": counts.by_name(),
        "target_strata": dict(zip(STRATA, target, strict=True)),
        "population": population_statement(int(n_t), target[2]),
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
    empty = [STRATA[s] for s in range(2) if big_n[s] > 0 and m[s] == 0]
    if empty:
        return refuse(f"no labelled calibration rows in stratum {', '.join(empty)}: label some")
    w = big_n / big_n.sum()
    t_hat = target[0] / n_t
    t_s = (target[0] + z * z / 2.0) / (n_t + z * z)
    r_hat = k / np.maximum(m, 1.0)
    r_s = (k + 1.0) / (m + 2.0)
    cov = np.zeros((6, 6))
    cov[0:3, 0:3] = np.diag(r_s * (1.0 - r_s) / (m + 2.0))
    cov[3:5, 3:5] = _multinomial_cov(w, big_n.sum())[0:2, 0:2]
    cov[5, 5] = t_s * (1.0 - t_s) / (n_t + z * z)
    corners = [None] if (m[2] > 0 or big_n[2] == 0) else [0.0, 1.0]
    lows, highs, points, youdens = [], [], [], []
    for corner in corners:
        xh = np.array([*r_hat, w[0], w[1], t_hat])
        xs = np.array([*r_s, w[0], w[1], t_s])
        c = cov.copy()
        if corner is not None:  # the unlabelled not-judged stratum at an extreme pass rate
            xh[2] = xs[2] = corner
            c[2, 2] = 0.0
        j_hat = _youden(xh)
        j_s, j_se = _delta(_youden, xs, c)
        if j_hat <= 0.0 or j_s <= 0.0:
            return refuse(
                f"judge no better than chance on the calibration set: P(pass | human pass) - "
                f"P(pass | human fail) = {j_hat:.3f} <= 0, so the correction is undefined"
            )
        center, se = _delta(_theta, xs, c)
        points.append(_theta(xh))
        lows.append(center - z * se)
        highs.append(center + z * se)
        youdens.append((j_hat, j_s - z * j_se))
    raw_low, raw_high = min(lows), max(highs)
    a, b = _ab(np.array([*r_hat, w[0], w[1], t_hat]))
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
        def resolved(as_pass: bool) -> PassRateEstimate:
            lab = [a + b for a, b in zip(counts.labelled, unsure, strict=True)]
            passed = list(counts.human_pass)
            if as_pass:
                passed = [a + b for a, b in zip(passed, unsure, strict=True)]
            return _transport(
                StratumCounts(counts.population, (lab[0], lab[1], lab[2]),
                              (passed[0], passed[1], passed[2]), (0, 0, 0)),
                target,
                conf,
            )  # fmt: skip

        hi_r, lo_r = resolved(True), resolved(False)
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
