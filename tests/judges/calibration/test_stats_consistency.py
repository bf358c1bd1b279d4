"""Self-consistency: flips across orders and repeats, MT-Bench and majority aggregation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from judges.calibration import CalibrationInputError, self_consistency, self_consistency_matrix

ORDERS = ["original", "swapped"]


def test_db_rows_pairwise_mt_bench_rule() -> None:
    # Rows as a DB query returns them: (item_id, repeat, order, verdict).
    rows = [
        ("q1", 0, "original", "a"), ("q1", 0, "swapped", "a"),  # consistent -> a
        ("q2", 0, "original", "a"), ("q2", 0, "swapped", "b"),  # order flip -> tie
        ("q3", 0, "original", "tie"), ("q3", 0, "swapped", "unscored"),  # one scored -> tie
        ("q4", 0, "original", "unscored"), ("q4", 0, "swapped", "unscored"),  # -> unscored
        ("q5", 0, "original", "b"), ("q5", 0, "swapped", "b"),
        ("q5", 1, "original", "b"), ("q5", 1, "swapped", "a"),  # repeat 1 flips across orders
    ]
    item, rep, order, verdict = (list(c) for c in zip(*rows, strict=True))
    r = self_consistency(item, verdict, order=order, repeat=rep, kind="pairwise")
    assert r.item_ids.tolist() == ["q1", "q2", "q3", "q4", "q5"]
    assert r.verdicts.tolist() == ["a", "tie", "tie", "unscored", "tie"]
    assert r.order_flipped.tolist() == [False, True, False, False, True]
    assert r.n_order_pairs == 4 and r.n_order_pairs_flipped == 2  # q1, q2, q5 r0, q5 r1
    # Items with a comparable order pair: q1, q2, q5 -> 2 of 3 flipped.
    lo, hi = proportion_confint(2, 3, alpha=0.05, method="wilson")
    assert (r.flip_rate_order.estimate, r.flip_rate_order.low, r.flip_rate_order.high) == (
        pytest.approx(2 / 3), pytest.approx(lo), pytest.approx(hi))
    # Repeats: only q5 has two repeats per order; its swapped order flips (b, a).
    assert r.repeat_flipped.tolist() == [False, False, False, False, True]
    assert r.flip_rate_repeat.estimate == 1.0 and r.flip_rate_repeat.n == 1
    assert r.n_scored.tolist() == [2, 2, 1, 0, 4] and r.n_unscored_items == 1
    assert r.n_calls.tolist() == [2, 2, 2, 2, 4]
    s = r.summary()
    assert s["n_items"] == 5 and "verdicts" not in s


def test_majority_rule() -> None:
    item = ["x"] * 3 + ["y"] * 4 + ["z"] * 2
    verdict = ["pass", "pass", "fail", "pass", "pass", "fail", "fail", "fail", "unscored"]
    r = self_consistency(item, verdict, repeat=[0, 1, 2, 0, 1, 2, 3, 0, 1], rule="majority")
    assert r.verdicts.tolist() == ["pass", "unsure", "fail"]  # y: 2-2 tie -> unsure
    assert r.any_flipped.tolist() == [True, True, False]
    all_agree = self_consistency(item, verdict, repeat=[0, 1, 2, 0, 1, 2, 3, 0, 1])
    assert all_agree.verdicts.tolist() == ["unsure", "unsure", "fail"]
    assert all_agree.flip_rate_order.refused  # no swapped calls at all


def test_as_shown_swaps_a_and_b_back() -> None:
    item = ["q", "q"]
    verdict = ["a", "b"]  # the same answer preferred both times (shown first, then second)
    aligned = self_consistency(item, verdict, order=ORDERS, kind="pairwise")
    shown = self_consistency(item, verdict, order=ORDERS, kind="pairwise",
                             swapped_verdicts="as_shown")
    assert aligned.verdicts.tolist() == ["tie"] and aligned.order_flipped.tolist() == [True]
    assert shown.verdicts.tolist() == ["a"] and shown.order_flipped.tolist() == [False]


def test_unsure_is_a_verdict_unscored_is_ignored() -> None:
    r = self_consistency(["i", "i", "j", "j"], ["pass", "unsure", "pass", "unscored"],
                         order=ORDERS * 2)
    assert r.verdicts.tolist() == ["unsure", "pass"]
    assert r.order_flipped.tolist() == [True, False]
    assert r.flip_rate_order.n == 1


def test_matrix_input_matches_long_input() -> None:
    rng = np.random.default_rng(2)
    mat = rng.choice(["pass", "fail", "unscored"], size=(50, 4), p=[0.6, 0.3, 0.1])
    orders = ["original", "swapped", "original", "swapped"]
    a = self_consistency_matrix(mat, orders=orders)
    b = self_consistency(
        np.repeat(np.arange(50), 4), mat.ravel(), order=np.tile(orders, 50),
        repeat=np.tile([0, 0, 1, 1], 50),
    )
    assert a.verdicts.tolist() == b.verdicts.tolist()
    assert a.flip_rate_order.to_dict() == b.flip_rate_order.to_dict()
    assert a.flip_rate_repeat.to_dict() == b.flip_rate_repeat.to_dict()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["pass", "fail", "unscored"]), min_size=2,
                         max_size=2), min_size=1, max_size=30))
def test_order_flip_rate_against_brute_force(rows: list[list[str]]) -> None:
    r = self_consistency_matrix(rows, orders=ORDERS)
    comparable = [a != "unscored" and b != "unscored" for a, b in rows]
    flipped = [c and a != b for (a, b), c in zip(rows, comparable, strict=True)]
    if not any(comparable):
        assert r.flip_rate_order.refused
    else:
        assert r.flip_rate_order.estimate == pytest.approx(sum(flipped) / sum(comparable))
    for (a, b), v in zip(rows, r.verdicts.tolist(), strict=True):
        scored = {x for x in (a, b) if x != "unscored"}
        expected = "unscored" if not scored else (scored.pop() if len(scored) == 1 else "unsure")
        assert v == expected


def test_consistency_input_errors() -> None:
    with pytest.raises(CalibrationInputError, match="duplicate"):
        self_consistency(["q", "q"], ["pass", "fail"])
    with pytest.raises(CalibrationInputError, match="order"):
        self_consistency(["q"], ["pass"], order=["reversed"])
    with pytest.raises(CalibrationInputError):
        self_consistency(["q", "r"], ["pass"])
    with pytest.raises(CalibrationInputError):
        self_consistency(["q"], ["pass"], rule="vote")  # type: ignore[arg-type]
    with pytest.raises(CalibrationInputError):
        self_consistency_matrix(["pass", "fail"])
    empty = self_consistency([], [])
    assert empty.verdicts.tolist() == [] and empty.flip_rate_any.refused
