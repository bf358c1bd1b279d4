"""Labelling-budget planning: Lee's Algorithm 1 (bug fixed), exact optimum, labels needed."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from judges.calibration import (
    CalibrationInputError,
    allocation_gap,
    labels_for_proportion,
    labels_needed,
    lee_allocation,
    optimal_allocation_ratio,
)


def ref_allocate(m: int, p: float, q0_pilot: float, q1_pilot: float, m_pilot: int,
                 eps: float = 1e-6) -> tuple[int, int]:
    """Algorithm 1 as STATS.md describes it, with the p < eps branch fixed to the limit."""
    q0 = (q0_pilot * m_pilot + 1) / (m_pilot + 2)
    q1 = (q1_pilot * m_pilot + 1) / (m_pilot + 2)
    kappa = (1 - q0) / (1 - q1)
    if p < eps:
        m1 = m_pilot  # the reference returns m - m_pilot here (the bug)
    elif p > 1 - eps:
        m1 = m - m_pilot
    else:
        m1_star = round(m / (1 + (1 / p - 1) * math.sqrt(kappa)))
        m1 = min(max(m1_star, m_pilot), m - m_pilot)
    return m - m1, m1


@settings(max_examples=300, deadline=None)
@given(st.integers(20, 2000), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1),
       st.integers(1, 10))
def test_allocation_matches_algorithm_1(m: int, p: float, q0: float, q1: float,
                                        m_pilot: int) -> None:
    a = lee_allocation(m, judge_pass_rate=p, q0_pilot=q0, q1_pilot=q1, m_pilot=m_pilot)
    assert (a.m0, a.m1) == ref_allocate(m, p, q0, q1, m_pilot)
    assert a.m0 + a.m1 == m and a.m0 >= m_pilot and a.m1 >= m_pilot


def test_allocation_p_below_eps_uses_the_limit_not_the_reference_bug() -> None:
    a = lee_allocation(200, judge_pass_rate=0.0, q0_pilot=0.7, q1_pilot=0.9, m_pilot=10)
    assert (a.m0, a.m1) == (190, 10)  # nearly every label on failing rows
    tiny = lee_allocation(200, judge_pass_rate=1e-4, q0_pilot=0.7, q1_pilot=0.9, m_pilot=10)
    assert tiny.m1 == 10  # continuous with the formula just above eps
    high = lee_allocation(200, judge_pass_rate=1.0, q0_pilot=0.7, q1_pilot=0.9, m_pilot=10)
    assert (high.m0, high.m1) == (10, 190)
    # No pilot rows: the given rates as they are, as the reference does (oracle a's rates).
    oracle = lee_allocation(200, judge_pass_rate=0.615, q0_pilot=0.8596491228070176,
                            q1_pilot=0.8671328671328671, m_pilot=0)
    assert (oracle.m0, oracle.m1) == (78, 122)
    readme = lee_allocation(200, judge_pass_rate=0.4, q0_pilot=0.7, q1_pilot=0.9, m_pilot=10)
    assert (readme.m0, readme.m1) == (136, 64)
    with pytest.raises(CalibrationInputError):
        lee_allocation(15, judge_pass_rate=0.5, q0_pilot=0.7, q1_pilot=0.9, m_pilot=10)


@settings(max_examples=100, deadline=None)
@given(st.floats(0.05, 0.95), st.floats(0.55, 0.99), st.floats(0.55, 0.99))
def test_exact_ratio_minimises_calibration_variance(theta: float, q0: float, q1: float) -> None:
    a = (1 - theta) ** 2 * q0 * (1 - q0)
    b = theta**2 * q1 * (1 - q1)
    total = 1000.0
    res = minimize_scalar(lambda m0: a / m0 + b / (total - m0), bounds=(1e-6, total - 1e-6),
                          method="bounded", options={"xatol": 1e-10})
    ratio = optimal_allocation_ratio(theta=theta, q0=q0, q1=q1)
    assert ratio == pytest.approx(res.x / (total - res.x), rel=1e-5)
    gap = allocation_gap(round(total * ratio / (1 + ratio)), round(total / (1 + ratio)),
                         theta=theta, q0=q0, q1=q1)
    assert gap.variance_inflation == pytest.approx(1.0, abs=1e-3)
    assert gap.optimum_m0 + gap.optimum_m1 == pytest.approx(gap.m0 + gap.m1)


def test_allocation_gap_reports_inflation() -> None:
    gap = allocation_gap(20, 180, theta=0.3, q0=0.75, q1=0.85)
    assert gap.ratio == pytest.approx(20 / 180)
    assert gap.optimum_ratio > 1  # low pass rate: most labels should be failing rows
    assert gap.variance_inflation > 2
    with pytest.raises(CalibrationInputError):
        allocation_gap(0, 10, theta=0.5, q0=0.8, q1=0.8)
    with pytest.raises(CalibrationInputError):
        optimal_allocation_ratio(theta=1.0, q0=0.8, q1=0.8)


def _half_width(n: int, p: float, q0t: float, q1t: float, m0: Any, m1: Any, theta: float,
                conf: float = 0.95) -> Any:
    """Delta-method half-width with the (already smoothed) error rates held fixed."""
    z = norm.ppf(0.5 + conf / 2)
    var = p * (1 - p) / n + (1 - theta) ** 2 * q0t * (1 - q0t) / m0 + theta**2 * q1t * (
        1 - q1t) / m1
    return z * np.sqrt(var) / (q0t + q1t - 1)


@settings(max_examples=150, deadline=None)
@given(st.floats(0.02, 0.1), st.integers(500, 50_000), st.floats(0.1, 0.9),
       st.floats(0.6, 0.98), st.floats(0.6, 0.98), st.integers(5, 200), st.integers(5, 200))
def test_labels_needed_reaches_target_minimally(
    h: float, n: int, p: float, q0: float, q1: float, m0: int, m1: int
) -> None:
    theta = 0.5
    q0t, q1t = (q0 * m0 + 1) / (m0 + 2), (q1 * m1 + 1) / (m1 + 2)  # smoothed at the current m
    r = labels_needed(target_half_width=h, n_target=n, judge_pass_rate=p, q0=q0, q1=q1,
                      m0=m0, m1=m1, theta=theta)
    if not r.achievable:
        assert r.reason and "target rows" in r.reason
        return
    assert r.projected_half_width is not None and r.projected_half_width <= h + 1e-12
    assert r.projected_half_width == pytest.approx(
        _half_width(n, p, q0t, q1t, r.m0_total, r.m1_total, theta))
    # Minimal in total: no split of one label fewer reaches the target.
    total = r.extra_m0 + r.extra_m1
    if total > 0:
        fewer = total - 1
        e0 = np.arange(fewer + 1)
        assert (_half_width(n, p, q0t, q1t, m0 + e0, m1 + fewer - e0, theta) > h).all()


def test_labels_needed_cases_and_seed_arithmetic() -> None:
    done = labels_needed(target_half_width=0.5, n_target=1000, judge_pass_rate=0.5, q0=0.8,
                         q1=0.8, m0=100, m1=100)
    assert done.achievable and (done.extra_m0, done.extra_m1) == (0, 0)
    impossible = labels_needed(target_half_width=0.01, n_target=100, judge_pass_rate=0.5,
                               q0=0.8, q1=0.8, m0=10, m1=10)
    assert not impossible.achievable and "score more target rows" in (impossible.reason or "")
    chance = labels_needed(target_half_width=0.05, n_target=1000, judge_pass_rate=0.5, q0=0.4,
                           q1=0.5, m0=10, m1=10)
    assert not chance.achievable and "chance" in (chance.reason or "")
    # STATS.md §6: +/-5 points at 95 % needs ~385 rows; at n=100 SE ~ 0.05.
    assert labels_for_proportion(0.05) == 385
    assert labels_for_proportion(1.96 * 0.05, p=0.5) == 100
    with pytest.raises(CalibrationInputError):
        labels_for_proportion(0.0)
