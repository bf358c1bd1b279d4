"""Comparing two versions of a system judged on the same rows: paired corrected difference.

A baseline and a candidate (two versions of a RAG system, say) answer the same questions and
one calibrated judge scores both. The question is whether the *true* pass rate moved, so the
judge's errors must be corrected (Rogan-Gladen, as in :mod:`.pass_rate`) and the pairing
used (same rows, so most row-to-row noise cancels).

With sensitivity ``q1``, specificity ``q0`` and Youden index ``J = q0 + q1 - 1``, the judge's
pass rates ``p_b``, ``p_c`` and the true pass rates satisfy ``p = J theta + (1 - q0)``, so

    delta = theta_c - theta_b = (p_c - p_b) / J.

The specificity offset cancels; the judge's uncertainty enters only through ``J``. The
numerator ``d = p_c - p_b`` is the mean per-row change of the judge verdict, estimated on the
paired rows (its variance comes from the discordant rows, as in McNemar's test); ``J`` is
estimated on the separate calibration rows, so the two are independent. The interval is
Fieller's (1954) interval for the ratio ``d / J``:

    {delta : (d - delta J)^2 <= z^2 (Var d + delta^2 Var J)},

which is exact for normal ``(d, J)`` and, unlike a delta-method interval, follows the skew of a
ratio whose denominator is uncertain. At ``delta = 0`` the calibration term vanishes: whether the
version changed anything is decided by the paired rows alone (the test is the Wald form of
McNemar's), and the calibration uncertainty widens the interval only in proportion to the size
of the change. When ``J`` is not significantly above zero (``J^2 <= z^2 Var J``) the set is
unbounded: the size of the change is not identified and the result is flagged uninformative
with the interval widened to [-1, 1].

Small-sample adjustments: the paired proportions get Agresti & Min's (2005) 0.5 per cell, the
calibration rates Lee et al.'s (2025) +1/+2 (Lang & Reiczigel 2014). When rows share a source
document, ``Var d`` is multiplied by the design effect (cluster-robust over row-level variance,
at least 1; Rao & Scott 1992), because rows of one document fail together.

References:
    Fieller, E. C. (1954). Some problems in interval estimation. JRSS-B 16(2), 175-185.
    McNemar, Q. (1947). Note on the sampling error of the difference between correlated
    proportions or percentages. Psychometrika 12, 153-157.
    Agresti, A. & Min, Y. (2005). Simple improved confidence intervals for comparing matched
    proportions. Statistics in Medicine 24, 729-740.
    Durkalski, V. L., Palesch, Y. Y., Lipsitz, S. R. & Rust, P. F. (2003). Analysis of
    clustered matched-pair data. Statistics in Medicine 22(15), 2417-2428.
    Rao, J. N. K. & Scott, A. J. (1992). A simple method for the analysis of clustered binary
    data. Biometrics 48(2), 577-585.
    Lee, C. et al. (2025). How to correctly report LLM-as-a-judge evaluations. arXiv:2511.21140.
    Rogan, W. J. & Gladen, B. (1978). Estimating prevalence from the results of a screening
    test. Am. J. Epidemiology 107(1), 71-76.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import chi2
from statsmodels.stats.contingency_tables import mcnemar as _sm_mcnemar

from ._results import (
    CalibrationInputError,
    PassRateEstimate,
    _Claims,
    _Interval,
    _refused,
    _ToDict,
    clip01,
)
from ._verdicts import FAIL, PASS, PerRow, normalize_verdicts
from .pass_rate import CalibrationCounts, estimate_pass_rate
from .rates import ConfusionMatrix, check_confidence, z_value
from .resampling import group_codes

__all__ = [
    "DIFFERENCE_ASSUMPTION",
    "DifferenceEstimate",
    "JudgeErrorRates",
    "PairAlignment",
    "PairedComparison",
    "PairedTable",
    "align_pairs",
    "paired_difference",
    "paired_table",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})

DIFFERENCE_ASSUMPTION = (
    "one judge config scored both versions; its sensitivity and specificity on the "
    "calibration rows hold for the answers of both versions (their pass rates may differ from "
    "the calibration rows' and from each other); the calibration rows are not the compared rows"
)


@dataclass(frozen=True)
class JudgeErrorRates(_ToDict):
    """The judge's sensitivity and specificity with their sampling covariance.

    Build it with :meth:`from_confusion` from calibration counts, or directly from another
    estimator's output (e.g. verdict-stratified labelling, where the two rates are correlated).

    Attributes:
        sensitivity: ``q1 = P(judge pass | truly pass)``.
        specificity: ``q0 = P(judge fail | truly fail)``.
        var_sensitivity: Sampling variance of ``sensitivity``.
        var_specificity: Sampling variance of ``specificity``.
        covariance: Covariance of the two estimates (0 when estimated on disjoint rows).
        n_labelled: Labelled rows behind the estimates.
        method: How they were estimated (e.g. ``"agresti-coull"`` for Lee's +1/+2).
    """

    sensitivity: float
    specificity: float
    var_sensitivity: float
    var_specificity: float
    covariance: float = 0.0
    n_labelled: int = 0
    method: str = "given"

    def __post_init__(self) -> None:
        """Validate ranges."""
        for name in ("sensitivity", "specificity"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise CalibrationInputError(f"{name} must be in [0, 1], got {value}")
        if self.var_sensitivity < 0 or self.var_specificity < 0:
            raise CalibrationInputError("variances must be non-negative")

    @property
    def youden(self) -> float:
        """Youden index ``J = sensitivity + specificity - 1``."""
        return self.sensitivity + self.specificity - 1.0

    @property
    def var_youden(self) -> float:
        """``Var J = Var q1 + Var q0 + 2 Cov(q1, q0)`` (never negative)."""
        return max(0.0, self.var_sensitivity + self.var_specificity + 2.0 * self.covariance)

    @classmethod
    def from_confusion(
        cls, confusion: ConfusionMatrix, *, adjusted: bool = True
    ) -> JudgeErrorRates:
        """Rates from calibration counts (rows drawn at random within each human class).

        Args:
            confusion: Judge-vs-human counts on the calibration rows.
            adjusted: Lee et al.'s (2025) +1 success / +2 trials per class (the
                Lang-Reiczigel adjusted Wald), which keeps the variance positive at 0 or 100 %.
                ``False`` gives the raw rates and binomial variances.

        Returns:
            The rates; the covariance is 0 (the two classes are disjoint rows).

        Raises:
            CalibrationInputError: a class without rows (``m0 = 0`` or ``m1 = 0``).
        """
        m1, m0 = confusion.m1, confusion.m0
        if m0 == 0 or m1 == 0:
            raise CalibrationInputError(
                f"no human-{'failing' if m0 == 0 else 'passing'} calibration rows (m0={m0}, "
                f"m1={m1}): label at least one failing and one passing row"
            )
        add = 1.0 if adjusted else 0.0
        q1 = (confusion.tp + add) / (m1 + 2 * add)
        q0 = (confusion.tn + add) / (m0 + 2 * add)
        return cls(
            sensitivity=q1,
            specificity=q0,
            var_sensitivity=q1 * (1 - q1) / (m1 + 2 * add),
            var_specificity=q0 * (1 - q0) / (m0 + 2 * add),
            covariance=0.0,
            n_labelled=confusion.n,
            method="agresti-coull" if adjusted else "binomial",
        )


@dataclass(frozen=True)
class PairedTable(_ToDict):
    """Joint judge verdicts of baseline and candidate on the paired rows.

    Attributes:
        both_pass: Rows the judge passed in both versions.
        baseline_only: Rows passed for the baseline only (a loss).
        candidate_only: Rows passed for the candidate only (a gain).
        both_fail: Rows failed in both.
        n_excluded: Paired rows left out: either verdict not pass/fail (unscored, unsure).
    """

    both_pass: int
    baseline_only: int
    candidate_only: int
    both_fail: int
    n_excluded: int = 0

    @property
    def n(self) -> int:
        """Rows with a pass/fail verdict in both versions."""
        return self.both_pass + self.baseline_only + self.candidate_only + self.both_fail

    @property
    def n_discordant(self) -> int:
        """Rows whose verdict changed between the versions."""
        return self.baseline_only + self.candidate_only

    def as_array(self) -> npt.NDArray[np.int64]:
        """``[[both_pass, baseline_only], [candidate_only, both_fail]]`` (rows: baseline)."""
        return np.array([[self.both_pass, self.baseline_only],
                         [self.candidate_only, self.both_fail]], dtype=np.int64)


@dataclass(frozen=True)
class DifferenceEstimate(_ToDict, _Interval, _Claims):
    """The corrected pass-rate difference ``candidate - baseline`` with its interval.

    Attributes:
        estimate: ``(p_c - p_b) / J`` (Rogan-Gladen difference), or ``None`` when refused.
        low: Lower Fieller bound (clipped to [-1, 1]), or ``None``.
        high: Upper bound, or ``None``.
        n: Paired rows the difference rests on.
        method: ``"fieller-paired"`` (or ``"fieller-paired-clustered"``).
        confidence: Nominal two-sided level.
        n_labelled: Calibration rows behind ``J``.
        observed: Uncorrected difference of judge pass rates ``p_c - p_b``.
        se: Delta-method standard error (for display; the interval is Fieller's).
        uninformative: The judge's Youden index is not significantly above zero: the change's
            size is not identified; interval widened to [-1, 1].
        refused: ``True`` when no difference can be estimated; see ``reason``.
        reason: Why it was refused.
        assumption: When the interval is valid.
        warnings: Named caveats.
        params: Intermediate quantities (``d``, ``var_d``, ``youden``, ``var_youden``,
            ``design_effect``, ...).
    """

    n: int
    method: str
    confidence: float
    n_labelled: int = 0
    observed: float | None = None
    se: float | None = None
    uninformative: bool = False
    refused: bool = False
    reason: str | None = None
    assumption: str = DIFFERENCE_ASSUMPTION
    warnings: tuple[str, ...] = ()
    params: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)

    def _interval_n_reason(self) -> tuple[int, str | None]:
        # As for pass rates: an uninformative difference keeps its numbers (widened to
        # [-1, 1]) and the reason says why it must not be read as a claim.
        reason = self.reason
        if reason is None and self.uninformative:
            reason = ("uninformative: the judge is not shown to be better than chance, so the "
                      "size of the change is not identified (interval widened to [-1, 1])")
        return self.n, reason


@dataclass(frozen=True)
class PairedComparison(_ToDict):
    """Baseline vs candidate through one calibrated judge (see :func:`paired_difference`).

    Attributes:
        baseline: Corrected pass rate of the baseline on the paired rows.
        candidate: Corrected pass rate of the candidate on the paired rows.
        difference: ``candidate - baseline`` with the paired Fieller interval.
        table: Joint verdict table.
        mcnemar_p: Two-sided McNemar p-value on the discordant rows (``None`` without any
            row): exact, or with documents Durkalski et al.'s (2003) clustered version. It
            tests "the judge's pass rate did not change", which under the shared-judge
            assumption is "the true pass rate did not change".
        mcnemar_p_exact: The exact McNemar p-value treating rows as independent (statsmodels
            ``mcnemar(exact=True)``); equal to ``mcnemar_p`` without documents.
        mcnemar_method: ``"exact"`` or ``"durkalski-clustered"``.
        n_documents: Documents when rows are clustered, else ``None``.
        design_effect: Variance inflation applied for clustering (1 without documents).
        segments: Per-segment comparisons (empty without segments); each segment uses the
            same judge error rates.
        segment: This comparison's segment label (``None`` for the whole set).
        warnings: Named caveats.
    """

    baseline: PassRateEstimate
    candidate: PassRateEstimate
    difference: DifferenceEstimate
    table: PairedTable
    mcnemar_p: float | None
    mcnemar_p_exact: float | None = None
    mcnemar_method: str = "exact"
    n_documents: int | None = None
    design_effect: float = 1.0
    segments: tuple[PairedComparison, ...] = ()
    segment: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def n_paired(self) -> int:
        """Paired rows with a pass/fail verdict in both versions."""
        return self.table.n


@dataclass(frozen=True)
class PairAlignment(_ToDict):
    """How two id lists pair up (:func:`align_pairs`).

    Attributes:
        baseline_index: Positions in the baseline of the paired rows.
        candidate_index: Positions in the candidate of the same rows, in the same order.
        n_baseline_only: Baseline ids absent from the candidate (excluded).
        n_candidate_only: Candidate ids absent from the baseline (excluded).
    """

    baseline_index: npt.NDArray[np.int64]
    candidate_index: npt.NDArray[np.int64]
    n_baseline_only: int
    n_candidate_only: int

    @property
    def n_paired(self) -> int:
        """Ids present on both sides."""
        return int(self.baseline_index.shape[0])


def align_pairs(
    baseline_ids: PerRow, candidate_ids: PerRow
) -> PairAlignment:
    """Pair rows by id; rows present on one side only are counted, never silently dropped.

    Args:
        baseline_ids: One id per baseline row (unique).
        candidate_ids: One id per candidate row (unique).

    Returns:
        A :class:`PairAlignment` in baseline order.

    Raises:
        CalibrationInputError: duplicated ids on either side.

    Examples:
        >>> a = align_pairs(["q1", "q2", "q3"], ["q3", "q1", "q9"])
        >>> a.baseline_index.tolist(), a.candidate_index.tolist(), a.n_baseline_only
        ([0, 2], [1, 0], 1)
    """
    b = np.asarray(baseline_ids).astype(str)
    c = np.asarray(candidate_ids).astype(str)
    for name, ids in (("baseline", b), ("candidate", c)):
        if ids.ndim != 1:
            raise CalibrationInputError(f"{name} ids must be 1-D")
        uniq, counts = np.unique(ids, return_counts=True)
        if (counts > 1).any():
            raise CalibrationInputError(
                f"{name} ids must be unique; repeated: {uniq[counts > 1][:5].tolist()}"
            )
    common, b_idx, c_idx = np.intersect1d(b, c, assume_unique=True, return_indices=True)
    order = np.argsort(b_idx, kind="stable")
    return PairAlignment(
        baseline_index=b_idx[order].astype(np.int64),
        candidate_index=c_idx[order].astype(np.int64),
        n_baseline_only=int(b.shape[0] - common.shape[0]),
        n_candidate_only=int(c.shape[0] - common.shape[0]),
    )


def paired_table(
    baseline: PerRow, candidate: PerRow
) -> PairedTable:
    """Joint verdict table of two aligned verdict arrays.

    Args:
        baseline: Judge verdicts on the baseline's answers.
        candidate: Judge verdicts on the candidate's answers to the same rows, same order.

    Returns:
        A :class:`PairedTable`; rows without pass/fail on both sides are counted as excluded.

    Examples:
        >>> paired_table(["pass", "pass", "fail", "fail", None], [1, 0, 1, 1, 1]).to_dict()
        {'both_pass': 1, 'baseline_only': 1, 'candidate_only': 2, 'both_fail': 0, 'n_excluded': 1}
    """
    b, c = _aligned_codes(baseline, candidate)
    return _table(b, c)


def _aligned_codes(
    baseline: PerRow, candidate: PerRow
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]:
    b = normalize_verdicts(baseline)
    c = normalize_verdicts(candidate)
    if b.shape != c.shape:
        raise CalibrationInputError(
            f"baseline and candidate must be aligned: {b.shape[0]} vs {c.shape[0]} rows "
            "(pair them by id first, e.g. with align_pairs)"
        )
    return b, c


def _table(b: npt.NDArray[np.int8], c: npt.NDArray[np.int8]) -> PairedTable:
    ok = ((b == PASS) | (b == FAIL)) & ((c == PASS) | (c == FAIL))
    cell = 2 * b[ok].astype(np.int64) + c[ok]  # 3 = both pass, 2 = baseline only, 1, 0
    counts = np.bincount(cell, minlength=4)
    return PairedTable(
        both_pass=int(counts[3]),
        baseline_only=int(counts[2]),
        candidate_only=int(counts[1]),
        both_fail=int(counts[0]),
        n_excluded=int(b.shape[0] - ok.sum()),
    )


def _design_effect(
    b: npt.NDArray[np.int8], c: npt.NDArray[np.int8], groups: npt.NDArray[np.int64]
) -> tuple[float, int]:
    """Cluster-robust over row-level variance of the mean verdict change (at least 1)."""
    ok = ((b == PASS) | (b == FAIL)) & ((c == PASS) | (c == FAIL))
    change = c[ok].astype(float) - b[ok].astype(float)
    g = groups[ok]
    n = change.shape[0]
    uniq, inv = np.unique(g, return_inverse=True)
    n_docs = int(uniq.shape[0])
    if n < 2 or n_docs < 2:
        return 1.0, n_docs
    resid = change - change.mean()
    row_var = n / (n - 1) * float(np.sum(resid**2))
    sums = np.bincount(inv, weights=resid, minlength=n_docs)
    cluster_var = n_docs / (n_docs - 1) * float(np.sum(sums**2))
    if row_var <= 0.0:
        return 1.0, n_docs
    # Truncated at 1: a noisy estimate below 1 from few documents must not narrow the interval.
    return max(1.0, cluster_var / row_var), n_docs


def _clustered_mcnemar_p(
    b: npt.NDArray[np.int8], c: npt.NDArray[np.int8], groups: npt.NDArray[np.int64]
) -> float:
    """Durkalski et al. (2003) McNemar test for clustered pairs (chi-square, 1 df).

    ``X = (sum_g s_g)^2 / sum_g s_g^2`` with ``s_g`` the document's gains minus losses; one row
    per document gives McNemar's chi-square ``(n01 - n10)^2 / (n01 + n10)``.
    """
    ok = ((b == PASS) | (b == FAIL)) & ((c == PASS) | (c == FAIL))
    change = c[ok].astype(float) - b[ok].astype(float)
    _, inv = np.unique(groups[ok], return_inverse=True)
    per_doc = np.bincount(inv, weights=change)
    denominator = float(np.sum(per_doc**2))
    if denominator == 0.0:
        return 1.0
    return float(chi2.sf(float(np.sum(per_doc)) ** 2 / denominator, 1))


def _fieller(
    d: float, var_d: float, j: float, var_j: float, z: float
) -> tuple[float, float] | None:
    """Fieller's interval for ``d / j``; ``None`` when ``j`` is not significantly non-zero."""
    a = j * j - z * z * var_j
    if a <= 0.0:
        return None
    disc = z * z * (d * d * var_j + j * j * var_d - z * z * var_j * var_d)
    root = math.sqrt(max(0.0, disc))
    return (d * j - root) / a, (d * j + root) / a


def _rates(
    table: PairedTable,
    calibration: ConfusionMatrix | JudgeErrorRates,
    conf: float,
) -> tuple[PassRateEstimate, PassRateEstimate]:
    k_b = table.both_pass + table.baseline_only
    k_c = table.both_pass + table.candidate_only
    if isinstance(calibration, ConfusionMatrix):
        return tuple(  # type: ignore[return-value]
            estimate_pass_rate(CalibrationCounts(calibration, k, table.n), method="lee",
                               confidence=conf)
            for k in (k_b, k_c)
        )
    return _rate_from_error_rates(k_b, table.n, calibration, conf), _rate_from_error_rates(
        k_c, table.n, calibration, conf
    )


def _rate_from_error_rates(
    k: int, n: int, rates: JudgeErrorRates, conf: float
) -> PassRateEstimate:
    """Rogan-Gladen with a delta-method Wald interval from given rates and covariance."""
    assumption = DIFFERENCE_ASSUMPTION
    j = rates.youden
    if n == 0 or j <= 0.0:
        why = "no paired row" if n == 0 else f"judge no better than chance (J = {j:.3f} <= 0)"
        return _refused(PassRateEstimate, why, method="rogan-gladen", confidence=conf,
                        n_labelled=rates.n_labelled, n_target=n, assumption=assumption)
    p = k / n
    theta_raw = (p + rates.specificity - 1.0) / j
    theta = clip01(theta_raw)
    var = (p * (1 - p) / n + (1 - theta) ** 2 * rates.var_specificity
           + theta**2 * rates.var_sensitivity
           - 2 * theta * (1 - theta) * rates.covariance) / j**2
    se = math.sqrt(max(0.0, var))
    z = z_value(conf)
    raw_low, raw_high = theta_raw - z * se, theta_raw + z * se
    return PassRateEstimate.clipped_to_unit(
        "rogan-gladen", conf, theta_raw, (raw_low, raw_high), point_counts=True,
        n_labelled=rates.n_labelled, n_target=n, center=theta_raw, se=se, assumption=assumption,
    )  # fmt: skip


def _difference(
    table: PairedTable,
    rates: JudgeErrorRates,
    j_point: float,
    *,
    design_effect: float,
    clustered: bool,
    conf: float,
) -> DifferenceEstimate:
    n = table.n
    method = "fieller-paired-clustered" if clustered else "fieller-paired"
    base = {"n": n, "method": method, "confidence": conf, "n_labelled": rates.n_labelled}
    if n == 0:
        return _refused(DifferenceEstimate, "no row with a pass/fail verdict in both versions",
                        **base)
    observed = (table.candidate_only - table.baseline_only) / n
    j_int, var_j = rates.youden, rates.var_youden
    if j_point <= 0.0 or j_int <= 0.0:
        return _refused(
            DifferenceEstimate,
            f"judge no better than chance on the calibration rows (sensitivity + specificity - 1 "
            f"= {min(j_point, j_int):.3f} <= 0): the correction is undefined",
            observed=observed, **base)  # fmt: skip
    # Agresti-Min: 0.5 added to every cell of the paired table.
    nt = n + 2.0
    gain, loss = (table.candidate_only + 0.5) / nt, (table.baseline_only + 0.5) / nt
    d = gain - loss
    var_d = design_effect * max(0.0, gain + loss - d * d) / nt
    z = z_value(conf)
    estimate = observed / j_point
    se = math.sqrt(var_d + (d / j_int) ** 2 * var_j) / j_int
    params = {"d": observed, "d_adjusted": d, "var_d": var_d, "youden": j_point,
              "youden_adjusted": j_int, "var_youden": var_j, "design_effect": design_effect,
              "z": z}
    bounds = _fieller(d, var_d, j_int, var_j, z)
    warnings: list[str] = []
    if bounds is None:
        warnings.append(
            f"uninformative: the judge's Youden index {j_int:.3f} is not significantly above "
            f"zero (SE {math.sqrt(var_j):.3f}), so the size of the change is not identified; "
            "interval widened to [-1, 1] (the McNemar p-value still tests whether anything "
            "changed)"
        )
        return DifferenceEstimate(
            max(-1.0, min(1.0, estimate)), -1.0, 1.0, observed=observed, se=se,
            uninformative=True, warnings=tuple(warnings), params=MappingProxyType(params),
            **base)  # type: ignore[arg-type]
    low, high = bounds
    if estimate < -1.0 or estimate > 1.0 or low < -1.0 or high > 1.0:
        warnings.append(f"difference {estimate:.3f} [{low:.3f}, {high:.3f}] clipped to [-1, 1]")
    return DifferenceEstimate(
        max(-1.0, min(1.0, estimate)), max(-1.0, low), min(1.0, high), observed=observed,
        se=se, warnings=tuple(warnings), params=MappingProxyType(params),
        **base)  # type: ignore[arg-type]


def _agree_with_test(
    diff: DifferenceEstimate, pvalue: float | None, conf: float
) -> DifferenceEstimate:
    """Make the interval include 0 whenever McNemar's test does not reject "no change".

    At ``delta = 0`` the Fieller interval reduces to a Wald test on the paired rows, which can
    be slightly liberal with few discordant rows (about 5.3 % at a nominal 5 % in
    ``bench/coverage.py --block paired``); the exact test is not. Extending the interval to 0
    in that case keeps interval and test consistent and the regression gate conservative.
    """
    if not diff.claims or pvalue is None or pvalue < 1.0 - conf:
        return diff
    if diff.low is None or diff.high is None or diff.low <= 0.0 <= diff.high:
        return diff
    note = (f"interval extended to 0: McNemar's test (p = {pvalue:.3g}) does not reject 'no "
            f"change' at the {1 - conf:.0%} level")
    low, high = (0.0, diff.high) if diff.low > 0.0 else (diff.low, 0.0)
    return dataclasses.replace(diff, low=low, high=high, warnings=(*diff.warnings, note))


def _compare(
    b: npt.NDArray[np.int8],
    c: npt.NDArray[np.int8],
    groups: npt.NDArray[np.int64] | None,
    calibration: ConfusionMatrix | JudgeErrorRates,
    rates: JudgeErrorRates,
    j_point: float,
    conf: float,
    segment: str | None,
) -> PairedComparison:
    table = _table(b, c)
    deff, n_docs = (1.0, None) if groups is None else _design_effect(b, c, groups)
    baseline, candidate = _rates(table, calibration, conf)
    diff = _difference(table, rates, j_point, design_effect=deff, clustered=groups is not None,
                       conf=conf)
    exact_p = pvalue = None
    if table.n:
        exact_p = pvalue = float(_sm_mcnemar(table.as_array(), exact=True).pvalue)
        if groups is not None:
            pvalue = _clustered_mcnemar_p(b, c, groups)
    diff = _agree_with_test(diff, pvalue, conf)
    warnings = list(diff.warnings)
    if table.n_excluded:
        warnings.append(f"{table.n_excluded} paired rows excluded: unscored or unsure in at "
                        "least one version")
    for name, rate in (("baseline", baseline), ("candidate", candidate)):
        if rate.refused:
            warnings.append(f"{name} corrected pass rate refused: {rate.reason}")
    return PairedComparison(
        baseline=baseline, candidate=candidate, difference=diff, table=table,
        mcnemar_p=pvalue, mcnemar_p_exact=exact_p,
        mcnemar_method="exact" if groups is None else "durkalski-clustered",
        n_documents=n_docs, design_effect=deff, segment=segment, warnings=tuple(warnings),
    )


def paired_difference(
    baseline: PerRow, candidate: PerRow,
    *, calibration: ConfusionMatrix | JudgeErrorRates, documents: PerRow | None = None,
    segments: PerRow | None = None, confidence: float = 0.95, youden_point: float | None = None,
) -> PairedComparison:
    """Corrected pass rates of two versions on the same rows and their paired difference.

    Args:
        baseline: Judge verdicts on the baseline's answers (pass/fail/unsure/unscored, 1/0).
        candidate: Judge verdicts on the candidate's answers, aligned row by row with
            ``baseline`` (pair by id first with :func:`align_pairs`).
        calibration: The judge's calibration: counts on human-labelled rows (then the pass rates
            are Lee et al.'s and ``J`` uses their +1/+2 adjustment), or
            :class:`JudgeErrorRates` with a covariance from another estimator.
        documents: Source-document id per row; rows of one document are treated as a cluster.
        segments: Segment label per row; each segment is compared too (same error rates).
        confidence: Two-sided level of every interval.
        youden_point: The Youden index of the point estimate when ``calibration`` holds
            smoothed rates (the raw ``sensitivity + specificity - 1``); default: theirs.

    Returns:
        A :class:`PairedComparison`.

    Raises:
        CalibrationInputError: misaligned arrays, unknown verdicts, or calibration counts
            without a passing or a failing row.

    Examples:
        >>> cm = ConfusionMatrix(tp=85, fn=15, fp=25, tn=75)   # sens 0.85, spec 0.75
        >>> base = ["pass"] * 60 + ["fail"] * 40
        >>> cand = ["pass"] * 55 + ["fail"] * 5 + ["pass"] * 20 + ["fail"] * 20
        >>> r = paired_difference(base, cand, calibration=cm)
        >>> r.table.candidate_only, r.table.baseline_only, round(r.difference.estimate, 3)
        (20, 5, 0.25)
        >>> round(r.mcnemar_p, 4)
        0.0041
    """
    conf = check_confidence(confidence)
    b, c = _aligned_codes(baseline, candidate)
    n = b.shape[0]
    groups = None
    if documents is not None:
        docs = np.asarray(documents)
        if docs.shape != (n,):
            raise CalibrationInputError(f"documents must have one entry per row ({n})")
        groups = group_codes(docs)[0]
    if isinstance(calibration, ConfusionMatrix):
        rates = JudgeErrorRates.from_confusion(calibration, adjusted=True)
        j_point = calibration.tn / calibration.m0 + calibration.tp / calibration.m1 - 1.0
    else:
        rates = calibration
        j_point = calibration.youden if youden_point is None else youden_point
    whole = _compare(b, c, groups, calibration, rates, j_point, conf, None)
    if segments is None:
        return whole
    seg = np.asarray(segments)
    if seg.shape != (n,):
        raise CalibrationInputError(f"segments must have one entry per row ({n})")
    seg = seg.astype(str)
    per_segment = []
    for label in np.unique(seg):
        mask = seg == label
        per_segment.append(_compare(b[mask], c[mask], None if groups is None else groups[mask],
                                    calibration, rates, j_point, conf, str(label)))
    return PairedComparison(
        baseline=whole.baseline, candidate=whole.candidate, difference=whole.difference,
        table=whole.table, mcnemar_p=whole.mcnemar_p, mcnemar_p_exact=whole.mcnemar_p_exact,
        mcnemar_method=whole.mcnemar_method, n_documents=whole.n_documents,
        design_effect=whole.design_effect, segments=tuple(per_segment),
        warnings=(*whole.warnings, "segment intervals are per segment, not adjusted for "
                                   "multiplicity; every segment uses the same judge error "
                                   "rates"),
    )
