"""Verdict-stratified estimation: valid for any allocation of labels between judge-verdict strata.

The app's Label queue orders (random, stratified by judge verdict, flips first, ...) differ only
in how many labels each *judge-verdict stratum* receives. Conditioning on the judge's verdict
makes every estimator here valid for any such allocation, because within a stratum the rows are
still drawn at random and the stratum sizes come from the judge's verdicts on the whole dataset.

Strata (:data:`~judges.calibration.vocabulary.STRATA`): judge pass, judge fail, and not judged
(unscored or unsure). The estimand is the whole run: rows the judge did not judge are a stratum,
never silently dropped.

* :func:`stratified_run_pass_rate` — same run: ``theta = sum_s W_s r_s`` with ``W_s = N_s / N``
  from the judge's verdicts on every row and ``r_s`` the human pass share among labelled rows of
  stratum ``s``; per-stratum variances with a finite-population correction; a stratum without
  labels gives explicit bounds (its pass rate anywhere in [0, 1]); with document ids, a
  cluster-robust variance (t on G-1 df) when the design effect is material.
* :func:`population_rates` — sensitivity, specificity, FPR and kappa of the *population* of
  judged rows, reweighted from within-stratum rates (not the raw sample rates, which are biased
  toward an over-sampled stratum).
* :func:`transported_pass_rate` — a separate calibration set (Lee et al. 2025) whose labels may
  have been drawn by verdict: sensitivity/specificity from within-stratum rates reweighted by the
  calibration set's own verdict distribution (``sens = p PPV / (p PPV + (1-p) FOR)``), with the
  not-judged outcome as a third judge outcome; delta-method interval; then the Rogan-Gladen
  correction of the target, whose estimand includes its not-judged rows.

References:
    Cochran, W. G. (1977). Sampling Techniques, 3rd ed., ch. 5 (stratified random sampling) and
    5A.9 (post-stratification).
    Lee, C., Zeng, T., Jeong, J., Sohn, J. & Lee, K. (2025). How to correctly report
    LLM-as-a-judge evaluations. arXiv:2511.21140.
    Rogan, W. J. & Gladen, B. (1978). Am. J. Epidemiology 107(1), 71-76.
    Agresti, A. & Caffo, B. (2000). Am. Stat. 54, 280-288 (the +1/+2 smoothing).
    Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to cluster-robust inference.
    J. Human Resources 50(2), 317-372 (CR1 variance, t on G-1 degrees of freedom).
    Kish, L. (1965). Survey Sampling (design effect).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import t as student_t

from ._results import CalibrationInputError, Estimate, PassRateEstimate, _ToDict
from ._verdicts import FAIL, PASS, normalize_verdicts
from .rates import check_confidence, z_value
from .resampling import group_codes
from .vocabulary import STRATA, population_statement

__all__ = [
    "DESIGN_EFFECT_THRESHOLD",
    "PopulationRates",
    "StratumCounts",
    "population_rates",
    "stratified_run_pass_rate",
    "stratum_counts",
    "transported_pass_rate",
    "verdict_strata",
]

#: A design effect above this makes the cluster-robust variance the headline (Kish 1965:
#: 10 % more variance than the row-level formula assumes is already a visible under-coverage).
DESIGN_EFFECT_THRESHOLD = 1.1

ASSUMPTION_RUN = (
    "the labelled rows are rows of this run, drawn at random within each judge-verdict stratum "
    "(judge pass / judge fail / not judged) in any proportions; stratum sizes come from the "
    "judge's verdicts on every row of the run"
)
ASSUMPTION_TRANSPORT = (
    "the judge's error rates (including how often it does not judge) transfer from the "
    "calibration set to the target run (the pass rate itself may differ); calibration labels "
    "drawn at random within each judge-verdict stratum of the calibration set, in any proportions"
)


def verdict_strata(judge: npt.ArrayLike | Sequence[Any]) -> npt.NDArray[np.int8]:
    """Map judge verdicts to stratum codes: 0 = judge pass, 1 = judge fail, 2 = not judged.

    Args:
        judge: Judge verdicts (strings, 1/0/bool or codes; see ``normalize_verdicts``).

    Returns:
        An ``int8`` array of stratum codes (names in
        :data:`~judges.calibration.vocabulary.STRATA`).

    Examples:
        >>> verdict_strata(["pass", "fail", "unsure", "unscored"]).tolist()
        [0, 1, 2, 2]
    """
    c = normalize_verdicts(judge)
    return _strata_from_codes(c)


def _strata_from_codes(c: npt.NDArray[np.int8]) -> npt.NDArray[np.int8]:
    return np.where(c == PASS, 0, np.where(c == FAIL, 1, 2)).astype(np.int8)


@dataclass(frozen=True)
class StratumCounts(_ToDict):
    """Per-stratum counts (index 0 = judge pass, 1 = judge fail, 2 = not judged).

    Attributes:
        population: Rows of the dataset in each stratum (the judge's verdicts on every row).
        labelled: Labelled rows with a human pass/fail verdict in each stratum.
        human_pass: Of those, rows the human passed.
        human_unsure: Labelled rows whose human verdict is unsure/unscored.
    """

    population: tuple[int, int, int]
    labelled: tuple[int, int, int]
    human_pass: tuple[int, int, int]
    human_unsure: tuple[int, int, int]

    def __post_init__(self) -> None:
        """Validate the counts."""
        for name in ("population", "labelled", "human_pass", "human_unsure"):
            v = getattr(self, name)
            if len(v) != 3 or min(v) < 0:
                raise CalibrationInputError(f"{name} must be three non-negative counts, got {v}")
        if any(k > m for k, m in zip(self.human_pass, self.labelled, strict=True)):
            raise CalibrationInputError("human_pass cannot exceed labelled in a stratum")

    def by_name(self) -> dict[str, dict[str, int]]:
        """Counts keyed by stratum name."""
        return {
            name: {
                "population": self.population[s],
                "labelled": self.labelled[s],
                "human_pass": self.human_pass[s],
                "human_unsure": self.human_unsure[s],
            }
            for s, name in enumerate(STRATA)
        }


def stratum_counts(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_population: npt.ArrayLike | Sequence[Any],
) -> StratumCounts:
    """Count labelled rows and population rows per judge-verdict stratum.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same rows (define each row's stratum).
        judge_population: Judge verdicts on every row of the dataset the labels were drawn from
            (labelled rows included).

    Returns:
        A :class:`StratumCounts`.
    """
    h = normalize_verdicts(human)
    sl = verdict_strata(judge_labelled)
    if h.shape != sl.shape:
        raise CalibrationInputError(
            f"human and judge_labelled must be aligned: {h.shape[0]} vs {sl.shape[0]} rows"
        )
    sp = verdict_strata(judge_population)
    return _counts(h, sl, sp)


def _counts(
    h: npt.NDArray[np.int8], sl: npt.NDArray[np.int8], sp: npt.NDArray[np.int8]
) -> StratumCounts:
    decided = h >= 0

    def count(mask: npt.NDArray[np.bool_]) -> tuple[int, int, int]:
        c = np.bincount(sl[mask], minlength=3)
        return int(c[0]), int(c[1]), int(c[2])

    pop = np.bincount(sp, minlength=3)
    return StratumCounts(
        population=(int(pop[0]), int(pop[1]), int(pop[2])),
        labelled=count(decided),
        human_pass=count(decided & (h == PASS)),
        human_unsure=count(~decided),
    )


# --------------------------------------------------------------------------- same run


@dataclass(frozen=True)
class _Core:
    estimate: float
    center: float
    var: float
    unknown_weight: float  # population share of strata with rows but no labels


def _run_core(
    big_n: npt.NDArray[np.float64], m: npt.NDArray[np.float64], k: npt.NDArray[np.float64]
) -> _Core:
    w = big_n / big_n.sum()
    has = m > 0
    r = np.divide(k, m, out=np.zeros(3), where=has)
    # Finite-population correction: the run is the estimand, so a fully labelled stratum is
    # known exactly. The Agresti-Caffo shrinkage of the centre fades with it.
    keep = np.clip(1.0 - np.divide(m, big_n, out=np.ones(3), where=big_n > 0), 0.0, 1.0)
    r_s = (k + 1.0) / (m + 2.0)
    r_c = r + keep * (r_s - r)
    known = has | (big_n == 0)
    est = float((w * r)[known].sum())
    center = float((w * r_c)[known].sum())
    var = float((w**2 * r_s * (1.0 - r_s) / (m + 2.0) * keep)[has].sum())
    return _Core(est, center, var, float(w[~known].sum()))


def _cluster_design_effect(
    h: npt.NDArray[np.int8],
    sl: npt.NDArray[np.int8],
    docs: npt.NDArray[np.int64],
    counts: StratumCounts,
) -> tuple[float, int]:
    """Design effect (CR1 cluster-robust variance / row-level variance) and the cluster count."""
    big_n = np.asarray(counts.population, dtype=float)
    m = np.asarray(counts.labelled, dtype=float)
    k = np.asarray(counts.human_pass, dtype=float)
    w = big_n / big_n.sum()
    decided = h >= 0
    y = (h[decided] == PASS).astype(float)
    s = sl[decided]
    d = docs[decided]
    r = np.divide(k, m, out=np.zeros(3), where=m > 0)
    u = w[s] * (y - r[s]) / np.maximum(m[s], 1.0)
    _, g_codes = np.unique(d, return_inverse=True)
    n_groups = int(g_codes.max()) + 1 if g_codes.size else 0
    if n_groups < 2:
        return 1.0, n_groups
    per_group = np.bincount(g_codes, weights=u, minlength=n_groups)
    v_cluster = n_groups / (n_groups - 1.0) * float((per_group**2).sum())
    resid2 = np.bincount(s, weights=(y - r[s]) ** 2, minlength=3)
    denom = m * (m - 1.0)
    v_row = float(np.divide(w**2 * resid2, denom, out=np.zeros(3), where=denom > 0).sum())
    if v_row <= 0.0:
        return (1.0 if v_cluster <= 0.0 else math.inf), n_groups
    return v_cluster / v_row, n_groups


def stratified_run_pass_rate(
    human: npt.ArrayLike | Sequence[Any],
    judge_labelled: npt.ArrayLike | Sequence[Any],
    judge_population: npt.ArrayLike | Sequence[Any],
    *,
    doc_ids: npt.ArrayLike | Sequence[Any] | None = None,
    confidence: float = 0.95,
    design_effect_threshold: float = DESIGN_EFFECT_THRESHOLD,
) -> PassRateEstimate:
    """True pass rate of the whole run, estimated within judge-verdict strata.

    ``theta = sum_s W_s r_s`` over strata judge pass / judge fail / not judged, with
    ``W_s = N_s / N`` from the judge's verdicts on every row and ``r_s`` the human pass share of
    the labelled rows in stratum ``s``. Valid for any allocation of labels between strata
    (random, by verdict, flips first): only within-stratum randomness is assumed. Variance
    ``sum_s W_s^2 r~_s (1 - r~_s) / (m_s + 2) (1 - m_s / N_s)`` with Agresti-Caffo smoothing
    ``r~ = (k + 1) / (m + 2)`` and a finite-population correction (a fully labelled run gives
    its exact pass rate with zero width). A stratum with rows but no labels is not identified:
    the interval becomes explicit bounds (its pass rate anywhere in [0, 1]).

    With ``doc_ids``, the CR1 cluster-robust variance of the linearised estimator is compared
    with the row-level one; when the design effect exceeds ``design_effect_threshold``, the
    headline interval uses the row-level variance times the design effect with a Student t
    quantile on ``G - 1`` degrees of freedom (Cameron & Miller 2015).

    Human-unsure labelled rows are left out of ``r_s`` (assumed like the other labelled rows of
    their stratum) and bounded: ``params["human_unsure_bounds"]`` gives the interval union if
    they were all pass or all fail.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the labelled rows.
        judge_population: Judge verdicts on every row of the run (labelled rows included).
        doc_ids: Source-document id per labelled row (optional).
        confidence: Two-sided confidence level.
        design_effect_threshold: Design effect above which the clustered interval is used.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="verdict_stratified"``;
        ``params`` holds the strata, the design effect and the population statement.

    Examples:
        >>> judge = ["pass"] * 60 + ["fail"] * 40
        >>> r = stratified_run_pass_rate(["pass"] * 9 + ["fail"] + ["pass"] * 2 + ["fail"] * 8,
        ...                              ["pass"] * 10 + ["fail"] * 10, judge)
        >>> round(r.estimate, 3)
        0.62
    """
    conf = check_confidence(confidence)
    h = normalize_verdicts(human)
    sl = verdict_strata(judge_labelled)
    if h.shape != sl.shape:
        raise CalibrationInputError(
            f"human and judge_labelled must be aligned: {h.shape[0]} vs {sl.shape[0]} rows"
        )
    sp = verdict_strata(judge_population)
    counts = _counts(h, sl, sp)
    docs = None
    if doc_ids is not None:
        docs, _ = group_codes(np.asarray(doc_ids))
        if docs.shape[0] != h.shape[0]:
            raise CalibrationInputError("doc_ids must have one entry per labelled row")
    return _run_estimate(counts, conf, h=h, sl=sl, docs=docs, threshold=design_effect_threshold)


def _run_estimate(
    counts: StratumCounts,
    conf: float,
    *,
    h: npt.NDArray[np.int8] | None = None,
    sl: npt.NDArray[np.int8] | None = None,
    docs: npt.NDArray[np.int64] | None = None,
    threshold: float = DESIGN_EFFECT_THRESHOLD,
) -> PassRateEstimate:
    method = "verdict_stratified"
    big_n = np.asarray(counts.population, dtype=float)
    m = np.asarray(counts.labelled, dtype=float)
    k = np.asarray(counts.human_pass, dtype=float)
    u = np.asarray(counts.human_unsure, dtype=float)
    n_rows = int(big_n.sum())
    params: dict[str, Any] = {
        "strata": counts.by_name(),
        "population": population_statement(n_rows, counts.population[2]),
    }

    def refuse(reason: str) -> PassRateEstimate:
        return PassRateEstimate(
            estimate=None, low=None, high=None, method=method, confidence=conf,
            n_labelled=int(m.sum()), n_target=n_rows, refused=True, reason=reason,
            assumption=ASSUMPTION_RUN, params=MappingProxyType(params),
        )  # fmt: skip

    if n_rows == 0:
        return refuse("the run has no rows")
    if np.any(m + u > big_n):
        over = [STRATA[s] for s in range(3) if m[s] + u[s] > big_n[s]]
        return refuse(
            f"more labelled rows than rows in stratum {', '.join(over)}: the labelled rows are "
            "not rows of this run (labels from another run need a separate-calibration design)"
        )
    if m.sum() == 0:
        return refuse("no labelled rows with a human pass/fail verdict")
    core = _run_core(big_n, m, k)
    se = math.sqrt(core.var)
    quantile, warnings = z_value(conf), []
    deff, n_groups = 1.0, 0
    if docs is not None and h is not None and sl is not None:
        deff, n_groups = _cluster_design_effect(h, sl, docs, counts)
        params.update(design_effect=deff, n_documents=n_groups)
        if deff > threshold and n_groups >= 2:
            se *= math.sqrt(deff)
            quantile = float(student_t.ppf(0.5 + conf / 2.0, n_groups - 1))
            method = "verdict_stratified_clustered"
            warnings.append(
                f"labelled rows cluster by document (design effect {deff:.2f} over "
                f"{n_groups} documents): cluster-robust interval, t on {n_groups - 1} df"
            )
        elif deff > threshold:
            warnings.append("labelled rows come from a single document: cannot assess clustering")
    low = core.center - quantile * se
    high = core.center + quantile * se + core.unknown_weight
    identified = core.unknown_weight == 0.0
    if not identified:
        missing = [STRATA[s] for s in range(3) if big_n[s] > 0 and m[s] == 0]
        warnings.append(
            f"not identified: no labelled rows in stratum {', '.join(missing)} "
            f"({core.unknown_weight:.1%} of the run); the interval is a bound over every "
            "possible pass rate of those rows"
        )
    if u.sum():
        all_pass = _run_core(big_n, m + u, k + u)
        all_fail = _run_core(big_n, m + u, k)
        params["human_unsure_bounds"] = {
            "if_all_pass": all_pass.estimate,
            "if_all_fail": all_fail.estimate,
            "low": max(0.0, all_fail.center - quantile * math.sqrt(all_fail.var)),
            "high": min(
                1.0, all_pass.center + quantile * math.sqrt(all_pass.var) + all_pass.unknown_weight
            ),
        }
        warnings.append(
            f"{int(u.sum())} labelled rows human-unsure: left out; if they were all pass/all fail "
            f"the estimate would be {all_pass.estimate:.3f}/{all_fail.estimate:.3f}"
        )
    c_low, c_high = min(1.0, max(0.0, low)), min(1.0, max(0.0, high))
    estimate = core.estimate if identified else core.estimate + core.unknown_weight / 2.0
    return PassRateEstimate(
        estimate=min(1.0, max(0.0, estimate)),
        low=c_low,
        high=c_high,
        method=method,
        confidence=conf,
        n_labelled=int(m.sum()),
        n_target=n_rows,
        center=core.center,
        se=se,
        clipped=c_low != low or c_high != high,
        assumption=ASSUMPTION_RUN,
        warnings=tuple(warnings),
        params=MappingProxyType({**params, "identified": identified}),
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
    keep = np.clip(1.0 - m / np.maximum(big_n, 1.0), 0.0, 1.0)
    cov = np.diag([*(r_s * (1.0 - r_s) / (m + 2.0) * keep), w * (1.0 - w) / n_judged])

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
        lo, hi = _logit_interval(fun(x_s), se, z)
        out[name] = Estimate(value, lo, hi, n_lab, method, conf, se=se)
        if name == "specificity":  # FPR = 1 - specificity, bounds swapped
            out["fpr"] = Estimate(1.0 - value, 1.0 - hi, 1.0 - lo, n_lab, method, conf, se=se)
    sp = out["specificity"]
    kv = kappa(x_hat)
    kc, kse = _delta(kappa, x_s, cov)
    out["kappa"] = Estimate(
        kv, max(-1.0, kc - z * kse), min(1.0, kc + z * kse), n_lab, method, conf, se=kse
    )
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
        return PassRateEstimate(
            estimate=None, low=None, high=None, method=method, confidence=conf,
            n_labelled=int(m.sum()), n_target=int(n_t), refused=True, reason=reason,
            assumption=ASSUMPTION_TRANSPORT, params=MappingProxyType(params),
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
    low, high = min(1.0, max(0.0, raw_low)), min(1.0, max(0.0, raw_high))
    uninformative = params["youden_low"] <= 0.0
    if uninformative:
        warnings.append(
            f"uninformative: the judge's Youden index ({params['youden']:.3f}) has a lower "
            f"{conf:.0%} bound <= 0; interval widened to [0, 1]"
        )
        low, high = 0.0, 1.0
    est = float(np.mean(points))
    return PassRateEstimate(
        estimate=min(1.0, max(0.0, est)),
        low=low,
        high=high,
        method=method,
        confidence=conf,
        n_labelled=int(m.sum()),
        n_target=int(n_t),
        center=float(np.mean([(lo + hi) / 2 for lo, hi in zip(lows, highs, strict=True)])),
        se=float((raw_high - raw_low) / (2 * z)),
        clipped=low != raw_low or high != raw_high or not 0.0 <= est <= 1.0,
        uninformative=uninformative,
        assumption=ASSUMPTION_TRANSPORT,
        warnings=tuple(warnings),
        params=MappingProxyType(params),
    )
