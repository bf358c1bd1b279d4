"""Agreement: Cohen's kappa with its standard error, and agreement among several annotators.

The human-human agreement measured here is the ceiling a judge is compared against.

References:
    Cohen, J. (1960). A coefficient of agreement for nominal scales. EPM 20, 37-46.
    Fleiss, J. L., Cohen, J. & Everitt, B. S. (1969). Large sample standard errors of kappa and
    weighted kappa. Psychological Bulletin 72, 323-327 (the variance statsmodels implements).
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psych. Bull. 76.
    Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability (nominal, with missing
    values via the coincidence matrix).
    Light, R. J. (1971). Measures of response agreement for qualitative data (mean pairwise
    kappa).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
from statsmodels.stats.inter_rater import cohens_kappa as _sm_cohens_kappa

from ._results import CalibrationInputError, Estimate, _ToDict
from ._verdicts import PerRow, VerdictKind, normalize_verdicts
from .rates import check_confidence, z_value
from .resampling import bootstrap_weights, percentile_interval

__all__ = [
    "MultiRaterAgreement",
    "PairwiseKappa",
    "cohen_kappa",
    "fleiss_kappa",
    "kappa_from_table",
    "krippendorff_alpha",
    "multi_rater_agreement",
]

_N_CATEGORIES: dict[str, int] = {"binary": 2, "pairwise": 3}


def kappa_from_table(table: npt.ArrayLike, *, confidence: float = 0.95) -> Estimate:
    """Cohen's kappa of a K x K agreement table with the statsmodels asymptotic SE.

    The interval is ``kappa +/- z * std_kappa`` at the requested level, truncated to [-1, 1]
    (statsmodels' own ``kappa_low``/``kappa_upp`` are fixed at 95 % and not truncated).

    Args:
        table: Square counts table, rater 1 in rows, rater 2 in columns.
        confidence: Two-sided confidence level.

    Returns:
        An :class:`Estimate` with ``se``; refused when the table is empty or kappa is undefined
        (a rater used a single category: chance agreement equals observed agreement).

    Examples:
        >>> e = kappa_from_table([[20, 5], [10, 15]])
        >>> round(e.estimate, 4), round(e.se, 4)
        (0.4, 0.127)
    """
    conf = check_confidence(confidence)
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or t.shape[0] != t.shape[1]:
        raise CalibrationInputError(f"table must be square, got shape {t.shape}")
    if np.any(t < 0):
        raise CalibrationInputError("table counts must be non-negative")
    n = round(t.sum())
    method = "cohen-kappa-wald"
    if n == 0:
        return Estimate.refusal("no rows rated by both", n=0, method=method, confidence=conf)
    row = t.sum(1) / n
    col = t.sum(0) / n
    pe = float((row * col).sum())
    if pe >= 1.0 - 1e-12:
        return Estimate.refusal(
            "kappa undefined: both raters used a single, identical category (chance agreement 1)",
            n=n,
            method=method,
            confidence=conf,
        )
    if min(int((t.sum(1) > 0).sum()), int((t.sum(0) > 0).sum())) < 2:
        # Observed agreement then equals chance agreement whatever the other rater did:
        # kappa is 0 by construction and statsmodels' standard error is undefined (NaN).
        # (One message for either rater: kappa is symmetric in its raters, so is its refusal.)
        return Estimate.refusal(
            "kappa undefined: a rater used a single category, so observed agreement equals "
            "chance agreement by construction",
            n=n, method=method, confidence=conf,
        )  # fmt: skip
    with np.errstate(divide="ignore", invalid="ignore"):  # its z-test divides by 0 at pe=1
        res = _sm_cohens_kappa(t)
    kappa = float(res.kappa)
    # statsmodels' variance can come out as -1e-16 when it is exactly 0 (one rater used a
    # single category, or perfect agreement); clamp before the square root.
    var = float(res.var_kappa)
    se = math.sqrt(var) if np.isfinite(var) and var > 0.0 else 0.0
    z = z_value(conf)
    warnings: tuple[str, ...] = ()
    if se == 0.0:
        warnings = (
            "zero standard error (perfect agreement, or a rater used a single category): "
            "the Wald interval is degenerate",
        )
    return Estimate(
        estimate=kappa,
        low=float(max(-1.0, kappa - z * se)),
        high=float(min(1.0, kappa + z * se)),
        n=n,
        method=method,
        confidence=conf,
        se=se,
        warnings=warnings,
    )


def _decided_table(
    c1: npt.NDArray[np.int8], c2: npt.NDArray[np.int8], k: int
) -> npt.NDArray[np.int64]:
    ok = (c1 >= 0) & (c2 >= 0)
    idx = c1[ok].astype(np.int64) * k + c2[ok].astype(np.int64)
    return np.bincount(idx, minlength=k * k).reshape(k, k)


def cohen_kappa(
    rater1: PerRow, rater2: PerRow,
    *, kind: VerdictKind = "binary", confidence: float = 0.95,
) -> Estimate:
    """Cohen's kappa between two raters (or judge vs human) on aligned rows.

    Rows where either rater is unsure/unscored are excluded. ``kind="pairwise"`` gives the
    categorical kappa over ``a``/``b``/``tie``.

    Args:
        rater1: Verdicts of the first rater.
        rater2: Verdicts of the second rater, same rows.
        kind: ``"binary"`` (pass/fail) or ``"pairwise"`` (a/b/tie).
        confidence: Two-sided confidence level.

    Returns:
        An :class:`Estimate` with ``se`` (see :func:`kappa_from_table`). Symmetric in the raters.

    Examples:
        >>> e = cohen_kappa(["pass"] * 3 + ["fail"] * 3,
        ...                 ["pass", "pass", "fail", "fail", "fail", "pass"])
        >>> round(e.estimate, 4)
        0.3333
    """
    k = _N_CATEGORIES.get(kind, 0)
    c1 = normalize_verdicts(rater1, kind=kind)
    c2 = normalize_verdicts(rater2, kind=kind)
    if c1.shape != c2.shape:
        raise CalibrationInputError(f"raters must be aligned: {c1.shape[0]} vs {c2.shape[0]} rows")
    return kappa_from_table(_decided_table(c1, c2, k), confidence=confidence)


# --------------------------------------------------------------------------- multi-rater


def _ratings_codes(
    ratings: npt.ArrayLike | Sequence[Sequence[Any]], kind: VerdictKind
) -> npt.NDArray[np.int8]:
    arr = np.asarray(ratings, dtype=object)
    if arr.ndim != 2:
        raise CalibrationInputError(f"ratings must be 2-D (items x raters), got shape {arr.shape}")
    flat = normalize_verdicts(arr.ravel(), kind=kind)
    return flat.reshape(arr.shape)


def _category_counts(codes: npt.NDArray[np.int8], k: int) -> npt.NDArray[np.int64]:
    """Items x categories: how many raters chose each category (undecided ignored)."""
    counts = np.zeros((codes.shape[0], k), dtype=np.int64)
    for c in range(k):
        counts[:, c] = (codes == c).sum(axis=1)
    return counts


def _krippendorff_parts(
    counts: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Per-item additive parts of nominal alpha: (m_u, diagonal coincidences, n_uc)."""
    m = counts.sum(axis=1).astype(float)
    pairable = m >= 2
    m_p = np.where(pairable, m, 0.0)
    diag = np.where(pairable, ((counts**2).sum(axis=1) - m) / np.where(pairable, m - 1.0, 1.0), 0.0)
    n_uc = np.where(pairable[:, None], counts, 0).astype(float)
    return m_p, diag, n_uc


def _alpha_from_sums(
    n: npt.NDArray[np.float64], diag: npt.NDArray[np.float64], n_c: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    # alpha = 1 - D_o / D_e = 1 - (n - 1) * (n - sum_c o_cc) / (n^2 - sum_c n_c^2)
    denom = n**2 - (n_c**2).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = 1.0 - (n - 1.0) * (n - diag) / denom
    return np.where(denom > 0, out, np.nan)


def krippendorff_alpha(
    ratings: npt.ArrayLike | Sequence[Sequence[Any]],
    *, kind: VerdictKind = "binary", rng: np.random.Generator | None = None, n_boot: int = 1000,
    confidence: float = 0.95,
) -> Estimate:
    """Krippendorff's alpha (nominal) for items x raters, with an item-bootstrap interval.

    Missing, unsure and unscored ratings are treated as missing; items with fewer than two
    ratings are not pairable and do not contribute (Krippendorff 2011).

    Args:
        ratings: 2-D array-like, one row per item, one column per rater.
        kind: ``"binary"`` or ``"pairwise"``.
        rng: Explicit random generator; ``None`` skips the bootstrap (point estimate only,
            ``low``/``high`` are ``None``).
        n_boot: Bootstrap replicates (items resampled with replacement).
        confidence: Two-sided confidence level.

    Returns:
        An :class:`Estimate` (``n`` = pairable items); refused when fewer than one pairable item
        or only one category is used overall.
    """
    codes = _ratings_codes(ratings, kind)
    counts = _category_counts(codes, _N_CATEGORIES[kind])
    return _krippendorff_from_counts(counts, rng=rng, n_boot=n_boot, confidence=confidence)


def _krippendorff_from_counts(
    counts: npt.NDArray[np.int64],
    *, rng: np.random.Generator | None, n_boot: int, confidence: float,
    weights: npt.NDArray[np.int64] | None = None,
) -> Estimate:
    conf = check_confidence(confidence)
    method = "krippendorff-alpha-nominal"
    m, diag, n_uc = _krippendorff_parts(counts)
    n_items = int((m > 0).sum())
    if n_items == 0:
        return Estimate.refusal(
            "no item has two or more ratings", n=0, method=method, confidence=conf
        )
    alpha = float(_alpha_from_sums(np.array(m.sum()), np.array(diag.sum()), n_uc.sum(axis=0)))
    if not np.isfinite(alpha):
        return Estimate.refusal(
            "alpha undefined: every rating is the same category (no expected disagreement)",
            n=n_items, method=method, confidence=conf,
        )
    if rng is None:
        return _without_bootstrap(alpha, n_items, method, conf)
    keep = m > 0
    w = weights if weights is not None else bootstrap_weights(n_items, n_boot=n_boot, rng=rng)
    wf = w.astype(float)
    reps = _alpha_from_sums(wf @ m[keep], wf @ diag[keep], wf @ n_uc[keep])
    return _item_bootstrap(reps, alpha, n_items, method, conf)


def _without_bootstrap(
    estimate: float, n_items: int, method: str, conf: float, warnings: tuple[str, ...] = ()
) -> Estimate:
    """A coefficient without an interval: the caller gave no random generator."""
    return Estimate(
        estimate, None, None, n_items, method, conf, warnings=(*warnings, "no bootstrap (rng=None)")
    )


def _item_bootstrap(
    reps: npt.NDArray[np.float64], estimate: float, n_items: int, method: str, conf: float
) -> Estimate:
    """The percentile interval of a coefficient in [-1, 1] over item-bootstrap replicates."""
    return percentile_interval(
        reps,
        estimate=estimate,
        n=n_items,
        method=method + "+item-bootstrap",
        confidence=conf,
        lower_limit=-1.0,
        upper_limit=1.0,
    )


def fleiss_kappa(
    ratings: npt.ArrayLike | Sequence[Sequence[Any]],
    *, kind: VerdictKind = "binary", rng: np.random.Generator | None = None, n_boot: int = 1000,
    confidence: float = 0.95,
) -> Estimate:
    """Fleiss' kappa for items x raters, on items rated by every rater, with a bootstrap interval.

    Fleiss' kappa assumes the same number of ratings per item, so items with a missing, unsure
    or unscored rating are dropped (counted in the warnings). Use :func:`krippendorff_alpha`
    when ratings are missing.

    Args:
        ratings: 2-D array-like, one row per item, one column per rater.
        kind: ``"binary"`` or ``"pairwise"``.
        rng: Explicit random generator; ``None`` skips the bootstrap.
        n_boot: Bootstrap replicates (items resampled with replacement).
        confidence: Two-sided confidence level.

    Returns:
        An :class:`Estimate` (``n`` = complete items).
    """
    codes = _ratings_codes(ratings, kind)
    return _fleiss(codes, _N_CATEGORIES[kind], rng=rng, n_boot=n_boot, confidence=confidence)


def _fleiss(
    codes: npt.NDArray[np.int8], k: int,
    *, rng: np.random.Generator | None, n_boot: int, confidence: float,
) -> Estimate:
    conf = check_confidence(confidence)
    method = "fleiss-kappa"
    n_raters = codes.shape[1]
    complete = (codes >= 0).all(axis=1)
    n_dropped = int((~complete).sum())
    warnings: tuple[str, ...] = ()
    if n_dropped:
        warnings = (f"{n_dropped} items with a missing/unsure/unscored rating dropped",)
    if n_raters < 2:
        return Estimate.refusal("need at least two raters", n=0, method=method, confidence=conf)
    counts = _category_counts(codes[complete], k).astype(float)
    n_items = counts.shape[0]
    if n_items == 0:
        return Estimate.refusal(
            "no item rated by every rater", n=0, method=method, confidence=conf, warnings=warnings
        )
    r = float(n_raters)
    p_item = ((counts**2).sum(axis=1) - r) / (r * (r - 1.0))

    def kappa(pbar: Any, p_cat: Any) -> Any:
        pe = (p_cat**2).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = (pbar - pe) / (1.0 - pe)
        return np.where(pe < 1.0 - 1e-12, out, np.nan)

    est = float(kappa(p_item.mean(), counts.sum(axis=0) / (n_items * r)))
    if not np.isfinite(est):
        return Estimate.refusal(
            "kappa undefined: every rating is the same category",
            n=n_items, method=method, confidence=conf, warnings=warnings,
        )
    if rng is None:
        return _without_bootstrap(est, n_items, method, conf, warnings)
    w = bootstrap_weights(n_items, n_boot=n_boot, rng=rng).astype(float)
    reps = kappa((w @ p_item) / n_items, (w @ counts) / (n_items * r))
    res = _item_bootstrap(reps, est, n_items, method, conf)
    return Estimate(
        res.estimate,
        res.low,
        res.high,
        res.n,
        res.method,
        res.confidence,
        res.se,
        (*warnings, *res.warnings),
        res.refused,
        res.reason,
    )


@dataclass(frozen=True)
class PairwiseKappa(_ToDict):
    """Cohen's kappa between two named raters.

    Attributes:
        rater_a: Name of the first rater.
        rater_b: Name of the second rater.
        kappa: Kappa with an item-bootstrap percentile interval (``n`` = items both rated).
    """

    rater_a: str
    rater_b: str
    kappa: Estimate


@dataclass(frozen=True)
class MultiRaterAgreement(_ToDict):
    """Agreement among several annotators.

    Attributes:
        n_items: Items (rows) passed in.
        n_raters: Raters (columns).
        raters: Rater names.
        pairwise: Cohen's kappa for every pair of raters.
        mean_pairwise_kappa: Light's kappa (mean of the pairwise kappas), bootstrapped jointly.
        fleiss: Fleiss' kappa on complete items.
        krippendorff: Krippendorff's alpha (nominal), all pairable items.
    """

    n_items: int
    n_raters: int
    raters: tuple[str, ...]
    pairwise: tuple[PairwiseKappa, ...]
    mean_pairwise_kappa: Estimate
    fleiss: Estimate
    krippendorff: Estimate


def kappa_of_tables(tables: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Cohen's kappa of each K x K table in a stack ``(..., K, K)``; NaN where chance is 1."""
    n = tables.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        po = np.trace(tables, axis1=-2, axis2=-1) / n
        pe = (tables.sum(axis=-1) * tables.sum(axis=-2)).sum(axis=-1) / n**2
        out = (po - pe) / (1.0 - pe)
    return np.where((n > 0) & (pe < 1.0 - 1e-12), out, np.nan)


def _kappa_from_tables(tables: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.float64]:
    """Vectorised Cohen's kappa over (..., k*k) flattened tables."""
    return kappa_of_tables(tables.reshape(*tables.shape[:-1], k, k))


def multi_rater_agreement(
    ratings: npt.ArrayLike | Sequence[Sequence[Any]],
    *, raters: Sequence[str] | None = None, kind: VerdictKind = "binary", rng: np.random.Generator,
    n_boot: int = 1000, confidence: float = 0.95,
) -> MultiRaterAgreement:
    """Pairwise Cohen's kappa, Light's mean kappa, Fleiss' kappa and Krippendorff's alpha.

    All intervals are item-bootstrap percentile intervals. The pairwise kappas and Light's mean
    kappa share one set of resampled items; Fleiss' kappa and Krippendorff's alpha resample the
    items they can use (complete items; items with two or more ratings).

    Args:
        ratings: 2-D array-like, one row per item, one column per rater; entries are verdicts
            (``None``/``"unsure"``/``"unscored"`` = missing).
        raters: Column names (default ``"rater0"``, ``"rater1"``, ...).
        kind: ``"binary"`` or ``"pairwise"``.
        rng: Explicit random generator for the bootstrap.
        n_boot: Bootstrap replicates.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`MultiRaterAgreement`.

    Examples:
        >>> r = [["pass", "pass", "fail"], ["fail", "fail", "fail"], ["pass", "pass", "pass"],
        ...      ["fail", "pass", "fail"]]
        >>> out = multi_rater_agreement(r, rng=np.random.default_rng(0), n_boot=100)
        >>> round(out.krippendorff.estimate, 4), round(out.fleiss.estimate, 4)
        (0.3889, 0.3333)
    """
    conf = check_confidence(confidence)
    codes = _ratings_codes(ratings, kind)
    n_items, n_raters = codes.shape
    names = tuple(raters) if raters is not None else tuple(f"rater{i}" for i in range(n_raters))
    if len(names) != n_raters:
        raise CalibrationInputError(f"{len(names)} rater names for {n_raters} columns")
    if n_raters < 2:
        raise CalibrationInputError("need at least two raters (columns)")
    k = _N_CATEGORIES[kind]
    weights = bootstrap_weights(n_items, n_boot=n_boot, rng=rng) if n_items else None

    pairs: list[PairwiseKappa] = []
    pair_reps: list[npt.NDArray[np.float64]] = []
    pair_ests: list[float] = []
    for i, j in combinations(range(n_raters), 2):
        ok = (codes[:, i] >= 0) & (codes[:, j] >= 0)
        cell = np.where(ok, codes[:, i].astype(np.int64) * k + codes[:, j], 0)
        onehot = np.zeros((n_items, k * k))
        onehot[np.arange(n_items)[ok], cell[ok]] = 1.0
        est = float(_kappa_from_tables(onehot.sum(axis=0), k))
        reps = (
            _kappa_from_tables(weights.astype(float) @ onehot, k)
            if weights is not None
            else np.array([np.nan])
        )
        pair_ests.append(est)
        pair_reps.append(reps)
        method = "cohen-kappa+item-bootstrap"
        n_pair = int(ok.sum())
        if not np.isfinite(est):
            why = "no items rated by both" if n_pair == 0 else "kappa undefined (one category)"
            kap = Estimate.refusal(why, n=n_pair, method=method, confidence=conf)
        else:
            kap = percentile_interval(
                reps,
                estimate=est,
                n=n_pair,
                method=method,
                confidence=conf,
                lower_limit=-1.0,
                upper_limit=1.0,
            )
        pairs.append(PairwiseKappa(names[i], names[j], kap))

    ests = np.array(pair_ests)
    mean_est = float(ests.mean()) if np.all(np.isfinite(ests)) else float("nan")
    mean_reps = np.vstack(pair_reps).mean(axis=0)
    mean_kappa = percentile_interval(
        mean_reps,
        estimate=mean_est,
        n=n_items,
        method="light-kappa+item-bootstrap",
        confidence=conf,
        lower_limit=-1.0,
        upper_limit=1.0,
    )
    counts = _category_counts(codes, k)
    m, _, _ = _krippendorff_parts(counts)
    alpha_weights = (
        bootstrap_weights(int((m > 0).sum()), n_boot=n_boot, rng=rng) if (m > 0).any() else None
    )
    return MultiRaterAgreement(
        n_items=n_items,
        n_raters=n_raters,
        raters=names,
        pairwise=tuple(pairs),
        mean_pairwise_kappa=mean_kappa,
        fleiss=_fleiss(codes, k, rng=rng, n_boot=n_boot, confidence=conf),
        krippendorff=_krippendorff_from_counts(
            counts, rng=rng, n_boot=n_boot, confidence=conf, weights=alpha_weights
        ),
    )
