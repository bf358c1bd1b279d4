"""Document clustering of the verdict-stratified estimator: design effect and a bootstrap-t.

Rows that share a source document fail together, so a labelled set drawn as whole documents
carries less information than its row count suggests. The verdict-stratified estimator
``theta = sum_s W_s k_s / m_s`` is a function of per-document, per-stratum counts ``(m_gs,
k_gs)``, which makes both tools here cheap and vectorised:

* the CR1 cluster-robust variance of its linearisation, ``G/(G-1) sum_g u_g^2`` with
  ``u_g = sum_s W_s (k_gs - r_s m_gs) / m_s``, and the design effect against the row-level
  variance (Kish 1965);
* the CR2 (bias-reduced) variance with Bell-McCaffrey degrees of freedom, in closed form;
* a studentised document bootstrap (bootstrap-t): documents resampled with replacement, each
  replicate studentised by its own CR2 standard error. With few documents the t statistic is
  skewed and its spread varies with the sample, which a fixed t quantile misses (CR2 with
  Bell-McCaffrey degrees of freedom covered 0.928-0.938 at 10 documents with a strong document
  effect in ``bench/coverage.py``); the bootstrap-t reads both from the data.

References:
    Cameron, A. C., Gelbach, J. B. & Miller, D. L. (2008). Bootstrap-based improvements for
    inference with clustered errors. Rev. Econ. Stat. 90(3), 414-427.
    Bell, R. M. & McCaffrey, D. F. (2002). Bias reduction in standard errors for linear
    regression with multi-stage samples. Survey Methodology 28(2), 169-181.
    Cameron, A. C. & Miller, D. L. (2015). J. Human Resources 50(2), 317-372.
    Imbens, G. W. & Kolesar, M. (2016). Robust standard errors in small samples: some
    practical advice. Rev. Econ. Stat. 98(4), 701-712.
    Field, C. A. & Welsh, A. H. (2007). Bootstrapping clustered data. JRSS-B 69(3), 369-390.
    Kish, L. (1965). Survey Sampling (design effect).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.stats import t as student_t

from ._verdicts import PASS
from .resampling import bootstrap_weights

__all__ = ["DocumentCounts", "document_counts"]


@dataclass(frozen=True)
class DocumentCounts:
    """Per-document, per-stratum labelled counts and the stratum weights of the run.

    Attributes:
        labelled: ``(G, S)`` labelled rows (human pass/fail) per document and stratum.
        passed: ``(G, S)`` of those, human passes.
        weights: ``(S,)`` population share of each stratum.
        row_variance: Row-level variance of the estimator (no clustering, no smoothing).
    """

    labelled: npt.NDArray[np.float64]
    passed: npt.NDArray[np.float64]
    weights: npt.NDArray[np.float64]
    row_variance: float

    @property
    def n_documents(self) -> int:
        """Documents with at least one labelled row."""
        return int(self.labelled.shape[0])

    def estimate_and_variance(
        self, draws: npt.NDArray[np.float64] | None = None, *, bias_reduced: bool = False
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Estimator and its cluster-robust variance, for the data or bootstrap draws.

        Args:
            draws: ``(B, G)`` document multiplicities of ``B`` bootstrap replicates
                (``None`` = the data).
            bias_reduced: ``False`` for CR1 (``G/(G-1) sum_g u_g^2``); ``True`` for CR2, whose
                residual sums are rescaled by ``(1 - m_gs / m_s)^{-1/2}`` (see
                :meth:`cr2_interval`); a document drawn twice counts as two documents.

        Returns:
            ``(theta, variance)`` arrays of length ``B`` (1 for the data); ``NaN`` where a
            labelled stratum is empty in a replicate.
        """
        c = np.ones((1, self.n_documents)) if draws is None else draws.astype(float)
        m = c @ self.labelled
        k = c @ self.passed
        has_rows = self.weights > 0
        ok = np.all((m > 0) | ~has_rows, axis=1)
        safe_m = np.where(m > 0, m, 1.0)
        r = k / safe_m
        theta = (r * self.weights).sum(axis=1)
        # u[b, g] = sum_s W_s a_bgs (k_gs - r_bs m_gs) / m_bs, one (B, G) term per stratum
        u = np.zeros(c.shape)
        for s in range(self.labelled.shape[1]):
            if not has_rows[s]:
                continue
            scale = self.weights[s] / safe_m[:, s : s + 1]
            resid = self.passed[None, :, s] - r[:, s : s + 1] * self.labelled[None, :, s]
            if bias_reduced:
                room = 1.0 - self.labelled[None, :, s] / safe_m[:, s : s + 1]
                scale = scale * np.where(room > 1e-12, 1.0 / np.sqrt(np.maximum(room, 1e-12)), 0.0)
            u += scale * resid
        g = self.n_documents
        factor = 1.0 if bias_reduced else g / (g - 1.0)
        var = factor * (c * u**2).sum(axis=1)
        return np.where(ok, theta, np.nan), np.where(ok, var, np.nan)

    @property
    def design_effect(self) -> float:
        """CR1 variance over the row-level variance (1 when neither varies)."""
        _, v = self.estimate_and_variance()
        v_cl = float(v[0])
        if self.row_variance <= 0.0:
            return 1.0 if not v_cl > 0.0 else float("inf")
        return v_cl / self.row_variance

    def cr2_interval(self, *, confidence: float) -> tuple[float, float, float, float]:
        """Bias-reduced (CR2) cluster-robust interval with Bell-McCaffrey degrees of freedom.

        The estimator is a linear combination ``sum_s W_s beta_s`` of the coefficients of a
        regression on stratum indicators, so the CR2 adjustment ``(I - H_gg)^{-1/2}`` of each
        document's residuals has a closed form: ``H_gg`` is ``1/m_s`` on every pair of the
        document's rows in stratum ``s``, so only the residual *sum* ``k_gs - r_s m_gs`` is
        rescaled, by ``(1 - m_gs / m_s)^{-1/2}``. The degrees of freedom
        ``(sum lambda)^2 / sum lambda^2`` over the eigenvalues of ``G'G`` (Imbens & Kolesar
        2016, eq. 11, homoskedastic working model) also reduce to per-document sums, so no
        ``n x n`` matrix is formed.

        Args:
            confidence: Two-sided confidence level.

        Returns:
            ``(low, high, se, df)``: unclipped bounds, the CR2 standard error and the
            Bell-McCaffrey degrees of freedom.
        """
        m_s = self.labelled.sum(axis=0)
        k_s = self.passed.sum(axis=0)
        used = m_s > 0
        safe = np.where(used, m_s, 1.0)
        r = k_s / safe
        theta = float((r * self.weights)[used].sum())
        share = self.labelled / safe  # m_gs / m_s
        room = 1.0 - share
        a = np.divide(1.0, np.sqrt(room), out=np.zeros_like(room), where=room > 1e-12)
        v = np.where(used, a * self.weights / safe, 0.0)  # (G, S) weight of a residual sum
        resid = self.passed - r * self.labelled
        se = float(np.sqrt(((v * resid).sum(axis=1) ** 2).sum()))
        # G'G = D - sum_s c_s c_s' / m_s with D = diag(sum_s v_gs^2 m_gs), c_s = v_s * m_s.
        d = (v**2 * self.labelled).sum(axis=1)
        c = v * self.labelled
        inv_m = np.where(used, 1.0 / safe, 0.0)
        trace = float(d.sum() - ((c**2).sum(axis=0) * inv_m).sum())
        cross = c.T @ c  # (S, S) inner products c_s . c_t
        frob = float(
            (d**2).sum()
            - 2.0 * ((d[:, None] * c**2).sum(axis=0) * inv_m).sum()
            + ((cross**2) * np.outer(inv_m, inv_m)).sum()
        )
        df = trace**2 / frob if frob > 0 else float(self.n_documents - 1)
        q = float(student_t.ppf(0.5 + confidence / 2.0, max(df, 1.0)))
        return theta - q * se, theta + q * se, se, df

    def bootstrap_t(
        self, *, confidence: float, rng: np.random.Generator, n_boot: int = 2000
    ) -> tuple[float, float, float, int]:
        """Studentised document bootstrap interval (each replicate studentised by its CR2 SE).

        CR2 rather than CR1 as the studentising variance: CR2 is unbiased under a homoskedastic
        working model whatever the documents' sizes (Bell & McCaffrey 2002), where the single
        CR1 factor ``G/(G-1)`` is not, so the headline standard error is the less biased one.

        Args:
            confidence: Two-sided confidence level.
            rng: Random generator.
            n_boot: Replicates.

        Returns:
            ``(low, high, se, n_undefined)``: bounds (unclipped), the CR2 standard error of the
            data, and how many replicates were undefined and dropped.
        """
        theta, var = self.estimate_and_variance(bias_reduced=True)
        th, se = float(theta[0]), float(np.sqrt(var[0]))
        draws = bootstrap_weights(self.n_documents, n_boot=n_boot, rng=rng)
        t_b, v_b = self.estimate_and_variance(draws.astype(float), bias_reduced=True)
        ok = np.isfinite(t_b) & (v_b > 0)
        stats = (t_b[ok] - th) / np.sqrt(v_b[ok])
        alpha = 1.0 - confidence
        q_lo, q_hi = np.quantile(stats, [alpha / 2.0, 1.0 - alpha / 2.0])
        return th - q_hi * se, th - q_lo * se, se, int((~ok).sum())


def document_counts(
    h: npt.NDArray[np.int8],
    sl: npt.NDArray[np.int8],
    docs: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64],
) -> DocumentCounts:
    """Reduce labelled rows to per-document, per-stratum counts.

    Args:
        h: Human verdict codes of the labelled rows.
        sl: Stratum codes of the labelled rows (indices into ``weights``).
        docs: Integer document code per labelled row.
        weights: Population share of each stratum (0 for a stratum left out).

    Returns:
        A :class:`DocumentCounts` over the documents that hold a decided label.
    """
    decided = h >= 0
    y = (h[decided] == PASS).astype(float)
    s = sl[decided].astype(np.int64)
    w = np.asarray(weights, dtype=float)
    n_strata = w.shape[0]
    _, g = np.unique(docs[decided], return_inverse=True)
    n_groups = int(g.max()) + 1 if g.size else 0
    cells = g * n_strata + s
    per_m = np.bincount(cells, minlength=n_groups * n_strata).reshape(
        n_groups, n_strata).astype(float)
    per_k: npt.NDArray[np.float64] = np.asarray(
        np.bincount(cells, weights=y, minlength=n_groups * n_strata).reshape(n_groups, n_strata),
        dtype=float,
    )
    m, k = per_m.sum(axis=0), per_k.sum(axis=0)
    r = np.divide(k, m, out=np.zeros(n_strata), where=m > 0)
    resid2 = np.bincount(s, weights=(y - r[s]) ** 2, minlength=n_strata)
    denom = m * (m - 1.0)
    v_row = float(np.divide(w**2 * resid2, denom, out=np.zeros(n_strata), where=denom > 0).sum())
    return DocumentCounts(per_m, per_k, w, v_row)
