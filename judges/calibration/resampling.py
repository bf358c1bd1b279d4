"""Bootstrap helpers that take an explicit :class:`numpy.random.Generator`.

Two flavours:

* Item bootstrap by **multinomial weights**: a replicate is a vector of how many times each unit
  (item, document) is drawn. Statistics that are sums over units (confusion counts, coincidence
  matrices) are then one matrix product for all replicates, so thousands of replicates cost
  milliseconds.
* :func:`cluster_bootstrap` for an arbitrary statistic: resample *documents* (clusters) with
  replacement and keep all rows of each drawn document, because rows that share a source
  document fail together (STATS.md §6).

Intervals are percentile intervals. Replicates where the statistic is undefined (``NaN`` or
``None``, e.g. a resample with no failing rows) are dropped and counted in the warnings; if more
than half are undefined, the interval is refused.

References:
    Efron, B. & Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 13 (percentile).
    Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. JRSS-B 69(3), 369-390.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, Estimate
from ._verdicts import PerRow
from .rates import check_confidence

__all__ = [
    "bootstrap_weights",
    "cluster_bootstrap",
    "clustered_agreement",
    "group_codes",
    "percentile_interval",
]


def _check_rng(rng: np.random.Generator) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise CalibrationInputError(
            "rng must be a numpy.random.Generator, e.g. numpy.random.default_rng(seed)"
        )
    return rng


def bootstrap_weights(
    n_units: int, *, n_boot: int, rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """Draw ``n_boot`` bootstrap replicates as multinomial counts over ``n_units`` units.

    Args:
        n_units: Number of resampling units (items or documents), ``>= 1``.
        n_boot: Number of replicates, ``>= 1``.
        rng: Explicit random generator.

    Returns:
        An ``(n_boot, n_units)`` integer array; each row sums to ``n_units``.
    """
    _check_rng(rng)
    if n_units < 1 or n_boot < 1:
        raise CalibrationInputError("n_units and n_boot must be >= 1")
    # Same distribution as rng.multinomial(n_units, [1/n_units] * n_units, size=n_boot), but one
    # flat bincount over uniform draws is ~10x faster for thousands of units.
    draws = rng.integers(0, n_units, size=(n_boot, n_units))
    draws += np.arange(n_boot)[:, None] * n_units
    return np.bincount(draws.ravel(), minlength=n_boot * n_units).reshape(n_boot, n_units)


def percentile_interval(
    replicates: npt.ArrayLike,
    *,
    estimate: float | None,
    n: int,
    method: str,
    confidence: float = 0.95,
    lower_limit: float = -np.inf,
    upper_limit: float = np.inf,
) -> Estimate:
    """Percentile bootstrap interval from replicate values.

    Args:
        replicates: Replicate values; ``NaN`` marks an undefined replicate.
        estimate: Point estimate on the original data (``None`` or ``NaN`` refuses).
        n: Number of resampling units.
        method: Method label recorded in the result.
        confidence: Two-sided confidence level.
        lower_limit: Clip the bounds at this value.
        upper_limit: Clip the bounds at this value.

    Returns:
        An :class:`Estimate`; refused when the estimate is undefined or more than half the
        replicates are.
    """
    conf = check_confidence(confidence)
    reps = np.asarray(replicates, dtype=float).ravel()
    if estimate is None or not np.isfinite(estimate):
        return Estimate.refusal(
            "statistic undefined on the data", n=n, method=method, confidence=conf
        )
    ok = np.isfinite(reps)
    n_bad = int((~ok).sum())
    warnings: tuple[str, ...] = ()
    if n_bad:
        warnings = (f"{n_bad} of {reps.size} bootstrap replicates undefined and dropped",)
    if ok.sum() < max(1, reps.size // 2):
        return Estimate.refusal(
            f"statistic undefined in {n_bad} of {reps.size} bootstrap replicates",
            n=n,
            method=method,
            confidence=conf,
            warnings=warnings,
        )
    alpha = 1.0 - conf
    lo, hi = np.quantile(reps[ok], [alpha / 2.0, 1.0 - alpha / 2.0])
    return Estimate(
        estimate=float(estimate),
        low=float(np.clip(lo, lower_limit, upper_limit)),
        high=float(np.clip(hi, lower_limit, upper_limit)),
        n=n,
        method=method,
        confidence=conf,
        se=float(np.std(reps[ok], ddof=1)) if ok.sum() > 1 else None,
        warnings=warnings,
    )


def group_codes(groups: npt.ArrayLike) -> tuple[npt.NDArray[np.int64], npt.NDArray[Any]]:
    """Integer-code an array of group labels.

    Args:
        groups: 1-D labels (strings, ints, ...).

    Returns:
        ``(codes, uniques)`` with ``uniques[codes] == groups``.
    """
    g = np.asarray(groups)
    if g.ndim != 1:
        raise CalibrationInputError(f"groups must be 1-D, got shape {g.shape}")
    if g.dtype.kind == "O":
        g = g.astype(str)
    uniques, codes = np.unique(g, return_inverse=True)
    return codes.astype(np.int64), uniques


def cluster_bootstrap(
    statistic: Callable[..., float | None], *arrays: PerRow, groups: npt.ArrayLike,
    rng: np.random.Generator, n_boot: int = 2000, confidence: float = 0.95,
    lower_limit: float = -np.inf, upper_limit: float = np.inf,
) -> Estimate:
    """Percentile interval of ``statistic(*arrays)`` resampling whole groups (documents).

    Each replicate draws as many groups as there are, with replacement, and keeps every row of
    each drawn group (a group drawn twice contributes its rows twice).

    Args:
        statistic: Function of the (row-aligned) arrays returning a float, or ``None``/``NaN``
            when undefined on a resample.
        *arrays: Row-aligned arrays (same length as ``groups``).
        groups: Group (document) id per row.
        rng: Explicit random generator.
        n_boot: Number of replicates.
        confidence: Two-sided confidence level.
        lower_limit: Clip the bounds at this value.
        upper_limit: Clip the bounds at this value.

    Returns:
        An :class:`Estimate` whose ``n`` is the number of groups.

    Examples:
        >>> rng = np.random.default_rng(0)
        >>> x = np.array([1, 1, 0, 0, 1, 0])
        >>> docs = np.array(["d1", "d1", "d2", "d2", "d3", "d3"])
        >>> e = cluster_bootstrap(lambda v: float(v.mean()), x, groups=docs, rng=rng, n_boot=200)
        >>> e.n, round(e.estimate, 3)
        (3, 0.5)
    """
    _check_rng(rng)
    arrs = [np.asarray(a) for a in arrays]
    codes, uniques = group_codes(groups)
    n_rows = codes.shape[0]
    for a in arrs:
        if a.shape[0] != n_rows:
            raise CalibrationInputError("every array must have one entry per row of groups")
    n_groups = uniques.shape[0]
    method = "cluster-bootstrap-percentile"
    if n_groups == 0:
        return Estimate.refusal("no rows", n=0, method=method, confidence=confidence)
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def _stat(idx: npt.NDArray[np.int64]) -> float:
        value = statistic(*(a[idx] for a in arrs))
        return float("nan") if value is None else float(value)

    estimate = _stat(np.arange(n_rows))
    reps = np.empty(n_boot, dtype=float)
    for b in range(n_boot):
        drawn = rng.integers(0, n_groups, size=n_groups)
        lens = sizes[drawn]
        # Row positions: for each drawn group, starts[g] + 0..size-1, via repeat + ramp.
        offsets = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens)
        reps[b] = _stat(order[np.repeat(starts[drawn], lens) + offsets])
    return percentile_interval(
        reps, estimate=estimate, n=n_groups, method=method, confidence=confidence,
        lower_limit=lower_limit, upper_limit=upper_limit,
    )


def _tables_kappa(tp: Any, fn: Any, fp: Any, tn: Any) -> Any:
    n = tp + fn + fp + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        po = (tp + tn) / n
        pe = ((tp + fn) * (tp + fp) + (tn + fp) * (tn + fn)) / n**2
        out = (po - pe) / (1.0 - pe)
    return np.where((n > 0) & (pe < 1.0 - 1e-12), out, np.nan)


def clustered_agreement(
    human_codes: npt.NDArray[np.int8],
    judge_codes: npt.NDArray[np.int8],
    groups: npt.ArrayLike,
    *,
    rng: np.random.Generator,
    n_boot: int = 2000,
    confidence: float = 0.95,
    k_target: int | None = None,
    n_target: int | None = None,
) -> dict[str, Estimate]:
    """Document-clustered bootstrap of agreement statistics (vectorised over replicates).

    Resamples documents with replacement, keeps all their labelled rows, and recomputes the
    confusion counts as one matrix product. With ``k_target``/``n_target`` it also gives an
    interval for the Lee point estimate, drawing the judge pass count of each replicate from
    ``Binomial(n_target, k_target / n_target)`` so the target rows' noise is kept (unlike
    judgy, which holds it fixed).

    Args:
        human_codes: Normalised human verdict codes of the labelled rows.
        judge_codes: Normalised judge verdict codes of the same rows.
        groups: Document id per labelled row.
        rng: Explicit random generator.
        n_boot: Replicates.
        confidence: Two-sided confidence level.
        k_target: Judge passes among the target rows (optional).
        n_target: Scored target rows (optional).

    Returns:
        Mapping ``sensitivity``, ``specificity``, ``fpr``, ``accuracy``, ``kappa`` (and
        ``pass_rate_lee``) to percentile :class:`Estimate` objects whose ``n`` is the number of
        documents.
    """
    _check_rng(rng)
    conf = check_confidence(confidence)
    codes, uniques = group_codes(groups)
    if codes.shape[0] != human_codes.shape[0]:
        raise CalibrationInputError("groups must have one entry per labelled row")
    ok = (human_codes >= 0) & (judge_codes >= 0)
    n_groups = uniques.shape[0]
    cell = 2 * human_codes[ok].astype(np.int64) + judge_codes[ok]  # 0=tn 1=fp 2=fn 3=tp
    per_group = np.bincount(codes[ok] * 4 + cell, minlength=n_groups * 4).reshape(n_groups, 4)
    per_group = per_group.astype(float)
    w = bootstrap_weights(n_groups, n_boot=n_boot, rng=rng).astype(float) if n_groups else None
    tn, fp, fn, tp = (per_group[:, i].sum() for i in range(4))
    reps = w @ per_group if w is not None else np.full((1, 4), np.nan)
    rtn, rfp, rfn, rtp = reps[:, 0], reps[:, 1], reps[:, 2], reps[:, 3]

    def ratio(a: Any, b: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)

    method = "cluster-bootstrap-percentile"
    stats = {
        "sensitivity": (ratio(tp, tp + fn), ratio(rtp, rtp + rfn), 0.0, 1.0),
        "specificity": (ratio(tn, tn + fp), ratio(rtn, rtn + rfp), 0.0, 1.0),
        "fpr": (ratio(fp, tn + fp), ratio(rfp, rtn + rfp), 0.0, 1.0),
        "accuracy": (
            ratio(tp + tn, tp + tn + fp + fn),
            ratio(rtp + rtn, reps.sum(axis=1)),
            0.0,
            1.0,
        ),
        "kappa": (_tables_kappa(tp, fn, fp, tn), _tables_kappa(rtp, rfn, rfp, rtn), -1.0, 1.0),
    }
    if k_target is not None and n_target:
        p_hat = k_target / n_target
        p_rep = rng.binomial(n_target, p_hat, size=reps.shape[0]) / n_target
        q0, q1 = ratio(tn, tn + fp), ratio(tp, tp + fn)
        r0, r1 = ratio(rtn, rtn + rfp), ratio(rtp, rtp + rfn)
        with np.errstate(divide="ignore", invalid="ignore"):
            est = np.where(q0 + q1 - 1 > 0, np.clip((p_hat + q0 - 1) / (q0 + q1 - 1), 0, 1), np.nan)
            rep = np.where(r0 + r1 - 1 > 0, np.clip((p_rep + r0 - 1) / (r0 + r1 - 1), 0, 1), np.nan)
        stats["pass_rate_lee"] = (est, rep, 0.0, 1.0)
    out: dict[str, Estimate] = {}
    for name, (est, rep, lo, hi) in stats.items():
        e = float(est)
        out[name] = percentile_interval(
            rep,
            estimate=e if np.isfinite(e) else None,
            n=n_groups,
            method=method,
            confidence=conf,
            lower_limit=lo,
            upper_limit=hi,
        )
    return out
