"""Does the correction transfer to the target? Segment-mix and segment-accuracy checks.

The Lee/Rogan-Gladen correction of another dataset assumes the judge's sensitivity and false
positive rate are the same on the target as on the calibration set. That holds when the judge
is equally accurate on every kind of row, or when both datasets hold the same mix of kinds. When
the judge's accuracy differs by segment *and* the target's segment mix differs, the pooled rates
are the wrong average for the target and the corrected pass rate misses (the Bramblepost demo:
sensitivity 0.11 to 1.00 across segments, a production week with more ``lookup`` rows).

* :func:`homogeneity_test` — chi-square test of a ``K x C`` table's rows, with a Monte Carlo
  exact p-value (tables drawn with the observed margins) when an expected count is below 5.
* :func:`segment_aware_pass_rate` — the correction done within each segment (verdict-reweighted
  Lee, :func:`~judges.calibration.transported_pass_rate`) and combined with the target's own
  segment shares ``pi_g``: ``theta = sum_g pi_g theta_g``, ``SE^2 = sum_g pi_g^2 SE_g^2``
  (segments are independent samples; ``pi_g`` is known exactly from the target). Segments with
  fewer than ``min_per_class`` human-pass or human-fail labels are pooled, a pooled group the
  correction still refuses is merged with the next smallest group (down to one group: the
  plain correction), and a group where the judge is no better than chance is bounded.
* :func:`transfer_diagnostics` — both tests, the per-segment rates with intervals, a warning in
  words when both differences hold, and the segment-aware correction.

References:
    Lee, C. et al. (2025). How to correctly report LLM-as-a-judge evaluations. arXiv:2511.21140.
    Cochran, W. G. (1977). Sampling Techniques, 3rd ed., ch. 5 (stratified estimation).
    Agresti, A. (2013). Categorical Data Analysis, 3rd ed., 3.5 (exact conditional tests).
    Pearl, J. & Bareinboim, E. (2014). External validity: from do-calculus to transportability
    across populations. Statistical Science 29(4), 579-595 (reweighting by the target's mix).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import chi2

from ._results import CalibrationInputError, Estimate, PassRateEstimate, _refused, _ToDict
from ._verdicts import FAIL, PASS, PerRow, normalize_verdicts
from .rates import check_confidence, z_value
from .strata import StratumCounts, _counts, _strata_from_codes
from .transport import _population_rates, transported_pass_rate_from_counts

__all__ = [
    "MIN_PER_CLASS",
    "MIX_DISTANCE",
    "HomogeneityTest",
    "SegmentTransfer",
    "TransferDiagnostics",
    "homogeneity_test",
    "segment_aware_pass_rate",
    "transfer_diagnostics",
]

#: Human-pass and human-fail labels a segment needs to be corrected on its own.
MIN_PER_CLASS = 5

#: A total-variation distance between the calibration set's and the target's segment mix at
#: least this large counts as a shift even when the mix test lacks the rows to show it: both
#: mixes are known from every row, and with segment-dependent accuracy a 0.05 shift already
#: moves the pooled error rates.
MIX_DISTANCE = 0.05

ASSUMPTION_SEGMENTS = (
    "within each segment (sparse segments pooled) the judge's error rates transfer from the "
    "calibration set to the target; the target's segment shares are known from its rows"
)


@dataclass(frozen=True)
class HomogeneityTest(_ToDict):
    """A test that the rows of a contingency table share one distribution.

    Attributes:
        statistic: Pearson's chi-square.
        df: Degrees of freedom ``(K - 1)(C - 1)`` over the rows and columns with data.
        p_value: Asymptotic chi-square p-value, or the Monte Carlo exact one (``method``).
        method: ``"chi-square"`` or ``"Monte Carlo exact (N tables)"``; ``"not testable"``
            when fewer than two rows or columns hold data (``p_value`` 1).
        n: Observations in the table.
    """

    statistic: float
    df: int
    p_value: float
    method: str
    n: int


def _pearson(tables: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Pearson chi-square of each ``(..., K, C)`` table (0 over empty expected cells)."""
    n = tables.sum(axis=(-2, -1), keepdims=True)
    expected = tables.sum(axis=-1, keepdims=True) * tables.sum(axis=-2, keepdims=True) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        cell = np.where(expected > 0, (tables - expected) ** 2 / expected, 0.0)
    out: npt.NDArray[np.float64] = cell.sum(axis=(-2, -1))
    return out


def homogeneity_test(
    table: npt.ArrayLike, *, rng: np.random.Generator | None = None, n_draws: int = 4000
) -> HomogeneityTest:
    """Chi-square test that every row of ``table`` has the same column distribution.

    With an expected count below 5 the asymptotic p-value is unreliable; the p-value is then the
    share of ``n_draws`` tables with the observed margins (drawn column by column from the
    multivariate hypergeometric distribution, the exact conditional null) whose statistic is at
    least the observed one, with the usual ``+1`` so it is never 0 (Agresti 2013, 3.5).

    Args:
        table: ``K x C`` non-negative counts (rows: segments; columns: outcomes or datasets).
        rng: Random generator of the exact draws (default: seeded from the table).
        n_draws: Monte Carlo tables.

    Returns:
        A :class:`HomogeneityTest`.

    Examples:
        >>> r = homogeneity_test([[30, 10], [10, 30]])
        >>> (round(r.statistic, 1), r.df, r.p_value < 0.001, r.method)
        (20.0, 1, True, 'chi-square')
    """
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or np.any(t < 0) or not np.all(np.isfinite(t)):
        raise CalibrationInputError("table must be a 2-D array of non-negative counts")
    t = t[t.sum(axis=1) > 0][:, t.sum(axis=0) > 0]
    n = int(t.sum())
    if t.shape[0] < 2 or t.shape[1] < 2:
        return HomogeneityTest(0.0, 0, 1.0, "not testable", n)
    stat = float(_pearson(t))
    df = (t.shape[0] - 1) * (t.shape[1] - 1)
    expected = t.sum(axis=1, keepdims=True) * t.sum(axis=0, keepdims=True) / n
    if expected.min() >= 5.0:
        return HomogeneityTest(stat, df, float(chi2.sf(stat, df)), "chi-square", n)
    gen = rng if rng is not None else np.random.default_rng([int(v) for v in t.ravel()])
    rows = t.sum(axis=1).astype(np.int64)
    cols = t.sum(axis=0).astype(np.int64)
    draws = np.empty((n_draws, *t.shape))
    left = np.tile(rows, (n_draws, 1))
    for c in range(t.shape[1] - 1):
        # Column c takes cols[c] of the rows' remaining observations, without replacement.
        take = (
            gen.multivariate_hypergeometric(rows, int(cols[0]), size=n_draws)
            if c == 0  # every draw starts from the same margins: one vectorised call
            else np.stack([gen.multivariate_hypergeometric(r, int(cols[c])) for r in left])
        )
        draws[:, :, c] = take
        left = left - take
    draws[:, :, -1] = left
    extreme = int((_pearson(draws) >= stat - 1e-9).sum())
    p = (extreme + 1) / (n_draws + 1)
    return HomogeneityTest(stat, df, p, f"Monte Carlo exact ({n_draws} tables)", n)


@dataclass(frozen=True)
class SegmentTransfer(_ToDict):
    """One segment of the transfer check.

    Attributes:
        segment: Segment label.
        n_labelled: Labelled calibration rows with a human pass/fail verdict.
        calibration_share: Share of the calibration set's rows in this segment (the rows of the
            mix test).
        target_share: Share of the target's rows in this segment (the rows of the mix test).
        sensitivity: Verdict-reweighted ``P(judge pass | human pass)`` in the segment.
        fpr: Verdict-reweighted ``P(judge pass | human fail)`` in the segment.
        group: The correction group the segment belongs to (itself, or a pooled group).
    """

    segment: str
    n_labelled: int
    calibration_share: float
    target_share: float
    sensitivity: Estimate
    fpr: Estimate
    group: str


@dataclass(frozen=True)
class TransferDiagnostics(_ToDict):
    """Whether the correction's transfer assumption is credible, and a segment-aware fix.

    Attributes:
        mix_test: Segment counts of the calibration set vs the target.
        mix_distance: Total variation distance between the two segment mixes.
        sensitivity_test: Judge pass vs not, by segment, among human-pass labelled rows.
        fpr_test: Judge pass vs not, by segment, among human-fail labelled rows.
        mix_differs: ``mix_test.p_value < alpha``.
        accuracy_differs: either accuracy test below ``alpha / 2`` (Bonferroni over the two).
        segments: Per-segment shares and rates.
        segment_aware: The segment-reweighted corrected pass rate.
        warning: The warning in words when both differences hold, else ``None``.
        alpha: Significance level of the checks.
    """

    mix_test: HomogeneityTest
    mix_distance: float
    sensitivity_test: HomogeneityTest
    fpr_test: HomogeneityTest
    mix_differs: bool
    accuracy_differs: bool
    segments: tuple[SegmentTransfer, ...]
    segment_aware: PassRateEstimate
    warning: str | None
    alpha: float


@dataclass(frozen=True)
class _Rows:
    """One row set: the judge's verdict code and the integer segment code of each row."""

    judge: npt.NDArray[np.int8]
    segment: npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Data:
    """Segment names (indexed by the codes), human verdict codes and the three row sets."""

    names: tuple[str, ...]
    human: npt.NDArray[np.int8]
    labelled: _Rows
    calibration: _Rows
    target: _Rows


def _prepare(
    human: PerRow,
    *, labelled: tuple[PerRow, PerRow], calibration: tuple[PerRow, PerRow],
    target: tuple[PerRow, PerRow],
) -> _Data:
    """Verdict codes of ``human`` and of each row set ``(judge verdicts, segments)``.

    Segments are coded over the three row sets together, so a code names one segment in all.
    """
    h = normalize_verdicts(human)
    row_sets = {"labelled": labelled, "calibration": calibration, "target": target}
    codes = {name: normalize_verdicts(judge) for name, (judge, _) in row_sets.items()}
    segs = {name: np.asarray(seg, dtype=object).astype(str) for name, (_, seg) in row_sets.items()}
    for name, seg in segs.items():
        if seg.shape != codes[name].shape:
            raise CalibrationInputError(
                f"segments_{name} must have one entry per {name} row ({codes[name].shape[0]}), "
                f"got {seg.shape[0]}"
            )
    if h.shape != codes["labelled"].shape:
        raise CalibrationInputError("human and judge_labelled must be aligned")
    names, inverse = np.unique(np.concatenate(list(segs.values())), return_inverse=True)
    cuts = np.cumsum([seg.shape[0] for seg in segs.values()])
    rows = {name: _Rows(codes[name], seg_codes) for name, seg_codes in
            zip(segs, np.split(inverse.astype(np.int64), cuts[:-1]), strict=True)}  # fmt: skip
    return _Data(names=tuple(str(x) for x in names), human=h, labelled=rows["labelled"],
                 calibration=rows["calibration"], target=rows["target"])  # fmt: skip


_Group = tuple[str, list[int], PassRateEstimate]


def _group_counts(
    d: _Data, members: npt.NDArray[np.bool_]
) -> tuple[StratumCounts, tuple[int, int, int]]:
    lab, cal, tgt = (members[rows.segment] for rows in (d.labelled, d.calibration, d.target))
    counts = _counts(d.human[lab], _strata_from_codes(d.labelled.judge[lab]),
                     _strata_from_codes(d.calibration.judge[cal]))  # fmt: skip
    t = np.bincount(_strata_from_codes(d.target.judge[tgt]), minlength=3)
    return counts, (int(t[0]), int(t[1]), int(t[2]))


def _usable(r: PassRateEstimate) -> bool:
    return not r.refused and not r.uninformative and r.se is not None and r.center is not None


def _groups(d: _Data, *, min_per_class: int, conf: float) -> list[_Group]:
    """Correction groups: segments with enough labels alone, the rest pooled, then merged."""
    k = len(d.names)
    decided = d.human >= 0
    passes = np.bincount(d.labelled.segment[decided & (d.human == PASS)], minlength=k)
    fails = np.bincount(d.labelled.segment[decided & (d.human == FAIL)], minlength=k)
    in_target = np.bincount(d.target.segment, minlength=k) > 0
    rich = [g for g in range(k) if min(passes[g], fails[g]) >= min_per_class]
    sparse = [g for g in range(k) if g not in rich]
    groups = [[g] for g in rich] + ([sparse] if sparse else [])

    def correct(members: list[int]) -> PassRateEstimate:
        mask = np.zeros(k, dtype=bool)
        mask[members] = True
        counts, target = _group_counts(d, mask)
        if sum(target) == 0:  # no target rows: nothing to correct, keep it as a placeholder
            return _refused(PassRateEstimate, "no target rows", method="lee_stratified",
                            confidence=conf, n_labelled=0, n_target=0)  # fmt: skip
        return transported_pass_rate_from_counts(counts, target, confidence=conf)

    while True:
        results = [correct(m) for m in groups]
        bad = [i for i, (m, r) in enumerate(zip(groups, results, strict=True))
               if r.refused and in_target[m].any()]  # fmt: skip
        if not bad or len(groups) == 1:
            break
        # Merge the refused group with the fewest labels into the next smallest group.
        size = [int(passes[m].sum() + fails[m].sum()) for m in groups]
        worst = min(bad, key=lambda i: size[i])
        partner = min((i for i in range(len(groups)) if i != worst), key=lambda i: size[i])
        merged = groups[worst] + groups[partner]
        groups = [m for i, m in enumerate(groups) if i not in (worst, partner)] + [merged]
    out = []
    for members, r in zip(groups, results, strict=True):
        label = d.names[members[0]] if len(members) == 1 else (
            "pooled: " + ", ".join(sorted(d.names[g] for g in members)))  # fmt: skip
        out.append((label, members, r))
    return out


def _combine(d: _Data, groups: list[_Group], conf: float) -> PassRateEstimate:
    method = "lee_segment_reweighted"
    n_t = d.target.judge.shape[0]
    share = np.bincount(d.target.segment, minlength=len(d.names)) / max(n_t, 1)
    params: dict[str, Any] = {"groups": {}}
    n_lab = int((d.human >= 0).sum())

    def refuse(reason: str) -> PassRateEstimate:
        return _refused(
            PassRateEstimate, reason, method=method, confidence=conf, n_labelled=n_lab,
            n_target=n_t, assumption=ASSUMPTION_SEGMENTS, params=MappingProxyType(params),
        )  # fmt: skip

    if n_t == 0:
        return refuse("the target has no rows")
    est = center = var = unknown = 0.0
    bounded: list[str] = []
    for label, members, r in groups:
        weight = float(share[members].sum())
        if weight == 0.0:
            continue
        params["groups"][label] = {
            "target_share": weight, "estimate": r.estimate, "low": r.low, "high": r.high,
            "n_labelled": r.n_labelled, "refused": bool(r.refused),
            "uninformative": bool(r.uninformative),
        }  # fmt: skip
        if r.refused:
            return refuse(f"segment group {label!r} cannot be corrected even pooled: {r.reason}")
        if not _usable(r):
            # The judge cannot tell pass from fail here: the group's pass rate is anywhere in
            # [0, 1], an explicit bound rather than a number borrowed from other segments.
            unknown += weight
            bounded.append(label)
            continue
        assert r.estimate is not None and r.center is not None and r.se is not None
        est += weight * r.estimate
        center += weight * r.center
        var += weight**2 * r.se**2
    z = z_value(conf)
    se = math.sqrt(var)
    raw_low, raw_high = center - z * se, center + z * se + unknown
    warnings = []
    if bounded:
        warnings.append(
            f"not identified in {', '.join(bounded)} ({unknown:.0%} of the target): the judge's "
            "Youden index there is not significantly above 0, so those rows' pass rate is "
            "bounded by [0, 1]"
        )
    params["identified"] = not bounded
    params["bounded"] = {"groups": bounded, "target_share": unknown}
    return PassRateEstimate.clipped_to_unit(
        method, conf, est + unknown / 2.0, (raw_low, raw_high), warnings=warnings, params=params,
        n_labelled=n_lab, n_target=n_t, center=center + unknown / 2.0, se=se,
        assumption=ASSUMPTION_SEGMENTS,
    )  # fmt: skip


def segment_aware_pass_rate(
    human: PerRow, judge_labelled: PerRow, segments_labelled: PerRow, judge_calibration: PerRow,
    segments_calibration: PerRow, judge_target: PerRow, segments_target: PerRow,
    *, min_per_class: int = MIN_PER_CLASS, confidence: float = 0.95,
) -> PassRateEstimate:
    """Corrected pass rate of the target with the judge's error rates taken per segment.

    ``theta = sum_g pi_g theta_g``: ``theta_g`` the verdict-reweighted Lee correction of the
    target's rows in group ``g`` from the calibration rows of ``g``, ``pi_g`` the target's share
    of rows in ``g``; interval ``center +- z sqrt(sum_g pi_g^2 SE_g^2)`` from each group's
    adjusted-Wald centre and standard error. Groups: every segment with at least
    ``min_per_class`` human-pass and human-fail labels alone; the others pooled; a group the
    correction refuses (a class or a verdict stratum without labels) merged with the next
    smallest, down to a single group (the plain correction). A group where the judge's Youden
    index is not significantly above 0 contributes explicit bounds (its pass rate anywhere in
    [0, 1], weighted by its target share) rather than a number borrowed from other segments.

    Args:
        human: Human verdicts on the labelled calibration rows.
        judge_labelled: Judge verdicts on the same rows.
        segments_labelled: Segment per labelled row.
        judge_calibration: Judge verdicts on every row of the calibration set.
        segments_calibration: Segment per calibration row.
        judge_target: Judge verdicts on every row of the target.
        segments_target: Segment per target row.
        min_per_class: Labels of each human class a segment needs to stand alone.
        confidence: Two-sided confidence level.

    Returns:
        A :class:`~judges.calibration.PassRateEstimate` with ``method="lee_segment_reweighted"``;
        ``params["groups"]`` holds each group's share, estimate and interval.
    """
    conf = check_confidence(confidence)
    if min_per_class < 1:
        raise CalibrationInputError(f"min_per_class must be >= 1, got {min_per_class}")
    d = _prepare(human, labelled=(judge_labelled, segments_labelled),
                 calibration=(judge_calibration, segments_calibration),
                 target=(judge_target, segments_target))  # fmt: skip
    return _combine(d, _groups(d, min_per_class=min_per_class, conf=conf), conf)


def _rate_table(d: _Data, human_class: int) -> npt.NDArray[np.float64]:
    """Segments x (judge pass, judge not pass) among labelled rows of one human class."""
    rows = d.human == human_class
    k = len(d.names)
    passed = np.bincount(d.labelled.segment[rows & (d.labelled.judge == PASS)], minlength=k)
    other = np.bincount(d.labelled.segment[rows & (d.labelled.judge != PASS)], minlength=k)
    return np.stack([passed, other], axis=1).astype(float)


def _range(rates: list[tuple[Estimate, str]]) -> str:
    values = [(r.estimate, s) for r, s in rates if r.estimate is not None and not r.refused]
    if not values:
        return "not estimable"
    lo, hi = min(values), max(values)
    return f"{lo[0]:.2f} ({lo[1]}) to {hi[0]:.2f} ({hi[1]})"


def transfer_diagnostics(
    human: PerRow, judge_labelled: PerRow, segments_labelled: PerRow, judge_calibration: PerRow,
    segments_calibration: PerRow, judge_target: PerRow, segments_target: PerRow,
    *, alpha: float = 0.05, min_per_class: int = MIN_PER_CLASS, confidence: float = 0.95,
    rng: np.random.Generator | None = None, mix_rows: tuple[PerRow, PerRow] | None = None,
) -> TransferDiagnostics:
    """Check the transfer assumption of a separate-calibration correction, segment by segment.

    Two tests (:func:`homogeneity_test`): the segment mix of the calibration set's judged rows
    against the target's rows, and the judge's pass share by segment among human-pass labelled
    rows (sensitivity) and among human-fail ones (false-positive rate). The accuracy tests stay
    valid when labels were drawn by verdict: verdict-dependent sampling changes the rates
    within a segment, not whether they are equal across segments. The per-segment rates shown
    are verdict-reweighted (:func:`~judges.calibration.population_rates`) with intervals.

    Args:
        human: The labelled calibration rows' human verdicts.
        judge_labelled: The judge's verdicts on those rows.
        segments_labelled: Their segments.
        judge_calibration: The judge's verdicts on every calibration row.
        segments_calibration: Their segments.
        judge_target: The judge's verdicts on every target row.
        segments_target: Their segments.
        alpha: Significance level (the accuracy tests use ``alpha / 2`` each).
        min_per_class: See :func:`segment_aware_pass_rate`.
        confidence: Two-sided confidence level of the rates and the corrected pass rate.
        rng: Random generator of the exact tests (default: seeded from the tables).
        mix_rows: Segments of every row of the calibration set and of the target, judged or
            not, for the mix test (a segment is known whether or not the judge ran); default:
            the judged calibration rows and the target rows above.

    Returns:
        A :class:`TransferDiagnostics`.
    """
    conf = check_confidence(confidence)
    if not 0.0 < alpha < 1.0:
        raise CalibrationInputError(f"alpha must be in (0, 1), got {alpha}")
    d = _prepare(human, labelled=(judge_labelled, segments_labelled),
                 calibration=(judge_calibration, segments_calibration),
                 target=(judge_target, segments_target))  # fmt: skip
    k = len(d.names)
    if mix_rows is None:
        judged = d.calibration.judge >= 0
        cal_counts = np.bincount(d.calibration.segment[judged], minlength=k).astype(float)
        tgt_counts = np.bincount(d.target.segment, minlength=k).astype(float)
    else:
        index = {name: g for g, name in enumerate(d.names)}
        extra = sorted({str(x) for rows in mix_rows for x in np.asarray(rows, dtype=object)}
                       - set(index))  # fmt: skip
        index.update({name: k + i for i, name in enumerate(extra)})
        cal_counts, tgt_counts = (
            np.bincount([index[str(x)] for x in np.asarray(rows, dtype=object)],
                        minlength=len(index)).astype(float)
            for rows in mix_rows
        )  # fmt: skip
    mix = homogeneity_test(np.stack([cal_counts, tgt_counts], axis=1), rng=rng)
    cal_share_all = cal_counts / max(cal_counts.sum(), 1.0)
    tgt_share_all = tgt_counts / max(tgt_counts.sum(), 1.0)
    distance = float(0.5 * np.abs(cal_share_all - tgt_share_all).sum())
    cal_share, tgt_share = cal_share_all[:k], tgt_share_all[:k]
    sens_test = homogeneity_test(_rate_table(d, PASS), rng=rng)
    fpr_test = homogeneity_test(_rate_table(d, FAIL), rng=rng)
    groups = _groups(d, min_per_class=min_per_class, conf=conf)
    group_of = {g: label for label, members, _ in groups for g in members}
    segments = []
    for g, name in enumerate(d.names):
        mask = np.zeros(k, dtype=bool)
        mask[g] = True
        counts, _ = _group_counts(d, mask)
        rates = _population_rates(counts, conf)
        segments.append(SegmentTransfer(
            segment=name, n_labelled=int(sum(counts.labelled)),
            calibration_share=float(cal_share[g]), target_share=float(tgt_share[g]),
            sensitivity=rates.sensitivity, fpr=rates.fpr, group=group_of[g],
        ))  # fmt: skip
    mix_differs = mix.p_value < alpha or distance >= MIX_DISTANCE
    accuracy_differs = min(sens_test.p_value, fpr_test.p_value) < alpha / 2.0
    aware = _combine(d, groups, conf)
    warning = None
    if mix_differs and accuracy_differs:
        order = np.argsort(-(tgt_share - cal_share))
        grown = d.names[int(order[0])]
        which = "sensitivity" if sens_test.p_value <= fpr_test.p_value else "false-positive rate"
        per = [(s.sensitivity if which == "sensitivity" else s.fpr, s.segment) for s in segments]
        warning = (
            "the correction assumes the judge's sensitivity and false-positive rate are the same "
            "on the target as on the calibration set; here it likely fails, because the judge's "
            f"{which} differs across segments ({_range(per)}; p = "
            f"{min(sens_test.p_value, fpr_test.p_value):.3g}) and the target's segment mix "
            f"differs from the calibration set's (total variation {distance:.2f}, p = "
            f"{mix.p_value:.3g}; e.g. {grown!r} is "
            f"{tgt_share[order[0]]:.0%} of the target against {cal_share[order[0]]:.0%}): "
            "so the headline is the segment-aware correction, which takes the rates per segment "
            "and weights them by the target's own segment shares"
        )
    return TransferDiagnostics(
        mix_test=mix, mix_distance=distance, sensitivity_test=sens_test, fpr_test=fpr_test,
        mix_differs=mix_differs, accuracy_differs=accuracy_differs, segments=tuple(segments),
        segment_aware=aware, warning=warning, alpha=alpha,
    )  # fmt: skip
