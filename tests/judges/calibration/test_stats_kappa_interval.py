"""Kappa at small n: smoothed bootstrap (plain one checked against scipy), refusals, coverage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import bootstrap
from sklearn.metrics import cohen_kappa_score

from judges.calibration import (
    collapsed,
    describe_interval,
    format_interval,
    kappa_from_table,
    kappa_interval,
    kappa_interval_from_table,
)
from judges.calibration.agreement import kappa_of_tables


def test_one_category_rater_is_refused_with_a_reason() -> None:
    r = kappa_interval(["pass"] * 20, ["pass"] * 15 + ["fail"] * 5)
    assert r.refused and r.estimate is None
    assert "rater 1 used a single category" in (r.reason or "")
    assert "rater 2" in (kappa_interval(["pass", "fail"] * 5, ["fail"] * 10).reason or "")


def test_small_n_plain_bootstrap_matches_scipy_percentile() -> None:
    rng = np.random.default_rng(0)
    h = rng.integers(0, 2, 30)
    j = np.where(rng.random(30) < 0.8, h, 1 - h)
    ours = kappa_interval(h, j, n_boot=20000, rng=np.random.default_rng(1), pseudo_count=0.0)
    assert ours.method == "cohen-kappa-bootstrap"
    assert ours.estimate == pytest.approx(cohen_kappa_score(h, j))

    def kappa(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        po = (a == b).mean(axis=axis)
        pa, pb = a.mean(axis=axis), b.mean(axis=axis)
        pe = pa * pb + (1 - pa) * (1 - pb)
        return (po - pe) / (1 - pe)

    assert kappa(h, j) == pytest.approx(cohen_kappa_score(h, j))
    ref = bootstrap(
        (h, j), kappa, paired=True, vectorized=True, n_resamples=20000, method="percentile",
        rng=np.random.default_rng(2),
    )  # fmt: skip
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=0.03)


def test_perfect_agreement_at_small_n_is_not_a_zero_width_interval() -> None:
    e = kappa_interval(["pass"] * 10 + ["fail"] * 10, ["pass"] * 10 + ["fail"] * 10)
    assert e.estimate == 1.0 and e.high == 1.0
    assert e.low is not None and e.low < 0.85


def test_a_zero_width_interval_is_said_in_words() -> None:
    # The Wald kappa of a perfect 14-row table (the leaderboard's) has no width at all.
    wald = kappa_from_table([[6, 0], [0, 8]])
    assert (wald.estimate, wald.low, wald.high, wald.n) == (1.0, 1.0, 1.0, 14)
    assert wald.describe(agreement=True) == "all 14 agree"
    # A census of a stratum (every row labelled) is exact, and still said with its rows.
    census = {"estimate": 19 / 30, "low": 19 / 30, "high": 19 / 30, "n": 30, "reason": None}
    assert describe_interval(census) == "0.633 on all 30 rows (no spread)"
    # Collapsed means "prints alike": bounds 0.99996 and 1.0 both show as 1.000.
    assert collapsed({"estimate": 1.0, "low": 0.99996, "high": 1.0, "n": 9})
    assert describe_interval({"estimate": 1.0, "low": 0.99996, "high": 1.0, "n": 9},
                             agreement=True) == "all 9 agree"
    refused = {"estimate": None, "low": None, "high": None, "n": 0, "reason": "no rows"}
    assert not collapsed(refused) and describe_interval(refused) == "—"


@given(st.floats(0, 1), st.floats(0, 1), st.integers(1, 10_000))
def test_an_interval_with_width_reads_as_before(a: float, b: float, n: int) -> None:
    low, high = min(a, b), max(a, b)
    value = {"estimate": (low + high) / 2, "low": low, "high": high, "n": n, "reason": None}
    text = describe_interval(value, agreement=True)
    if f"{low:.3f}" != f"{high:.3f}":
        assert text == format_interval(value)
    else:
        assert "[" not in text and f"{n:,}" in text


def test_large_n_uses_wald() -> None:
    table = [[60, 10], [15, 45]]
    assert kappa_interval_from_table(table) == kappa_from_table(table)


@pytest.mark.parametrize(
    ("n", "cells"),
    [(20, [0.45, 0.05, 0.05, 0.45]), (20, [0.35, 0.1, 0.1, 0.45]), (60, [0.8, 0.07, 0.05, 0.08])],
)
def test_seeded_coverage_at_small_n(n: int, cells: list[float]) -> None:
    rng = np.random.default_rng(4)
    truth = float(kappa_of_tables(np.array(cells).reshape(2, 2)))
    covered = 0
    for _ in range(300):
        t = rng.multinomial(n, cells).reshape(2, 2)
        e = kappa_interval_from_table(t, rng=rng, n_boot=1000)
        covered += (not e.refused) and e.low <= truth <= e.high  # type: ignore[operator]
    assert covered / 300 >= 0.93
