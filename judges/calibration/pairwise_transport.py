"""The a / b / tie shares of another run, through the judge's misclassification matrix.

``M[h, j] = P(judge j | human h)`` by Bayes from the within-stratum human shares reweighted by
the calibration run's judge-verdict shares, then ``M^T pi = observed`` over the target rows
with a decided verdict, projected onto the simplex, with a delta-method interval (see
:mod:`judges.calibration.pairwise_answer` for the whole argument). The population kappa and
the worse-than-chance warning come from the same joint table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ._results import PassRateEstimate
from .clustered import document_counts
from .pairwise import CLASSES, _project_simplex
from .pairwise_evidence import PW_TIE, PairwiseEvidence, PairwiseLabelledRows
from .pairwise_shares import _K, _SELECTION_INDEX, WinShares, _refused_shares, _Strata
from .rates import z_value
from .strata import DESIGN_EFFECT_THRESHOLD

# Nothing public: answer_win_rate (judges.calibration.pairwise_answer) is the one way in.
__all__: list[str] = []

METHOD_TRANSPORT = "matrix_stratified"

ASSUMPTION_TRANSPORT = (
    "the judge's misclassification matrix P(judge verdict | human verdict) over rows with a "
    "decided verdict transfers from the calibration set to the target (the shares themselves "
    "may differ); calibration labels drawn at random within each judge-verdict stratum of the "
    "calibration set, in any proportions"
)


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
