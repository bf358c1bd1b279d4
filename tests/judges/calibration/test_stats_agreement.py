"""Cohen's kappa, Fleiss' kappa and Krippendorff's alpha vs sklearn/statsmodels/krippendorff."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import cohens_kappa as sm_cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judges.calibration import (
    CalibrationInputError,
    cohen_kappa,
    fleiss_kappa,
    kappa_from_table,
    krippendorff_alpha,
    multi_rater_agreement,
)

# The statsmodels reference itself warns (sqrt of -1e-16) on zero-variance tables.
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

pairs = st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1])), min_size=2,
                 max_size=300)


@settings(max_examples=200, deadline=None)
@given(pairs, st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_kappa_matches_sklearn_and_statsmodels_at_any_level(
    rows: list[tuple[int, int]], conf: float
) -> None:
    a = np.array([r[0] for r in rows])
    b = np.array([r[1] for r in rows])
    e = cohen_kappa(a, b, confidence=conf)
    table = np.zeros((2, 2))
    np.add.at(table, (a, b), 1)
    if min((table.sum(0) > 0).sum(), (table.sum(1) > 0).sum()) < 2:
        # A rater used one category: kappa is 0 by construction and statsmodels' SE is NaN.
        assert e.refused and "single" in (e.reason or "")
        return
    assert e.estimate == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    res = sm_cohens_kappa(table)
    sm_se = np.sqrt(max(0.0, res.var_kappa))  # statsmodels gives -1e-16 -> NaN at zero variance
    assert e.se == pytest.approx(sm_se, abs=1e-12)
    z = norm.ppf(0.5 + conf / 2)
    assert e.low == pytest.approx(max(-1.0, res.kappa - z * sm_se), abs=1e-12)
    assert e.high == pytest.approx(min(1.0, res.kappa + z * sm_se), abs=1e-12)
    assert -1.0 <= e.low <= e.estimate <= e.high <= 1.0
    if conf == 0.95 and sm_se > 0:
        assert e.low == pytest.approx(max(-1.0, res.kappa_low), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(pairs)
def test_kappa_is_symmetric(rows: list[tuple[int, int]]) -> None:
    a = [r[0] for r in rows]
    b = [r[1] for r in rows]
    assert cohen_kappa(a, b).to_dict() == cohen_kappa(b, a).to_dict()


def test_kappa_interval_truncated_at_one() -> None:
    # statsmodels' own 95 % upper bound exceeds 1 here; ours must not.
    table = [[30, 1], [0, 3]]
    res = sm_cohens_kappa(table)
    assert res.kappa_upp > 1.0
    e = kappa_from_table(table)
    assert e.high == 1.0 and e.low == pytest.approx(res.kappa_low)


def test_kappa_excludes_undecided_and_handles_guards() -> None:
    e = cohen_kappa(["pass", "fail", "unsure", "pass"], ["pass", "fail", "pass", "unscored"])
    assert e.n == 2 and e.estimate == 1.0
    assert e.warnings and "zero standard error" in e.warnings[0]
    assert cohen_kappa([], []).refused
    assert cohen_kappa(["unsure"] * 3, ["pass"] * 3).refused
    one = cohen_kappa(["pass"] * 4, ["pass"] * 4)
    assert one.refused and one.estimate is None and "single" in (one.reason or "")
    with pytest.raises(CalibrationInputError):
        cohen_kappa([1, 0], [1])
    with pytest.raises(CalibrationInputError):
        kappa_from_table([[1, 2, 3]])


def test_pairwise_categorical_kappa_matches_sklearn() -> None:
    rng = np.random.default_rng(3)
    a = rng.choice(["a", "b", "tie"], size=300, p=[0.45, 0.4, 0.15])
    b = np.where(rng.random(300) < 0.7, a, rng.choice(["a", "b", "tie"], size=300))
    e = cohen_kappa(a, b, kind="pairwise")
    assert e.estimate == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    codes = {"a": 0, "b": 1, "tie": 2}
    table = np.zeros((3, 3))
    np.add.at(table, ([codes[x] for x in a], [codes[x] for x in b]), 1)
    assert e.se == pytest.approx(sm_cohens_kappa(table).std_kappa, abs=1e-12)


# ----------------------------------------------------------------------------- multi-rater

ratings = st.integers(2, 5).flatmap(
    lambda r: st.lists(
        st.lists(st.sampled_from([0, 1, None]), min_size=r, max_size=r), min_size=2, max_size=40
    )
)


def _kripp_reference(rows: list[list[int | None]]) -> float:
    data = np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=float).T
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


@settings(max_examples=200, deadline=None)
@given(ratings)
def test_krippendorff_matches_package(rows: list[list[int | None]]) -> None:
    arr = np.array(rows, dtype=object)
    counts_per_item = np.array([sum(v is not None for v in row) for row in rows])
    pairable = counts_per_item >= 2
    values = {v for row, ok in zip(rows, pairable, strict=True) if ok for v in row if v is not None}
    e = krippendorff_alpha(arr)
    if not pairable.any() or len(values) < 2:
        assert e.refused
        return
    assert e.estimate == pytest.approx(_kripp_reference(rows), abs=1e-9)


def test_krippendorff_pairwise_kind_and_bootstrap() -> None:
    rng = np.random.default_rng(0)
    truth = rng.choice(["a", "b", "tie"], size=80)
    cols = [np.where(rng.random(80) < 0.8, truth, rng.choice(["a", "b", "tie"], size=80))
            for _ in range(3)]
    data = np.array(cols, dtype=object).T
    data[rng.random(data.shape) < 0.1] = None
    e = krippendorff_alpha(data, kind="pairwise", rng=np.random.default_rng(1), n_boot=500)
    codes = {"a": 0.0, "b": 1.0, "tie": 2.0, None: np.nan}
    ref = krippendorff.alpha(
        reliability_data=np.vectorize(codes.get, otypes=[float])(data).T,
        level_of_measurement="nominal",
    )
    assert e.estimate == pytest.approx(ref, abs=1e-9)
    assert e.low < e.estimate < e.high
    again = krippendorff_alpha(data, kind="pairwise", rng=np.random.default_rng(1), n_boot=500)
    assert again.to_dict() == e.to_dict()  # seeded: reproducible
    assert krippendorff_alpha(data, kind="pairwise").low is None  # no rng, no bootstrap


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 5).flatmap(
    lambda r: st.lists(st.lists(st.sampled_from([0, 1]), min_size=r, max_size=r), min_size=2,
                       max_size=40)))
def test_fleiss_matches_statsmodels(rows: list[list[int]]) -> None:
    arr = np.array(rows)
    e = fleiss_kappa(arr)
    table = aggregate_raters(arr, n_cat=2)[0]
    p_cat = table.sum(0) / table.sum()
    if (p_cat**2).sum() >= 1 - 1e-12:
        assert e.refused
        return
    assert e.estimate == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)


def test_fleiss_drops_incomplete_items() -> None:
    rows = [["pass", "pass", "fail"], ["fail", "fail", "fail"], ["pass", None, "pass"],
            ["pass", "pass", "pass"], ["fail", "pass", "unsure"]]
    e = fleiss_kappa(rows)
    complete = np.array([[1, 1, 0], [0, 0, 0], [1, 1, 1]])
    assert e.n == 3
    assert e.estimate == pytest.approx(sm_fleiss_kappa(aggregate_raters(complete, n_cat=2)[0]))
    assert any("2 items" in w for w in e.warnings)


def test_multi_rater_agreement_values_and_intervals() -> None:
    rng = np.random.default_rng(7)
    truth = rng.random(150) < 0.6
    cols = [np.where(rng.random(150) < q, truth, ~truth) for q in (0.9, 0.85, 0.8)]
    data = np.array(cols).T.astype(int)
    out = multi_rater_agreement(data, raters=["ann", "bob", "cy"], rng=np.random.default_rng(1),
                                n_boot=800)
    assert [(p.rater_a, p.rater_b) for p in out.pairwise] == [("ann", "bob"), ("ann", "cy"),
                                                             ("bob", "cy")]
    for p, (i, j) in zip(out.pairwise, [(0, 1), (0, 2), (1, 2)], strict=True):
        assert p.kappa.estimate == pytest.approx(cohen_kappa_score(data[:, i], data[:, j]))
        assert p.kappa.low < p.kappa.estimate < p.kappa.high
        # Bootstrap and asymptotic intervals agree roughly at n=150.
        se = cohen_kappa(data[:, i], data[:, j]).se
        assert (p.kappa.high - p.kappa.low) == pytest.approx(2 * 1.96 * se, rel=0.25)
    light = np.mean([p.kappa.estimate for p in out.pairwise])
    assert out.mean_pairwise_kappa.estimate == pytest.approx(light)
    assert out.fleiss.estimate == pytest.approx(
        sm_fleiss_kappa(aggregate_raters(data, n_cat=2)[0]))
    assert out.krippendorff.estimate == pytest.approx(
        krippendorff.alpha(reliability_data=data.T.astype(float),
                           level_of_measurement="nominal"))
    for e in (out.fleiss, out.krippendorff, out.mean_pairwise_kappa):
        assert e.low < e.estimate < e.high and e.method.endswith("item-bootstrap")
    assert out.to_dict()["pairwise"][0]["rater_a"] == "ann"


def test_multi_rater_guards() -> None:
    with pytest.raises(CalibrationInputError):
        multi_rater_agreement([[1], [0]], rng=np.random.default_rng(0))
    with pytest.raises(CalibrationInputError):
        multi_rater_agreement([1, 0], rng=np.random.default_rng(0))
    with pytest.raises(CalibrationInputError):
        multi_rater_agreement([[1, 0]], raters=["x"], rng=np.random.default_rng(0))
    with pytest.raises(CalibrationInputError, match="Generator"):
        multi_rater_agreement([[1, 0], [0, 0]], rng=np.random.RandomState(0))  # type: ignore[arg-type]
    same = multi_rater_agreement([["pass", "pass"]] * 5, rng=np.random.default_rng(0), n_boot=50)
    assert same.fleiss.refused and same.krippendorff.refused and same.pairwise[0].kappa.refused
    assert same.mean_pairwise_kappa.refused
    missing = multi_rater_agreement([["unsure", "pass"], [None, "fail"]],
                                    rng=np.random.default_rng(0), n_boot=50)
    assert missing.krippendorff.refused and missing.pairwise[0].kappa.refused
    assert "no items rated by both" in (missing.pairwise[0].kappa.reason or "")
