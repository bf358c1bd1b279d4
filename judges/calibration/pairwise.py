"""Pairwise (A vs B) calibration: vote agreement, 3-class confusion and kappa, corrected win rates.

A pairwise judge says which of two answers is better: ``a``, ``b`` or ``tie``. Humans vote the
same way, usually several annotators per row. This module holds the statistics of such data as
pure functions over aligned arrays:

* :func:`vote_agreement`: agreement counted **per human vote**, as Zheng et al. (2023) count it
  (each annotator's vote against the judge's verdict on that row), "with ties" (all votes) and
  "without ties" (votes where neither the annotator nor the judge said tie). Several votes on a
  row share the judge's verdict, so when row ids are given the interval is a row-cluster
  bootstrap; otherwise Wilson over votes.
* :func:`vote_pair_agreement`: human-human agreement the same way, over every pair of votes on
  the same row (Zheng et al.'s "human vs human" figure).
* :func:`pairwise_confusion` and :func:`vote_kappa`: the 3 x 3 table (human rows, judge
  columns) and Cohen's kappa over the votes, with the same cluster bootstrap.
* :func:`vote_consensus`: one human verdict per row (the most frequent vote; no single most
  frequent vote means the annotators disagree, which is a ``tie``).
* :func:`corrected_win_rate`: the share of target rows where A truly wins, B wins, or it is a
  tie, from the judge's observed shares and its 3 x 3 misclassification matrix ``M`` estimated
  on the labelled rows (``M[i, j] = P(judge says j | human says i)``). Solving
  ``M^T pi = observed`` is the multi-class Rogan-Gladen correction (Lee et al. 2025 for two
  classes). The interval is the delta method on the smoothed counts (the multinomial analogue of
  Lee et al.'s adjusted Wald: ``z^2/K`` pseudo-votes per target cell, ``2/K`` per calibration
  cell, which reduce to theirs at K = 2) or a parametric bootstrap over both the calibration
  table and the target counts. The raw table is the judge's errors only when the labelled rows
  are a random sample of their run: labels drawn by verdict (the Label page's stratified
  queue) bias it (B-win coverage 0.004 in ``bench/coverage.py --block pairwise``). Every surface
  therefore answers through :func:`judges.calibration.answer_win_rate`, which reads how the
  labels were drawn; this is the building block for a table known to be a random sample.

Position consistency (a verdict that changes when A and B swap places) is
:func:`judges.calibration.self_consistency` with ``kind="pairwise"``.

References:
    Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena. NeurIPS
    (agreement per vote, with and without ties; the position-swap rule).
    Rogan, W. J. & Gladen, B. (1978). Estimating prevalence from the results of a screening
    test. Am. J. Epidemiol. 107, 71-76.
    Lee, C. et al. (2025). How to correctly report LLM-as-a-judge evaluations. arXiv 2511.21140.
    Buonaccorsi, J. P. (2010). Measurement Error: Models, Methods and Applications, ch. 3
    (misclassification of a categorical variable: the matrix method and its delta variance).
    Agresti, A. & Coull, B. A. (1998). Approximate is better than "exact" for interval
    estimation of binomial proportions. Am. Stat. 52, 119-126 (the pseudo-count smoothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, Estimate, _ToDict
from ._verdicts import TIE, A, B, PerRow, normalize_verdicts
from .agreement import kappa_of_tables
from .kappa_interval import kappa_interval_from_table
from .rates import check_confidence, wilson_interval, z_value
from .resampling import bootstrap_weights, group_codes, percentile_interval

__all__ = [
    "CLASSES",
    "PairwiseConfusion",
    "VoteAgreement",
    "WinRateEstimate",
    "corrected_win_rate",
    "corrected_win_rate_from_counts",
    "pairwise_confusion",
    "vote_agreement",
    "vote_consensus",
    "vote_kappa",
    "vote_pair_agreement",
]

CLASSES = ("a", "b", "tie")
"""The pairwise verdicts, in the order of every table's rows and columns."""
_K = len(CLASSES)
WinRateMethod = Literal["delta", "bootstrap"]


# -- agreement per vote -----------------------------------------------------------------------


@dataclass(frozen=True)
class VoteAgreement(_ToDict):
    """Agreement with and without ties, counted per vote (Zheng et al. 2023).

    Attributes:
        with_ties: Share of compared votes where both sides gave the same verdict.
        without_ties: The same over the votes where neither side said ``tie``.
        n_rows: Rows the compared votes come from.
        excluded: Votes left out because a side was unsure or unscored.
    """

    with_ties: Estimate
    without_ties: Estimate
    n_rows: int
    excluded: int


def _codes(values: Any, name: str) -> npt.NDArray[np.int8]:
    codes = normalize_verdicts(values, kind="pairwise")
    if codes.ndim != 1:
        raise CalibrationInputError(f"{name} must be one-dimensional")
    return codes


def _human_judge(
    human: PerRow, judge: PerRow
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    """Codes of a human and a judge verdict per element, checked to be aligned."""
    h, j = _codes(human, "human"), _codes(judge, "judge")
    if h.shape[0] != j.shape[0]:
        raise CalibrationInputError(
            f"arrays must be aligned, got lengths {sorted({h.shape[0], j.shape[0]})}"
        )
    return h, j


def _ratio_interval(
    hits: npt.NDArray[np.float64], totals: npt.NDArray[np.float64], *,
    rng: np.random.Generator | None, n_boot: int, confidence: float,
) -> Estimate:
    """``sum(hits) / sum(totals)`` over rows: Wilson, or a percentile bootstrap over rows."""
    k, n = int(hits.sum()), int(totals.sum())
    if rng is None or n == 0:
        return wilson_interval(k, n, confidence=confidence)
    used = totals > 0
    w = bootstrap_weights(int(used.sum()), n_boot=n_boot, rng=rng).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = (w @ hits[used]) / (w @ totals[used])
    return percentile_interval(reps, estimate=k / n, n=n, method="row-cluster-bootstrap",
                               confidence=confidence, lower_limit=0.0, upper_limit=1.0)


def _share(
    hits: npt.NDArray[np.bool_], groups: npt.NDArray[np.int64] | None, n_groups: int,
    *, rng: np.random.Generator | None, n_boot: int, confidence: float,
) -> Estimate:
    """Share of ``hits``: Wilson over votes, or a percentile bootstrap over row clusters."""
    if groups is None:
        return wilson_interval(int(hits.sum()), int(hits.size), confidence=confidence)
    hit_per = np.bincount(groups, weights=hits.astype(float), minlength=n_groups).astype(float)
    n_per = np.bincount(groups, minlength=n_groups).astype(float)
    return _ratio_interval(hit_per, n_per, rng=rng, n_boot=n_boot, confidence=confidence)


def _groups(rows: Any, size: int) -> tuple[npt.NDArray[np.int64] | None, int]:
    if rows is None:
        return None, 0
    codes, uniques = group_codes(rows)
    if codes.shape[0] != size:
        raise CalibrationInputError(f"rows must be aligned: {codes.shape[0]} vs {size} votes")
    return codes, len(uniques)


def vote_agreement(
    human: PerRow, judge: PerRow,
    *, rows: PerRow | None = None, rng: np.random.Generator | None = None, n_boot: int = 2000,
    confidence: float = 0.95,
) -> VoteAgreement:
    """Judge-human agreement counted per human vote, with and without ties.

    Each element is one human vote and the judge's verdict on that vote's row (repeat the
    judge's verdict for every vote on a row). Votes where either side is unsure or unscored are
    excluded and counted. "Without ties" keeps the votes where neither side said ``tie``, as
    Zheng et al. (2023, Table 2) count it.

    Args:
        human: One vote per element: ``a``/``b``/``tie`` (``unsure``/``unscored`` excluded).
        judge: The judge's verdict on the same row as each vote.
        rows: The row id of each vote. With ``rng``, the interval is a percentile bootstrap
            over rows (votes on one row share the judge's verdict, so they are not independent).
        rng: Random generator of that bootstrap; ``None`` gives Wilson intervals over votes.
        n_boot: Bootstrap replicates.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`VoteAgreement`; each share is refused when it has no votes.

    Examples:
        >>> r = vote_agreement(["a", "b", "tie", "a"], ["a", "a", "tie", "b"])
        >>> r.with_ties.estimate, r.without_ties.estimate, r.without_ties.n
        (0.5, 0.3333333333333333, 3)
    """
    conf = check_confidence(confidence)
    h, j = _human_judge(human, judge)
    groups, n_groups = _groups(rows, h.shape[0])
    decided = (h >= 0) & (j >= 0)
    no_tie = decided & (h != TIE) & (j != TIE)
    same = h == j

    def share(mask: npt.NDArray[np.bool_]) -> Estimate:
        g = None if groups is None else groups[mask]
        return _share(same[mask], g, n_groups, rng=rng, n_boot=n_boot, confidence=conf)

    n_rows = len(np.unique(groups[decided])) if groups is not None else int(decided.sum())
    return VoteAgreement(share(decided), share(no_tie), n_rows, int((~decided).sum()))


def vote_pair_agreement(
    rows: PerRow, votes: PerRow,
    *, rng: np.random.Generator | None = None, n_boot: int = 2000, confidence: float = 0.95,
) -> VoteAgreement:
    """Human-human agreement over every pair of votes on the same row, with and without ties.

    A row with ``k`` decided votes contributes ``k (k - 1) / 2`` pairs; "without ties" keeps the
    pairs where neither vote is ``tie`` (Zheng et al. 2023's human-human figure).

    Args:
        rows: The row id of each vote.
        votes: ``a``/``b``/``tie`` per vote (``unsure``/``unscored`` excluded).
        rng: Random generator for a row-cluster bootstrap interval; ``None`` gives Wilson
            intervals over pairs.
        n_boot: Bootstrap replicates.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`VoteAgreement` (``n`` = pairs; refused when no row has two decided votes).

    Examples:
        >>> r = vote_pair_agreement([1, 1, 2, 2, 2], ["a", "a", "a", "b", "tie"])
        >>> r.with_ties.estimate, r.with_ties.n, r.without_ties.estimate
        (0.25, 4, 0.5)
    """
    conf = check_confidence(confidence)
    v = _codes(votes, "votes")
    groups, n_groups = _groups(rows, v.shape[0])
    assert groups is not None
    decided = v >= 0
    excluded = int((~decided).sum())
    g, v = groups[decided], v[decided]
    # counts[row, class]; pairs per row and agreeing pairs per row, with and without ties.
    counts = np.zeros((n_groups, _K), dtype=np.int64)
    np.add.at(counts, (g, v.astype(np.int64)), 1)
    total = counts.sum(axis=1)
    pairs = total * (total - 1) // 2
    same = (counts * (counts - 1) // 2).sum(axis=1)
    decisive = counts[:, A] + counts[:, B]
    pairs_nt = decisive * (decisive - 1) // 2
    same_nt = same - counts[:, TIE] * (counts[:, TIE] - 1) // 2

    def share(hit: npt.NDArray[np.int64], n: npt.NDArray[np.int64]) -> Estimate:
        return _ratio_interval(hit.astype(float), n.astype(float), rng=rng, n_boot=n_boot,
                               confidence=conf)

    return VoteAgreement(share(same, pairs), share(same_nt, pairs_nt),
                         int((pairs > 0).sum()), excluded)


# -- 3-class table and kappa ------------------------------------------------------------------


@dataclass(frozen=True)
class PairwiseConfusion(_ToDict):
    """Human (rows) x judge (columns) counts over ``a``, ``b``, ``tie``.

    Attributes:
        table: 3 x 3 counts, rows and columns in the order of :data:`CLASSES`.
        n: Votes (or rows) counted.
        excluded: Left out because a side was unsure or unscored.
    """

    table: tuple[tuple[int, ...], ...]
    n: int
    excluded: int

    def as_array(self) -> npt.NDArray[np.int64]:
        """The table as a 3 x 3 integer array."""
        return np.asarray(self.table, dtype=np.int64)


def _table_codes(h: npt.NDArray[np.int8], j: npt.NDArray[np.int8]) -> npt.NDArray[np.int64]:
    ok = (h >= 0) & (j >= 0)
    idx = h[ok].astype(np.int64) * _K + j[ok].astype(np.int64)
    return np.bincount(idx, minlength=_K * _K).reshape(_K, _K)


def pairwise_confusion(
    human: PerRow, judge: PerRow
) -> PairwiseConfusion:
    """The 3 x 3 human x judge table over ``a``/``b``/``tie`` (unsure/unscored excluded).

    Examples:
        >>> pairwise_confusion(["a", "b", "tie", "a"], ["a", "a", "tie", "b"]).table
        ((1, 1, 0), (1, 0, 0), (0, 0, 1))
    """
    h, j = _human_judge(human, judge)
    t = _table_codes(h, j)
    return PairwiseConfusion(tuple(tuple(int(x) for x in r) for r in t), int(t.sum()),
                             int(h.shape[0] - t.sum()))


def vote_kappa(
    human: PerRow, judge: PerRow,
    *, rows: PerRow | None = None, rng: np.random.Generator | None = None, n_boot: int = 2000,
    confidence: float = 0.95,
) -> Estimate:
    """Cohen's kappa (3 classes) between human votes and the judge's verdicts on their rows.

    Without ``rows`` (or ``rng``) this is :func:`judges.calibration.kappa_interval_from_table`
    on the vote table (votes treated as independent). With both, the interval is a percentile
    bootstrap over rows, which keeps the votes of a row together.

    Args:
        human: One vote per element.
        judge: The judge's verdict on each vote's row.
        rows: Row id per vote (for the cluster bootstrap).
        rng: Random generator of that bootstrap.
        n_boot: Bootstrap replicates.
        confidence: Two-sided confidence level.

    Returns:
        An :class:`Estimate` of kappa (``n`` = votes compared).
    """
    conf = check_confidence(confidence)
    h, j = _human_judge(human, judge)
    table = _table_codes(h, j)
    base = kappa_interval_from_table(table, confidence=conf)
    groups, n_groups = _groups(rows, h.shape[0])
    if groups is None or rng is None or base.refused:
        return base
    ok = (h >= 0) & (j >= 0)
    cell = h[ok].astype(np.int64) * _K + j[ok].astype(np.int64)
    per_row = np.zeros((n_groups, _K * _K))
    np.add.at(per_row, (groups[ok], cell), 1.0)
    per_row = per_row[per_row.sum(axis=1) > 0]
    w = bootstrap_weights(per_row.shape[0], n_boot=n_boot, rng=rng).astype(float)
    reps = kappa_of_tables((w @ per_row).reshape(-1, _K, _K))
    return percentile_interval(reps, estimate=base.estimate, n=base.n,
                               method="cohen-kappa-row-cluster-bootstrap", confidence=conf,
                               lower_limit=-1.0, upper_limit=1.0)


def vote_consensus(
    rows: PerRow, votes: PerRow
) -> tuple[npt.NDArray[Any], npt.NDArray[np.str_]]:
    """One human verdict per row: the most frequent decided vote; no single winner is ``tie``.

    Annotators who split between A and B (or between a side and tie) are read as "no clear
    winner", the same reading the MT-Bench rule gives a judge that changes its mind when the
    order changes. Rows with no decided vote get ``unsure``.

    Returns:
        ``(row_ids, verdicts)``: the unique row ids (sorted) and their consensus verdicts.

    Examples:
        >>> vote_consensus(["r1", "r1", "r2", "r2", "r2"], ["a", "b", "b", "b", "tie"])[1].tolist()
        ['tie', 'b']
    """
    v = _codes(votes, "votes")
    groups, uniques = group_codes(rows)
    if groups.shape[0] != v.shape[0]:
        raise CalibrationInputError("rows and votes must be aligned")
    counts = np.zeros((len(uniques), _K), dtype=np.int64)
    ok = v >= 0
    np.add.at(counts, (groups[ok], v[ok].astype(np.int64)), 1)
    top = counts.max(axis=1)
    winners = (counts == top[:, None]).sum(axis=1)
    names = np.array(CLASSES)[counts.argmax(axis=1)]
    out = np.where(top == 0, "unsure", np.where(winners > 1, "tie", names))
    return np.asarray(uniques), out.astype(np.str_)


# -- corrected win rate -----------------------------------------------------------------------


@dataclass(frozen=True)
class WinRateEstimate(_ToDict):
    """Corrected shares of rows where A wins, B wins, or it is a tie.

    Attributes:
        a: True share of A wins with its interval.
        b: True share of B wins.
        tie: True share of ties.
        observed: The judge's own shares (Wilson intervals), in the order a, b, tie.
        misclassification: ``M[i][j] = P(judge says j | human says i)`` (rows a, b, tie).
        m: Labelled rows per human class (a, b, tie).
        n_target: Target rows with a decided judge verdict.
        method: ``"matrix-delta"`` or ``"matrix-bootstrap"``.
        confidence: Level of the intervals.
        clipped: The raw solution left the simplex and was projected back onto it.
        warnings: Caveats.
        refused: The correction cannot be made; see ``reason``.
        reason: Why (``None`` unless refused).
    """

    a: Estimate
    b: Estimate
    tie: Estimate
    observed: tuple[Estimate, Estimate, Estimate]
    misclassification: tuple[tuple[float, ...], ...]
    m: tuple[int, int, int]
    n_target: int
    method: str
    confidence: float
    clipped: bool = False
    warnings: tuple[str, ...] = ()
    refused: bool = False
    reason: str | None = None

    def shares(self) -> dict[str, Estimate]:
        """``{"a": ..., "b": ..., "tie": ...}``."""
        return {"a": self.a, "b": self.b, "tie": self.tie}


def _project_simplex(v: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Euclidean projection of the last axis onto the probability simplex (Duchi et al. 2008)."""
    u = -np.sort(-v, axis=-1)
    css = np.cumsum(u, axis=-1) - 1.0
    ind = np.arange(1, v.shape[-1] + 1)
    cond = u - css / ind > 0
    rho = v.shape[-1] - 1 - np.argmax(cond[..., ::-1], axis=-1)
    theta = np.take_along_axis(css, rho[..., None], axis=-1) / (rho[..., None] + 1.0)
    return np.asarray(np.maximum(v - theta, 0.0), dtype=np.float64)


def _multinomial_cov(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.diag(p) - np.outer(p, p)


def corrected_win_rate_from_counts(
    calibration: npt.ArrayLike,
    target: npt.ArrayLike,
    *,
    method: WinRateMethod = "delta",
    rng: np.random.Generator | None = None,
    n_boot: int = 4000,
    confidence: float = 0.95,
) -> WinRateEstimate:
    """Corrected A / B / tie shares from a 3 x 3 calibration table and the target's counts.

    ``calibration[i][j]`` counts labelled rows with human verdict ``i`` and judge verdict
    ``j`` (order a, b, tie); ``target[j]`` counts target rows the judge gave ``j``. The judge's
    misclassification matrix ``M`` (rows normalised) is assumed to transfer from the labelled
    rows to the target (the shares themselves may differ). The estimate solves
    ``M^T pi = observed`` and projects onto the simplex when the solution leaves it.

    Args:
        calibration: 3 x 3 counts, human rows, judge columns.
        target: 3 counts of the judge's verdicts on the target rows.
        method: ``"delta"`` (default; smoothed delta method, deterministic) or ``"bootstrap"``
            (parametric: every human class's row of the table and the target counts redrawn
            from their multinomials; percentile interval; needs ``rng``).
        rng: Random generator for ``method="bootstrap"``.
        n_boot: Bootstrap replicates.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`WinRateEstimate`; refused when a human class has no labelled row, the target
        has no decided verdict, or ``M`` is singular or no better than chance (``det M <= 0``).
        Forced-choice data (no tie from the humans, nor from the judge on either set) gets the
        two-class correction of a vs b, with a tie share of 0 and a warning saying so.

    Examples:
        >>> r = corrected_win_rate_from_counts([[40, 5, 5], [5, 40, 5], [10, 10, 30]],
        ...                                    [300, 300, 400])
        >>> round(r.a.estimate, 3), round(r.tie.estimate, 3)
        (0.2, 0.6)
    """
    conf = check_confidence(confidence)
    cal = np.asarray(calibration, dtype=float)
    tgt = np.asarray(target, dtype=float)
    if cal.shape != (_K, _K) or tgt.shape != (_K,) or np.any(cal < 0) or np.any(tgt < 0):
        raise CalibrationInputError(
            "calibration must be 3 x 3 and target 3 non-negative counts (order a, b, tie)")
    if method not in ("delta", "bootstrap"):
        raise CalibrationInputError(f"method must be 'delta' or 'bootstrap', got {method!r}")
    if method == "bootstrap" and rng is None:
        raise CalibrationInputError("method='bootstrap' needs rng=numpy.random.default_rng(seed)")
    m = cal.sum(axis=1)
    n = float(tgt.sum())
    tag = f"matrix-{method}"
    observed = tuple(wilson_interval(int(c), int(n), confidence=conf) for c in tgt)
    with np.errstate(divide="ignore", invalid="ignore"):
        mat = np.where(m[:, None] > 0, cal / m[:, None], np.nan)
    common = {
        "observed": observed, "m": tuple(int(x) for x in m), "n_target": int(n),
        "misclassification": tuple(tuple(float(x) for x in r) for r in mat),
        "method": tag, "confidence": conf,
    }

    def refuse(reason: str) -> WinRateEstimate:
        r = Estimate.refusal(reason, n=int(n), method=tag, confidence=conf)
        return WinRateEstimate(r, r, r, refused=True, reason=reason, **common)  # type: ignore[arg-type]

    # Forced choice (no tie from the humans, nor from the judge on either set): the correction
    # is the two-class one over a and b (Rogan-Gladen / Lee), with no tie share to estimate.
    forced = m[TIE] == 0 and cal[:, TIE].sum() == 0 and tgt[TIE] == 0
    keep = [A, B] if forced else [A, B, TIE]
    missing = [CLASSES[i] for i in keep if m[i] == 0]
    if missing:
        return refuse(f"no labelled row where the humans say {' or '.join(missing)}: label "
                      "rows of every outcome (a, b and tie) to estimate the judge's errors")
    if n == 0:
        return refuse("no target row with a decided judge verdict")
    sub, sub_t = cal[np.ix_(keep, keep)], tgt[keep]
    k = len(keep)
    sub_mat = sub / sub.sum(axis=1)[:, None]
    if np.linalg.det(sub_mat) <= 1e-9:
        return refuse("the judge's misclassification matrix is singular or no better than "
                      "chance (det M <= 0): its verdicts carry no usable information")
    raw = np.asarray(np.linalg.solve(sub_mat.T, sub_t / n), dtype=np.float64)
    point = _project_simplex(raw)
    clipped = bool(np.any(np.abs(raw - point) > 1e-12))
    z = z_value(conf)
    if method == "delta":
        lows, highs, ses = _delta_interval(sub, sub_t, z)
    else:
        assert rng is not None
        lows, highs, ses = _bootstrap_interval(sub, sub_t, conf, rng, n_boot)
    warnings: tuple[str, ...] = ()
    if forced:
        warnings = ("no tie from the humans or the judge: a two-class correction of a vs b "
                    "(the tie share is 0 by construction)",)
    if clipped:
        warnings += ("the corrected shares left [0, 1] and were projected back: the judge's "
                     "errors on the labelled rows do not fit these target counts well",)
    smoothed = (sub + 2.0 / k) / (sub.sum(axis=1)[:, None] + 2.0)
    if np.linalg.det(smoothed) <= 0.05:
        warnings += ("the judge barely separates the outcomes (det M near 0): the corrected "
                     "shares are uninformative",)
    # The interval is centred on the smoothed solution; keep the point estimate inside it.
    lows, highs = np.minimum(lows, point), np.maximum(highs, point)
    shares = [
        Estimate(float(point[i]), float(lows[i]), float(highs[i]), int(n), tag, conf,
                 se=float(ses[i]), warnings=warnings)
        for i in range(k)
    ]
    if forced:
        shares.append(Estimate(0.0, 0.0, 0.0, int(n), tag, conf, se=0.0, warnings=warnings))
    return WinRateEstimate(shares[0], shares[1], shares[2], clipped=clipped, warnings=warnings,
                           **common)  # type: ignore[arg-type]


def _delta_interval(
    cal: npt.NDArray[np.float64], tgt: npt.NDArray[np.float64], z: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Delta-method interval on Agresti-Coull-smoothed counts, centred on the smoothed solution.

    ``pi = A p`` with ``A = (M^T)^-1``; ``d pi = A (d p - sum_i pi_i d M_i)``, the target and
    each human class's row independent multinomials, so
    ``Var pi = A [Cov(p)/n + sum_i pi_i^2 Cov(M_i)/m_i] A^T``.
    """
    k = tgt.shape[0]
    n_s = tgt.sum() + z * z
    p_s = (tgt + z * z / k) / n_s
    m_s = cal.sum(axis=1) + 2.0
    mat_s = (cal + 2.0 / k) / m_s[:, None]
    inv = np.linalg.inv(mat_s.T)
    pi_s = _project_simplex(inv @ p_s)
    cov = _multinomial_cov(p_s) / n_s
    for i in range(k):
        cov = cov + pi_s[i] ** 2 * _multinomial_cov(mat_s[i]) / m_s[i]
    var = np.diag(inv @ cov @ inv.T)
    se = np.sqrt(np.maximum(var, 0.0))
    return np.clip(pi_s - z * se, 0, 1), np.clip(pi_s + z * se, 0, 1), se


def _bootstrap_interval(
    cal: npt.NDArray[np.float64], tgt: npt.NDArray[np.float64], conf: float,
    rng: np.random.Generator, n_boot: int,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Parametric bootstrap: redraw each class's calibration row and the target counts."""
    m, k = cal.sum(axis=1), cal.shape[0]
    mats = np.stack([rng.multinomial(int(m[i]), cal[i] / m[i], size=n_boot) for i in range(k)],
                    axis=1).astype(float)
    mats = mats / m[None, :, None]
    n = tgt.sum()
    ps = rng.multinomial(int(n), tgt / n, size=n_boot).astype(float) / n
    ok = np.linalg.det(mats) > 1e-9
    sol = np.full((n_boot, k), np.nan)
    sol[ok] = _project_simplex(
        np.linalg.solve(np.transpose(mats[ok], (0, 2, 1)), ps[ok][..., None])[..., 0])
    alpha = 1.0 - conf
    good = sol[ok]
    lo, hi = np.quantile(good, [alpha / 2, 1 - alpha / 2], axis=0)
    return lo, hi, good.std(axis=0, ddof=1)


def corrected_win_rate(
    human: PerRow, judge: PerRow, target_judge: PerRow,
    *, method: WinRateMethod = "delta", rng: np.random.Generator | None = None, n_boot: int = 4000,
    confidence: float = 0.95,
) -> WinRateEstimate:
    """Corrected A / B / tie shares of the target from labelled rows and the judge's verdicts.

    Args:
        human: One human verdict per labelled row (e.g. :func:`vote_consensus`).
        judge: The judge's verdict on the same rows.
        target_judge: The judge's verdicts on the target rows (unsure/unscored excluded).
        method: ``"delta"`` or ``"bootstrap"`` (see :func:`corrected_win_rate_from_counts`).
        rng: Random generator for the bootstrap.
        n_boot: Bootstrap replicates.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`WinRateEstimate`.
    """
    h, j = _human_judge(human, judge)
    t = _codes(target_judge, "target_judge")
    counts = np.bincount(t[t >= 0].astype(np.int64), minlength=_K)
    return corrected_win_rate_from_counts(
        _table_codes(h, j), counts, method=method, rng=rng, n_boot=n_boot, confidence=confidence
    )
