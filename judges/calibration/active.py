"""Active labelling: serve uncertain rows more often, then reweight (valid inference).

Rows where the judge is uncertain (its verdicts flip across repeats or orders, judges disagree,
its verdict log-probability is near 0.5) are where it errs, so labels there reduce the variance
of the corrected pass rate most. Each row gets an inclusion probability tied to that
uncertainty, with a floor above zero so every row can be drawn, and the estimator weights each
labelled row by the inverse of its probability, which keeps it unbiased whatever the weights.

Estimator: the inverse-probability-weighted mean of Zrnic & Candes (2024, "Active Statistical
Inference") with the judge's verdict as the prediction, post-stratified on it: within each
judge-verdict stratum ``s`` (pass / fail / not judged, sizes ``N_s`` from every row of the run)
the Hajek mean ``R_s = sum_lab y / pi / sum_lab 1 / pi``, and ``theta = sum_s (N_s / N) R_s``.
Using the stratum means as the predictions removes the between-strata variation that a single
0/1 prediction leaves in the residuals (with a global residual, active sampling lost to random
sampling at pass rate 0.9 in ``bench/label_budget.py``), and the Hajek form makes only the
relative probabilities matter, so a labeller who stops early keeps a valid sample.
Variance from the linearisation per stratum in its with-replacement (Hansen-Hurwitz) form,
``W_s^2 sum_lab (y - R_s)^2 / pi^2 / (sum_lab 1/pi)^2`` (Sarndal, Swensson & Wretman 1992, 5.7
and 7.6; the finite-population factor ``1 - pi`` is left out on purpose: with it the interval
covered 0.927 in a 300-run seeded check, without it 0.94 or more), with one pseudo-pass and
one pseudo-fail row drawn at the labelled rows' mean inclusion probability (the Agresti-Caffo
idea) so a stratum whose labels all agree does not claim zero variance. The interval is centred
on the stratum means with those pseudo rows (Agresti-Caffo's centre: near a pass rate of 1 the
Hajek mean is skewed) and uses Student t on the Welch-Satterthwaite degrees of freedom over the
strata (each with its Kish effective size), at most ``n - 1``.

References:
    Zrnic, T. & Candes, E. J. (2024). Active statistical inference. ICML 2024, arXiv:2403.03208.
    Gligoric, K., Zrnic, T., Lee, C., Candes, E. & Jurafsky, D. (2025). Can unconfident LLM
    annotations be used for confident conclusions? NAACL 2025, arXiv:2408.15204.
    Sarndal, C.-E., Swensson, B. & Wretman, J. (1992). Model Assisted Survey Sampling.
    Ohlsson, E. (1998). Sequential Poisson sampling. J. Official Statistics 14(2), 149-162.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import t as student_t

from ._results import CalibrationInputError, PassRateEstimate, _refused
from ._verdicts import PASS, PerRow, normalize_verdicts
from .rates import check_confidence
from .vocabulary import STRATA, population_statement

__all__ = [
    "ACTIVE_FLOOR",
    "active_inclusion_probabilities",
    "active_pass_rate",
    "active_pass_rate_from_strata",
    "expected_active_saving",
    "judge_uncertainty",
]

#: Smallest relative selection weight (as the square root of an uncertainty): even a row the
#: judge is sure about keeps a non-zero chance, which the inverse weighting needs.
ACTIVE_FLOOR = 0.15

ASSUMPTION_ACTIVE = (
    "each labelled row was drawn from this run with the recorded inclusion probability (> 0 "
    "for every row; active labelling); rows are weighted by its inverse"
)


def judge_uncertainty(
    *,
    n_rows: int,
    flip_share: npt.ArrayLike | None = None,
    disagreement_share: npt.ArrayLike | None = None,
    pass_probability: npt.ArrayLike | None = None,
    not_judged: npt.ArrayLike | None = None,
) -> npt.NDArray[np.float64]:
    """Combine the judge's uncertainty signals into one score in [0, 1] per row.

    Each signal is mapped to [0, 1] (1 = as unsure as possible) and the score is the largest:

    * ``flip_share``: share of repeats/orders whose verdict differs from the row's majority
      (0 to 0.5), doubled;
    * ``disagreement_share``: share of other judges disagreeing with this judge (0 to 0.5 is
      the informative range), doubled and capped at 1;
    * ``pass_probability``: the judge's probability of "pass" from verdict log-probabilities,
      ``1 - |2p - 1|``;
    * ``not_judged``: rows without a usable verdict (unscored/unsure) score 1.

    Args:
        n_rows: Rows in the run.
        flip_share: Per-row flip share (``NaN`` = not measured).
        disagreement_share: Per-row disagreement share (``NaN`` = not measured).
        pass_probability: Per-row pass probability (``NaN`` = not available).
        not_judged: Per-row booleans.

    Returns:
        Float array of uncertainty scores; 0 where no signal is available.

    Examples:
        >>> judge_uncertainty(n_rows=3, flip_share=[0.0, 0.25, 0.5]).tolist()
        [0.0, 0.5, 1.0]
    """
    score = np.zeros(n_rows)

    def take(values: npt.ArrayLike | None, fn: Any) -> None:
        if values is None:
            return
        v = np.asarray(values, dtype=float)
        if v.shape != (n_rows,):
            raise CalibrationInputError(f"uncertainty signals need one value per row ({n_rows})")
        mapped = np.clip(fn(v), 0.0, 1.0)
        np.fmax(score, np.where(np.isnan(mapped), 0.0, mapped), out=score)

    take(flip_share, lambda v: 2.0 * v)
    take(disagreement_share, lambda v: 2.0 * v)
    take(pass_probability, lambda v: 1.0 - np.abs(2.0 * v - 1.0))
    take(not_judged, lambda v: v)
    return score


def active_inclusion_probabilities(
    uncertainty: npt.ArrayLike, *, budget: float, floor: float = ACTIVE_FLOOR
) -> npt.NDArray[np.float64]:
    """Inclusion probabilities proportional to ``max(sqrt(uncertainty), floor)``, summing to budget.

    The square root follows the variance-optimal rule ``pi ~ sqrt(E[(y - f)^2 | x])``
    (Zrnic & Candes 2024, Section 3) when the uncertainty score tracks the judge's error
    probability. Probabilities above 1 are capped and the remainder redistributed.

    Args:
        uncertainty: Scores in [0, 1] (see :func:`judge_uncertainty`).
        budget: Expected number of labelled rows (``0 < budget <= len(uncertainty)``).
        floor: Smallest relative weight (> 0).

    Returns:
        Probabilities in ``(0, 1]``.

    Examples:
        >>> active_inclusion_probabilities([0.0, 0.0, 1.0, 1.0], budget=2, floor=0.25).round(2)
        array([0.2, 0.2, 0.8, 0.8])
    """
    u = np.asarray(uncertainty, dtype=float)
    if u.ndim != 1 or u.size == 0:
        raise CalibrationInputError("uncertainty must be a non-empty 1-D array")
    if not 0.0 < floor <= 1.0:
        raise CalibrationInputError(f"floor must be in (0, 1], got {floor}")
    if not 0.0 < budget <= u.size:
        raise CalibrationInputError(f"budget must be in (0, {u.size}], got {budget}")
    g = np.maximum(np.sqrt(np.clip(np.nan_to_num(u), 0.0, 1.0)), floor)
    pi = np.zeros_like(g)
    capped = np.zeros(g.size, dtype=bool)
    for _ in range(g.size):
        rest = budget - capped.sum()
        pi[~capped] = rest * g[~capped] / g[~capped].sum()
        over = (pi > 1.0) & ~capped
        if not over.any():
            break
        capped |= over
        pi[capped] = 1.0
    out: npt.NDArray[np.float64] = np.minimum(pi, 1.0)
    return out


def expected_active_saving(uncertainty: npt.ArrayLike, *, floor: float = ACTIVE_FLOOR) -> float:
    """Share of labels the active order is expected to save against a random order.

    With selection weights ``g = max(sqrt(u), floor)`` and the design's own working model that a
    row's error variance is proportional to ``g^2`` (the judge errs where it is uncertain), the
    variance of the inverse-probability-weighted mean over that of a random sample of the same
    size is ``mean(g)^2 / mean(g^2)`` (Hansen-Hurwitz with ``pi ~ g``; Zrnic & Candes 2024,
    Section 3), so the saving in labels for the same interval is ``1 - mean(g)^2 / mean(g^2)``.
    It is an expectation under that model: ``bench/label_budget.py`` measured 26-30 % fewer
    labels where the judge's errors concentrate in the rows it flips on, and about 20 % *more*
    where its flips are unrelated to its errors.

    Args:
        uncertainty: Per-row uncertainty scores in [0, 1] (see :func:`judge_uncertainty`).
        floor: Smallest relative weight (as in :func:`active_inclusion_probabilities`).

    Returns:
        The expected saving in [0, 1); 0 when every row has the same weight.

    Examples:
        >>> round(expected_active_saving([0.0] * 85 + [1.0] * 15), 2)
        0.54
        >>> expected_active_saving([0.3, 0.3, 0.3])
        0.0
    """
    u = np.asarray(uncertainty, dtype=float)
    if u.ndim != 1 or u.size == 0:
        raise CalibrationInputError("uncertainty must be a non-empty 1-D array")
    g = np.maximum(np.sqrt(np.clip(np.nan_to_num(u), 0.0, 1.0)), floor)
    ratio = float(g.mean() ** 2 / (g**2).mean())
    return max(0.0, 1.0 - ratio) if not math.isclose(ratio, 1.0) else 0.0


def _stratum_parts(
    y: npt.NDArray[np.float64], p: npt.NDArray[np.float64]
) -> tuple[float, float, float]:
    """Hajek mean of one stratum, the interval's centre and its variance (before the weight).

    The variance adds one pseudo-pass and one pseudo-fail row weighted as a row drawn at the
    stratum's mean inclusion probability (Agresti-Caffo in weighted form), so a stratum whose
    labels all agree keeps a variance of the binomial order ``1/n^2`` instead of zero.
    """
    w = 1.0 / p
    total = float(w.sum())
    r = float((w * y).sum() / total)
    n = y.size
    # The pseudo rows weigh as a row drawn at the labelled rows' mean probability. The
    # arithmetic mean weight (the first version) is dominated by the rarely drawn rows the judge
    # is sure about and inflated the standard error by 15 % (coverage 0.99, active labelling
    # saving only 17 % of labels in bench/label_budget.py).
    w_bar = 1.0 / float(p.mean())
    ss = float((w**2 * (y - r) ** 2).sum()) * (n / (n - 1.0) if n > 1 else 1.0)
    pseudo = w_bar**2 * ((1.0 - r) ** 2 + r**2)
    # The interval is centred on the mean with the pseudo rows (Agresti-Caffo's centre): near
    # a pass rate of 0 or 1 the Hajek mean's sampling distribution is skewed and an interval
    # centred on it covered 0.936 at pass rate 0.9 with 100 labels (bench/coverage.py).
    centre = float(((w * y).sum() + w_bar) / (total + 2.0 * w_bar))
    return r, centre, (ss + pseudo) / (total + 2.0 * w_bar) ** 2


def _strata(codes: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
    return np.where(codes == PASS, 0, np.where(codes >= 0, 1, 2)).astype(np.int64)


def active_pass_rate(
    human: PerRow, judge_labelled: PerRow, inclusion_probability: npt.ArrayLike,
    judge_population: PerRow,
    *, confidence: float = 0.95,
) -> PassRateEstimate:
    """Inverse-probability-weighted pass rate of the whole run, post-stratified on the verdict.

    See the module docstring for the formula. Human-unsure rows are left out (assumed like the
    other labelled rows of their stratum) and bounded in ``params``; a stratum without labels
    gives explicit bounds.

    Args:
        human: Human verdicts on the labelled rows.
        judge_labelled: Judge verdicts on the same rows.
        inclusion_probability: Probability with which each labelled row was drawn, in (0, 1].
        judge_population: Judge verdicts on every row of the run (labelled rows included).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="active_ipw"``.

    Examples:
        >>> judge = ["pass"] * 80 + ["fail"] * 20
        >>> r = active_pass_rate(["pass", "fail", "fail", "pass"], ["pass", "pass", "fail", "fail"],
        ...                      [0.1, 0.1, 0.5, 0.5], judge)
        >>> round(r.estimate, 3)
        0.5
    """
    conf = check_confidence(confidence)
    h = normalize_verdicts(human)
    s_lab = _strata(normalize_verdicts(judge_labelled))
    pi = np.asarray(inclusion_probability, dtype=float)
    s_pop = _strata(normalize_verdicts(judge_population))
    big_n = np.bincount(s_pop, minlength=3)
    return active_pass_rate_from_strata(
        h, s_lab, pi, tuple(int(v) for v in big_n), confidence=conf,
    )  # fmt: skip


def active_pass_rate_from_strata(
    human: npt.NDArray[np.int8],
    strata_labelled: npt.NDArray[np.int64],
    inclusion_probability: npt.ArrayLike,
    population: Sequence[int],
    *,
    names: Sequence[str] = STRATA,
    not_judged: Sequence[bool] = (False, False, True),
    confidence: float = 0.95,
) -> PassRateEstimate:
    """:func:`active_pass_rate` over any strata: codes of the labelled rows and stratum sizes.

    Args:
        human: Human verdict codes of the labelled rows.
        strata_labelled: Stratum code (index into ``population``) of each labelled row.
        inclusion_probability: Probability with which each labelled row was drawn.
        population: Rows of the run in each stratum.
        names: Stratum names, for messages.
        not_judged: Whether each stratum holds rows the judge did not judge (the estimand
            statement counts them).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="active_ipw"``.
    """
    conf = check_confidence(confidence)
    h = np.asarray(human, dtype=np.int8)
    s_lab = np.asarray(strata_labelled, dtype=np.int64)
    pi = np.asarray(inclusion_probability, dtype=float)
    if not (h.shape == s_lab.shape == pi.shape):
        raise CalibrationInputError(
            "human, judge_labelled and inclusion_probability must be aligned: "
            f"{h.shape[0]}, {s_lab.shape[0]}, {pi.shape[0]} rows"
        )
    if pi.size and (not np.all(np.isfinite(pi)) or pi.min() <= 0.0 or pi.max() > 1.0):
        raise CalibrationInputError("inclusion probabilities must be in (0, 1]")
    n_strata = len(population)
    big_n = np.asarray(population, dtype=float)
    n_rows = int(big_n.sum())
    decided = h >= 0
    n = int(decided.sum())
    params: dict[str, Any] = {
        "population": population_statement(
            n_rows, int(sum(v for v, nj in zip(population, not_judged, strict=True) if nj))),
        "strata": {name: int(v) for name, v in zip(names, big_n, strict=True)},
    }
    method = "active_ipw"
    if n_rows == 0 or n < 2:
        return _refused(
            PassRateEstimate,
            "the run has no rows" if n_rows == 0 else "fewer than 2 labelled rows",
            method=method, confidence=conf, n_labelled=n, n_target=n_rows,
            assumption=ASSUMPTION_ACTIVE, params=MappingProxyType(params),
        )  # fmt: skip
    weights = big_n / n_rows

    def estimate(
        y: npt.NDArray[np.float64], keep: npt.NDArray[np.bool_]
    ) -> tuple[float, float, float, float, float]:
        """(estimate, centre, variance, share of strata without labels, Satterthwaite df)."""
        est = centre = var = unknown = df_den = 0.0
        for s in range(n_strata):
            rows = keep & (s_lab == s)
            if big_n[s] == 0:
                continue
            if not rows.any():
                unknown += float(weights[s])
                continue
            r, c, v = _stratum_parts(y[rows], pi[rows])
            est += float(weights[s]) * r
            centre += float(weights[s]) * c
            part = float(weights[s]) ** 2 * v
            var += part
            # Welch-Satterthwaite over strata, each with its Kish effective size: a small,
            # unevenly weighted stratum that carries most of the variance has few df.
            w = 1.0 / pi[rows]
            n_eff = float(w.sum() ** 2 / (w**2).sum())
            df_den += part**2 / max(n_eff - 1.0, 1.0)
        df = var**2 / df_den if df_den > 0 else float(max(int(keep.sum()) - 1, 1))
        return est, centre, var, unknown, df

    y_all = (h == PASS).astype(float)
    est, centre, var, unknown, df = estimate(y_all, decided)
    se = math.sqrt(var)
    q = float(student_t.ppf(0.5 + conf / 2.0, min(df, n - 1.0)))
    raw_low, raw_high = centre - q * se, centre + q * se + unknown
    warnings: list[str] = []
    if unknown:
        labelled = np.bincount(s_lab[decided], minlength=n_strata)
        missing = [names[s] for s in range(n_strata) if big_n[s] > 0 and labelled[s] == 0]
        warnings.append(
            f"not identified: no labelled rows in stratum {', '.join(missing)} ({unknown:.1%} "
            "of the run); the interval is a bound over every possible pass rate of those rows"
        )
        est += unknown / 2.0
    n_unsure = int((~decided).sum())
    if n_unsure:
        everyone = np.ones_like(decided)
        hi_e, hi_c, hi_v, hi_u, _ = estimate(np.where(decided, y_all, 1.0), everyone)
        lo_e, lo_c, lo_v, _, _ = estimate(np.where(decided, y_all, 0.0), everyone)
        params["human_unsure_bounds"] = {
            "if_all_pass": hi_e, "if_all_fail": lo_e,
            "low": max(0.0, lo_c - q * math.sqrt(lo_v)),
            "high": min(1.0, hi_c + q * math.sqrt(hi_v) + hi_u),
        }  # fmt: skip
        warnings.append(f"{n_unsure} labelled rows human-unsure: left out and bounded")
    params.update(
        min_probability=float(pi.min()), max_probability=float(pi.max()), identified=not unknown
    )
    return PassRateEstimate.clipped_to_unit(
        method, conf, est, (raw_low, raw_high), warnings=warnings, params=params,
        n_labelled=n, n_target=n_rows, center=centre + unknown / 2.0, se=se,
        assumption=ASSUMPTION_ACTIVE,
    )  # fmt: skip
