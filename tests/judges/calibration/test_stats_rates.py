"""Verdict normalisation, confusion matrix and error rates vs scikit-learn / statsmodels."""

from __future__ import annotations

import decimal
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import balanced_accuracy_score, recall_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from judges.calibration import (
    CalibrationInputError,
    ConfusionMatrix,
    Estimate,
    _verdicts,
    confusion_matrix,
    judge_rates,
    normalize_verdicts,
    rates_from_confusion,
    verdict_names,
    wilson_interval,
)
from judges.calibration._verdicts import VerdictKind

binary = st.lists(st.sampled_from([0, 1]), min_size=1, max_size=200)


# ----------------------------------------------------------------------------- normalisation


def test_normalize_strings_bools_ints_floats_and_missing() -> None:
    got = normalize_verdicts(["pass", " FAIL", "Unsure", "unscored", "", None, "1", "false"])
    assert got.tolist() == [1, 0, -1, -2, -2, -2, 1, 0]
    assert normalize_verdicts([True, False]).tolist() == [1, 0]
    assert normalize_verdicts(np.array([1, 0, 1])).tolist() == [1, 0, 1]
    assert normalize_verdicts(np.array([1.0, np.nan, 0.0])).tolist() == [1, -2, 0]
    assert normalize_verdicts([1, None, 0]).tolist() == [1, -2, 0]
    assert normalize_verdicts(["A", "b", "tie", "unscored"], kind="pairwise").tolist() == [
        0, 1, 2, -2,
    ]
    assert verdict_names([1, 0, -1, -2]).tolist() == ["pass", "fail", "unsure", "unscored"]
    assert verdict_names([0, 1, 2], kind="pairwise").tolist() == ["a", "b", "tie"]


@pytest.mark.parametrize(
    "bad",
    [["pass", "PASSED"], [2, 1], ["a"], np.array([0.5])],
)
def test_normalize_rejects_unknown_verdicts(bad: object) -> None:
    with pytest.raises(CalibrationInputError, match="unknown"):
        normalize_verdicts(bad)  # type: ignore[arg-type]


# What a verdict column held as Python objects may contain, odd values included.
VERDICT_OBJECTS = st.sampled_from([
    "pass", "fail", "unsure", " PASS ", "Fail", "", "nan", "none", "1", "0", "true", "False",
    "bogus", "a", "b", "tie", "A ", np.str_("pass"), None, np.nan, np.float32("nan"), pd.NA,
    pd.NaT, decimal.Decimal("NaN"), 1, 0, 1.0, -2.0, 2, True, False,
])


@given(st.lists(VERDICT_OBJECTS, max_size=8), st.sampled_from(["binary", "pairwise"]))
@settings(max_examples=400, deadline=None)
def test_object_verdicts_get_the_same_codes_and_errors_word_by_word_as_row_by_row(
    values: list[object], kind: VerdictKind,
) -> None:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values

    def outcome() -> list[int] | str:
        try:
            return normalize_verdicts(arr, kind=kind).tolist()
        except CalibrationInputError as error:
            return str(error)

    by_words = outcome()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_verdicts, "_normalize_words", lambda *args: None)
        assert outcome() == by_words


def test_words_with_missing_values_are_normalised_word_by_word() -> None:
    # The path the property above compares is the one a report's stored verdicts take.
    arr = np.array(["pass", None, np.nan, "FAIL", "pass", "unsure"], dtype=object)
    words = _verdicts._normalize_words(arr, _verdicts._table("binary"), "binary")
    assert words is not None and words.tolist() == [1, -2, -2, 0, 1, -1]
    assert _verdicts._normalize_words(np.array(["pass", pd.NA], dtype=object),
                                      _verdicts._table("binary"), "binary") is None


def test_normalize_rejects_bad_shapes_and_kind() -> None:
    with pytest.raises(CalibrationInputError):
        normalize_verdicts([["pass"]])
    with pytest.raises(CalibrationInputError):
        normalize_verdicts("pass")
    with pytest.raises(CalibrationInputError):
        normalize_verdicts(["pass"], kind="ternary")  # type: ignore[arg-type]
    with pytest.raises(CalibrationInputError):
        normalize_verdicts([True], kind="pairwise")


def test_normalize_million_strings() -> None:
    arr = np.array(["pass", "fail", "unscored", "Pass "] * 250_000)
    codes = normalize_verdicts(arr)
    assert np.bincount(codes + 2).tolist() == [250_000, 0, 250_000, 500_000]


# ----------------------------------------------------------------------------- confusion


def test_confusion_matrix_excludes_and_counts_undecided_rows() -> None:
    human = ["pass", "pass", "fail", "fail", "unsure", "pass", None]
    judge = ["pass", "fail", "pass", "fail", "pass", "unscored", "fail"]
    cm = confusion_matrix(human, judge)
    assert (cm.tp, cm.fn, cm.fp, cm.tn) == (1, 1, 1, 1)
    assert cm.n_rows == 7
    assert cm.n_human_undecided == 2
    assert cm.n_judge_unscored == 1
    assert (cm.n, cm.m0, cm.m1) == (4, 2, 2)
    d = cm.to_dict()
    assert d["m1"] == 2 and json.loads(json.dumps(d)) == d


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, -1]), st.sampled_from([0, 1, -2])), min_size=1))
def test_confusion_matches_sklearn(rows: list[tuple[int, int]]) -> None:
    h = np.array([r[0] for r in rows])
    j = np.array([r[1] for r in rows])
    cm = confusion_matrix(h, j)
    keep = (h >= 0) & (j >= 0)
    if not keep.any():
        assert cm.n == 0
        return
    expected = sk_confusion_matrix(h[keep], j[keep], labels=[0, 1])
    assert np.array_equal(cm.as_array(), expected)
    assert cm.n_human_undecided == int((h < 0).sum())
    assert cm.n_judge_unscored == int(((h >= 0) & (j < 0)).sum())


def test_confusion_rejects_misaligned() -> None:
    with pytest.raises(CalibrationInputError, match="aligned"):
        confusion_matrix([1, 0], [1])


# ----------------------------------------------------------------------------- rates


def _wilson_formula(k: int, n: int, z: float) -> tuple[float, float]:
    centre = (k + z * z / 2) / (n + z * z)
    half = z * np.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    return centre - half, centre + half


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_matches_statsmodels_and_formula(kn: tuple[int, int], conf: float) -> None:
    k, n = kn
    e = wilson_interval(k, n, confidence=conf)
    lo, hi = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    assert e.low == pytest.approx(max(0.0, lo), abs=1e-12)
    assert e.high == pytest.approx(min(1.0, hi), abs=1e-12)
    from scipy.stats import norm

    flo, fhi = _wilson_formula(k, n, float(norm.ppf(0.5 + conf / 2)))
    assert e.low == pytest.approx(max(0.0, flo), abs=1e-9)
    assert e.high == pytest.approx(min(1.0, fhi), abs=1e-9)
    assert e.low <= e.estimate <= e.high
    assert e.method == "wilson" and e.n == n and e.confidence == conf


def test_wilson_known_value_and_guards() -> None:
    e = wilson_interval(8, 10)
    assert (round(e.low, 4), round(e.high, 4)) == (0.4902, 0.9433)
    assert wilson_interval(0, 10).high > 0  # never a zero-width interval at 0/n
    refused = wilson_interval(0, 0)
    assert refused.refused and refused.estimate is None and refused.reason == "no rows"
    with pytest.raises(CalibrationInputError):
        wilson_interval(3, 2)
    with pytest.raises(CalibrationInputError):
        wilson_interval(1, 2, confidence=1.0)
    beta = wilson_interval(8, 10, method="beta")
    lo, hi = proportion_confint(8, 10, alpha=0.05, method="beta")
    assert (beta.low, beta.high) == pytest.approx((lo, hi))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1])), min_size=2))
def test_rates_match_sklearn(rows: list[tuple[int, int]]) -> None:
    h = np.array([r[0] for r in rows])
    j = np.array([r[1] for r in rows])
    r = judge_rates(h, j)
    if (h == 1).any():
        assert r.sensitivity.estimate == pytest.approx(recall_score(h, j, pos_label=1))
        assert r.fnr.estimate == pytest.approx(1 - r.sensitivity.estimate)
    else:
        assert r.sensitivity.refused and "passing" in (r.sensitivity.reason or "")
    if (h == 0).any():
        assert r.specificity.estimate == pytest.approx(recall_score(h, j, pos_label=0))
        assert r.fpr.estimate == pytest.approx(1 - r.specificity.estimate)
        assert r.fpr.low == pytest.approx(1 - r.specificity.high)
    if (h == 1).any() and (h == 0).any():
        assert r.balanced_accuracy.estimate == pytest.approx(balanced_accuracy_score(h, j))
        assert r.balanced_accuracy.low <= r.balanced_accuracy.estimate <= r.balanced_accuracy.high
        assert r.youden.estimate == pytest.approx(2 * r.balanced_accuracy.estimate - 1)
    else:
        assert r.balanced_accuracy.refused and r.youden.refused
    assert r.accuracy.estimate == pytest.approx(float((h == j).mean()))


def test_balanced_accuracy_interval_is_newcombe() -> None:
    cm = ConfusionMatrix(tp=40, fn=10, fp=12, tn=38)
    r = rates_from_confusion(cm, confidence=0.9)
    lo, hi = confint_proportions_2indep(40, 50, 12, 50, method="newcomb", compare="diff",
                                        alpha=0.1)
    assert r.youden.low == pytest.approx(lo) and r.youden.high == pytest.approx(hi)
    assert r.balanced_accuracy.low == pytest.approx((1 + lo) / 2)
    assert r.balanced_accuracy.high == pytest.approx((1 + hi) / 2)
    assert r.balanced_accuracy.estimate == pytest.approx((0.8 + 0.76) / 2)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 1])), min_size=1))
def test_swapping_pass_and_fail_swaps_sensitivity_and_specificity(
    rows: list[tuple[int, int]],
) -> None:
    h = np.array([r[0] for r in rows])
    j = np.array([r[1] for r in rows])
    a = judge_rates(h, j)
    b = judge_rates(1 - h, 1 - j)

    def nums(e: Estimate) -> tuple[object, ...]:
        return (e.estimate, e.low, e.high, e.n, e.refused)

    assert nums(a.sensitivity) == nums(b.specificity)
    assert nums(a.specificity) == nums(b.sensitivity)
    assert nums(a.fpr) == nums(b.fnr)
    assert nums(a.accuracy) == nums(b.accuracy)
    assert a.balanced_accuracy.estimate == pytest.approx(b.balanced_accuracy.estimate)


def test_rates_guards_all_unsure_and_empty() -> None:
    r = judge_rates(["unsure"] * 5, ["pass"] * 5)
    assert r.confusion.n == 0 and r.confusion.n_human_undecided == 5
    for e in (r.sensitivity, r.specificity, r.fpr, r.accuracy, r.balanced_accuracy, r.youden):
        assert e.refused and e.estimate is None and e.reason
        assert e.to_dict()["estimate"] is None
    empty = judge_rates([], [])
    assert empty.accuracy.refused


def test_to_dict_is_json_safe() -> None:
    r = judge_rates([1, 1, 0, 0], [1, 0, 0, 1])
    text = json.dumps(r.to_dict())
    assert "NaN" not in text and '"estimate": 0.5' in text
