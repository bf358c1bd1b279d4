"""Planning a labelling budget: how to split it between classes, and how many more labels.

The corrected pass rate's variance (Lee et al. 2025, delta method) is

``Var = [p(1-p)/n + (1-theta)^2 q0(1-q0)/m0 + theta^2 q1(1-q1)/m1] / (q0 + q1 - 1)^2``

so labels of truly failing rows (``m0``) buy down the specificity term and labels of truly
passing rows (``m1``) the sensitivity term. For a fixed total ``m0 + m1`` the calibration part
is smallest at ``m0/m1 = ((1-theta)/theta) * sqrt(q0(1-q0) / (q1(1-q1)))`` (Prop. 2).

In practice a labeller does not know a row's true class in advance: draw from the judge-fail
stratum to get more failing rows, the judge-pass stratum for passing rows, and use
:func:`allocation_gap` to see how far the achieved split is from the optimum.

References:
    Lee, C., Zeng, T., Jeong, J., Sohn, J. & Lee, K. (2025). How to correctly report
    LLM-as-a-judge evaluations. arXiv:2511.21140 (Prop. 2, Algorithm 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._results import CalibrationInputError, _ToDict
from .rates import check_confidence, z_value

__all__ = [
    "Allocation",
    "AllocationGap",
    "LabelsNeeded",
    "allocation_gap",
    "labels_for_proportion",
    "labels_needed",
    "lee_allocation",
    "optimal_allocation_ratio",
]


def _prob(name: str, x: float, *, open_interval: bool = False) -> float:
    v = float(x)
    ok = 0.0 < v < 1.0 if open_interval else 0.0 <= v <= 1.0
    if not ok:
        interval = "(0, 1)" if open_interval else "[0, 1]"
        raise CalibrationInputError(f"{name} must be in {interval}, got {x!r}")
    return v


def optimal_allocation_ratio(*, theta: float, q0: float, q1: float) -> float:
    """Exact variance-minimising ratio ``m0/m1`` of failing to passing labelled rows.

    ``m0/m1 = ((1 - theta)/theta) * sqrt(q0(1-q0) / (q1(1-q1)))`` (Lee et al. 2025, Prop. 2).

    Args:
        theta: (Estimated) true pass rate, in (0, 1).
        q0: Specificity, in (0, 1).
        q1: Sensitivity, in (0, 1).

    Returns:
        The ratio ``m0/m1``.

    Examples:
        >>> round(optimal_allocation_ratio(theta=0.5, q0=0.75, q1=0.75), 6)
        1.0
    """
    t = _prob("theta", theta, open_interval=True)
    a = _prob("q0", q0, open_interval=True)
    b = _prob("q1", q1, open_interval=True)
    return ((1.0 - t) / t) * math.sqrt(a * (1.0 - a) / (b * (1.0 - b)))


@dataclass(frozen=True)
class Allocation(_ToDict):
    """A split of a labelling budget between failing (``m0``) and passing (``m1``) rows.

    Attributes:
        budget: Total labelled rows ``m0 + m1``.
        m0: Truly failing rows to label.
        m1: Truly passing rows to label.
        ratio: ``m0 / m1``.
        optimum_ratio: Exact optimum ``m0/m1`` at the same inputs (pilot-smoothed q's, ``p`` as
            the pass rate), for reference.
        q0_smoothed: ``(q0_pilot m_pilot + 1)/(m_pilot + 2)``.
        q1_smoothed: ``(q1_pilot m_pilot + 1)/(m_pilot + 2)``.
    """

    budget: int
    m0: int
    m1: int
    ratio: float
    optimum_ratio: float
    q0_smoothed: float
    q1_smoothed: float


def lee_allocation(
    budget: int,
    *,
    judge_pass_rate: float,
    q0_pilot: float,
    q1_pilot: float,
    m_pilot: int = 10,
    eps: float = 1e-6,
) -> Allocation:
    """Lee et al. (2025) Algorithm 1: split ``budget`` labels between failing and passing rows.

    ``q~ = (q_pilot m_pilot + 1)/(m_pilot + 2)`` (the given rates as they are when
    ``m_pilot = 0``), ``kappa = (1 - q0~)/(1 - q1~)``,
    ``m1* = round(budget / (1 + (1/p - 1) sqrt(kappa)))``,
    ``m1 = min(max(m1*, m_pilot), budget - m_pilot)``, ``m0 = budget - m1``.
    Unlike the reference code, ``p < eps`` uses the formula's limit ``m1 = m_pilot`` (the
    reference returns ``budget - m_pilot``, the opposite); ``p > 1 - eps`` gives
    ``m1 = budget - m_pilot``. ``round`` is Python's (half to even).

    Args:
        budget: Total labelled rows, ``>= 2 * m_pilot``.
        judge_pass_rate: Judge pass rate ``p`` on the target rows (stand-in for ``theta``).
        q0_pilot: Specificity observed on the pilot (a proportion).
        q1_pilot: Sensitivity observed on the pilot (a proportion).
        m_pilot: Pilot rows per class (already part of the budget).
        eps: Threshold for treating ``p`` as 0 or 1.

    Returns:
        An :class:`Allocation`.

    Examples:
        >>> a = lee_allocation(200, judge_pass_rate=0.4, q0_pilot=0.7, q1_pilot=0.9)
        >>> a.m0, a.m1
        (136, 64)
    """
    if budget < 2 * m_pilot or m_pilot < 0:
        raise CalibrationInputError(f"budget ({budget}) must be at least 2 * m_pilot ({m_pilot})")
    p = _prob("judge_pass_rate", judge_pass_rate)
    if m_pilot == 0:
        # No pilot rows to smooth over: the given rates are used as they are, as the
        # reference does (smoothing them with no rows would replace both by 1/2).
        q0, q1 = _prob("q0_pilot", q0_pilot), _prob("q1_pilot", q1_pilot)
    else:
        q0 = (_prob("q0_pilot", q0_pilot) * m_pilot + 1.0) / (m_pilot + 2.0)
        q1 = (_prob("q1_pilot", q1_pilot) * m_pilot + 1.0) / (m_pilot + 2.0)
    kappa = (1.0 - q0) / (1.0 - q1) if q1 < 1.0 else math.inf
    if p < eps:
        m1 = m_pilot
    elif p > 1.0 - eps:
        m1 = budget - m_pilot
    else:
        m1_star = (0 if math.isinf(kappa) else
                   round(budget / (1.0 + (1.0 / p - 1.0) * math.sqrt(kappa))))
        m1 = min(max(m1_star, m_pilot), budget - m_pilot)
    m0 = budget - m1
    p_clip = min(max(p, 1e-9), 1.0 - 1e-9)
    return Allocation(
        budget=budget,
        m0=m0,
        m1=m1,
        ratio=m0 / m1 if m1 else math.inf,
        optimum_ratio=(optimal_allocation_ratio(theta=p_clip, q0=q0, q1=q1)
                       if 0.0 < q0 < 1.0 and 0.0 < q1 < 1.0 else math.nan),
        q0_smoothed=q0,
        q1_smoothed=q1,
    )


@dataclass(frozen=True)
class AllocationGap(_ToDict):
    """How far an achieved split is from the optimum.

    Attributes:
        m0: Failing rows labelled.
        m1: Passing rows labelled.
        ratio: Achieved ``m0/m1``.
        optimum_ratio: Exact optimum ``m0/m1``.
        optimum_m0: Failing rows at the optimum for the same total.
        optimum_m1: Passing rows at the optimum for the same total.
        variance_inflation: Calibration variance at the achieved split divided by that at the
            optimum with the same total (1.0 = optimal; 1.25 = 25 % more variance).
    """

    m0: int
    m1: int
    ratio: float
    optimum_ratio: float
    optimum_m0: float
    optimum_m1: float
    variance_inflation: float


def allocation_gap(m0: int, m1: int, *, theta: float, q0: float, q1: float) -> AllocationGap:
    """Compare an achieved split ``(m0, m1)`` with the exact optimum for the same total.

    Args:
        m0: Failing rows labelled (``>= 1``).
        m1: Passing rows labelled (``>= 1``).
        theta: (Estimated) true pass rate, in (0, 1).
        q0: Specificity, in (0, 1).
        q1: Sensitivity, in (0, 1).

    Returns:
        An :class:`AllocationGap`.

    Examples:
        >>> round(allocation_gap(50, 50, theta=0.5, q0=0.8, q1=0.8).variance_inflation, 6)
        1.0
    """
    if m0 < 1 or m1 < 1:
        raise CalibrationInputError("m0 and m1 must both be >= 1")
    ratio = optimal_allocation_ratio(theta=theta, q0=q0, q1=q1)
    a = (1.0 - theta) ** 2 * q0 * (1.0 - q0)
    b = theta**2 * q1 * (1.0 - q1)
    total = m0 + m1
    achieved = a / m0 + b / m1
    best = (math.sqrt(a) + math.sqrt(b)) ** 2 / total
    return AllocationGap(
        m0=m0,
        m1=m1,
        ratio=m0 / m1,
        optimum_ratio=ratio,
        optimum_m0=total * ratio / (1.0 + ratio),
        optimum_m1=total / (1.0 + ratio),
        variance_inflation=achieved / best,
    )


@dataclass(frozen=True)
class LabelsNeeded(_ToDict):
    """Extra labels per class to reach a target interval half-width.

    Attributes:
        achievable: ``False`` when no number of labels can reach the target (the target rows'
            own sampling noise already exceeds it, or the judge is no better than chance).
        reason: Why not achievable (``None`` otherwise).
        extra_m0: Extra truly failing rows to label.
        extra_m1: Extra truly passing rows to label.
        m0_total: ``m0 + extra_m0``.
        m1_total: ``m1 + extra_m1``.
        current_half_width: Half-width now (``z * SE``, delta method, smoothed q's).
        projected_half_width: Half-width after the extra labels.
        target_half_width: The requested half-width.
    """

    achievable: bool
    reason: str | None
    extra_m0: int
    extra_m1: int
    m0_total: int
    m1_total: int
    current_half_width: float | None
    projected_half_width: float | None
    target_half_width: float


def labels_needed(
    *,
    target_half_width: float,
    n_target: int,
    judge_pass_rate: float,
    q0: float,
    q1: float,
    m0: int,
    m1: int,
    theta: float | None = None,
    confidence: float = 0.95,
) -> LabelsNeeded:
    """Fewest extra failing/passing labels so that ``z * SE <= target_half_width``.

    Uses the delta-method variance of the corrected pass rate (module docstring) with
    smoothed ``q~ = (m q + 1)/(m + 2)`` (computed at the current ``m0``, ``m1`` and held fixed
    for the projection) so a perfect pilot does not promise a zero variance.
    Minimises ``extra_m0 + extra_m1`` (integers) subject to the variance bound, with
    ``M0 >= m0`` and ``M1 >= m1``: the continuous optimum is ``M0 ~ sqrt(A)``, ``M1 ~ sqrt(B)``
    (``A = (1-theta)^2 q0(1-q0)``, ``B = theta^2 q1(1-q1)``); the integer optimum is searched
    next to it.

    Args:
        target_half_width: Desired half-width of the ``confidence`` interval (e.g. 0.05).
        n_target: Judge-scored target rows.
        judge_pass_rate: Judge pass rate ``p`` on the target rows.
        q0: Current specificity estimate.
        q1: Current sensitivity estimate.
        m0: Failing rows labelled so far.
        m1: Passing rows labelled so far.
        theta: True pass rate to plan for; default the Rogan-Gladen estimate from ``p``, ``q0``,
            ``q1`` (clipped to [0.01, 0.99]).
        confidence: Two-sided confidence level.

    Returns:
        A :class:`LabelsNeeded`.

    Examples:
        >>> r = labels_needed(target_half_width=0.05, n_target=5000, judge_pass_rate=0.5,
        ...                   q0=0.8, q1=0.9, m0=50, m1=50)
        >>> r.achievable, r.extra_m0 > 0, r.extra_m1 > 0
        (True, True, True)
    """
    check_confidence(confidence)
    if target_half_width <= 0:
        raise CalibrationInputError("target_half_width must be > 0")
    if n_target < 1 or m0 < 0 or m1 < 0:
        raise CalibrationInputError("n_target must be >= 1 and m0, m1 >= 0")
    p = _prob("judge_pass_rate", judge_pass_rate)
    q0_t = (_prob("q0", q0) * m0 + 1.0) / (m0 + 2.0)
    q1_t = (_prob("q1", q1) * m1 + 1.0) / (m1 + 2.0)
    youden = q0_t + q1_t - 1.0

    def result(
        ok: bool,
        why: str | None,
        e0: int = 0,
        e1: int = 0,
        cur: float | None = None,
        proj: float | None = None,
    ) -> LabelsNeeded:
        return LabelsNeeded(ok, why, e0, e1, m0 + e0, m1 + e1, cur, proj, target_half_width)

    if youden <= 0:
        return result(
            False,
            "judge no better than chance (smoothed sensitivity + specificity "
            "- 1 <= 0): more labels of the same judge cannot give a usable interval",
        )
    th = (p + q0_t - 1.0) / youden if theta is None else _prob("theta", theta)
    th = min(max(th, 0.01), 0.99)
    z = z_value(confidence)
    a = (1.0 - th) ** 2 * q0_t * (1.0 - q0_t)
    b = th**2 * q1_t * (1.0 - q1_t)
    c = p * (1.0 - p) / n_target

    def half_width(mm0: float, mm1: float) -> float:
        v0 = a / mm0 if mm0 > 0 else math.inf
        v1 = b / mm1 if mm1 > 0 else math.inf
        return z * math.sqrt(c + v0 + v1) / youden

    current = half_width(m0, m1) if m0 and m1 else None
    budget = (target_half_width * youden / z) ** 2 - c  # allowed calibration variance
    if budget <= 0:
        return result(
            False,
            f"the target rows alone (n={n_target}) give a half-width of "
            f"{z * math.sqrt(c) / youden:.4f} >= the target: score more target rows",
            cur=current,
        )
    if current is not None and current <= target_half_width:
        return result(True, None, cur=current, proj=current)
    # Continuous optimum M0 ~ sqrt(A) (sqrt(A) + sqrt(B)) / budget; the total M0 + M1(M0) is
    # convex in M0, so the integer optimum lies next to it: scan a window around it.
    sa, sb = math.sqrt(a), math.sqrt(b)
    feasible0 = max(m0, 1, math.floor(a / budget) + 1)  # need A / M0 < budget
    centre = max(feasible0, round(sa * (sa + sb) / budget))
    best: tuple[int, int, int] | None = None
    for tot0 in range(max(feasible0, centre - 50), centre + 51):
        rest = budget - a / tot0
        if rest <= 0:
            continue
        tot1 = max(m1, 1, math.ceil(b / rest - 1e-9))
        while half_width(tot0, tot1) > target_half_width:  # floating-point guard
            tot1 += 1
        if best is None or tot0 + tot1 < best[0]:
            best = (tot0 + tot1, tot0, tot1)
    if best is None:  # pragma: no cover - the window always contains a feasible M0
        return result(False, "no feasible allocation found", cur=current)
    _, tot0, tot1 = best
    return result(True, None, tot0 - m0, tot1 - m1, current, half_width(tot0, tot1))


def labels_for_proportion(half_width: float, *, p: float = 0.5, confidence: float = 0.95) -> int:
    """Rows needed to estimate a proportion to ``+/- half_width`` (Wald planning formula).

    ``n = ceil(z^2 p (1 - p) / half_width^2)``; ``p = 0.5`` is the worst case.

    Args:
        half_width: Desired half-width.
        p: Anticipated proportion.
        confidence: Two-sided confidence level.

    Returns:
        The number of rows.

    Examples:
        >>> labels_for_proportion(0.05)
        385
    """
    if half_width <= 0:
        raise CalibrationInputError("half_width must be > 0")
    z = z_value(confidence)
    return math.ceil(z * z * _prob("p", p) * (1.0 - p) / half_width**2)
