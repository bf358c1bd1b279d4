"""Pairwise (a / b / tie) statistics: per-vote agreement, 3-class kappa, corrected win rate."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import judges.calibration as cal

HUMAN = ["a", "b", "tie", "a", "b", "b", "tie", "a", "unsure"]
JUDGE = ["a", "a", "tie", "b", "b", "b", "b", "a", "a"]
ROWS = [1, 1, 2, 3, 3, 4, 5, 6, 6]


def test_vote_agreement_counts_every_vote_and_drops_ties_on_either_side() -> None:
    r = cal.vote_agreement(HUMAN, JUDGE)
    # decided votes: 8 (the unsure one excluded); equal: a/a, tie/tie, b/b, b/b, a/a = 5
    assert (r.with_ties.estimate, r.with_ties.n, r.excluded) == (5 / 8, 8, 1)
    # without ties: drop rows 3 (tie/tie) and 7 (tie/b): 6 votes, 4 equal
    assert (r.without_ties.estimate, r.without_ties.n) == (4 / 6, 6)
    assert r.with_ties.method == "wilson"


def test_vote_agreement_cluster_bootstrap_keeps_the_point_and_widens_for_shared_rows() -> None:
    rng = np.random.default_rng(3)
    human = np.repeat(rng.choice(["a", "b", "tie"], size=200), 3)
    judge = np.repeat(rng.choice(["a", "b", "tie"], size=200), 3)  # one verdict per row
    rows = np.repeat(np.arange(200), 3)
    wilson = cal.vote_agreement(human, judge)
    boot = cal.vote_agreement(human, judge, rows=rows, rng=np.random.default_rng(0))
    assert boot.with_ties.estimate == wilson.with_ties.estimate
    assert boot.with_ties.method == "row-cluster-bootstrap"
    assert boot.n_rows == 200
    # three identical votes per row: the effective n is a third, the interval ~sqrt(3) wider
    assert boot.with_ties.width > 1.4 * wilson.with_ties.width


def test_vote_pair_agreement_counts_pairs_within_rows() -> None:
    r = cal.vote_pair_agreement(["r1", "r1", "r1", "r2", "r2"], ["a", "a", "tie", "b", "a"])
    # r1: pairs (a,a) (a,tie) (a,tie) -> 1 of 3; r2: (b,a) -> 0 of 1
    assert (r.with_ties.estimate, r.with_ties.n) == (0.25, 4)
    # without ties: r1 (a,a) -> 1 of 1; r2 (b,a) -> 0 of 1
    assert (r.without_ties.estimate, r.without_ties.n) == (0.5, 2)
    assert r.n_rows == 2


def test_confusion_and_kappa_match_sklearn() -> None:
    table = cal.pairwise_confusion(HUMAN, JUDGE)
    assert table.table == ((2, 1, 0), (1, 2, 0), (0, 1, 1))
    assert (table.n, table.excluded) == (8, 1)
    keep = [i for i, h in enumerate(HUMAN) if h != "unsure"]
    expected = cohen_kappa_score([HUMAN[i] for i in keep], [JUDGE[i] for i in keep])
    k = cal.vote_kappa(HUMAN, JUDGE)
    assert k.estimate == pytest.approx(expected, abs=1e-12)
    clustered = cal.vote_kappa(HUMAN, JUDGE, rows=ROWS, rng=np.random.default_rng(1))
    assert clustered.estimate == pytest.approx(expected, abs=1e-12)
    assert clustered.method == "cohen-kappa-row-cluster-bootstrap"
    assert clustered.low <= clustered.estimate <= clustered.high


def test_consensus_reads_a_split_as_a_tie() -> None:
    ids, verdicts = cal.vote_consensus(["x", "x", "y", "y", "y", "z"], ["a", "b", "b", "b", "tie",
                                                                   "unsure"])
    assert ids.tolist() == ["x", "y", "z"]
    assert verdicts.tolist() == ["tie", "b", "unsure"]


def test_corrected_win_rate_inverts_the_misclassification_exactly() -> None:
    m = np.array([[0.8, 0.1, 0.1], [0.1, 0.7, 0.2], [0.25, 0.25, 0.5]])
    pi = np.array([0.2, 0.5, 0.3])
    calibration = np.rint(m * 1000).astype(int)  # 1000 rows per human class
    target = np.rint(m.T @ pi * 100000).astype(int)
    r = cal.corrected_win_rate_from_counts(calibration, target)
    assert [r.a.estimate, r.b.estimate, r.tie.estimate] == pytest.approx(pi.tolist(), abs=1e-9)
    assert not r.clipped and not r.refused
    for est, true in zip((r.a, r.b, r.tie), pi, strict=True):
        assert est.low < true < est.high
        assert est.width < 0.1  # 1,000 labelled rows per class: about +-0.04
    # the observed shares are the judge's own, far from the truth
    assert r.observed[1].estimate == pytest.approx(0.445, abs=1e-3)
    boot = cal.corrected_win_rate_from_counts(calibration, target, method="bootstrap",
                                          rng=np.random.default_rng(0), n_boot=500)
    assert boot.b.estimate == pytest.approx(r.b.estimate)
    assert boot.b.low < 0.5 < boot.b.high


def test_corrected_win_rate_from_arrays_matches_counts() -> None:
    human = ["a"] * 30 + ["b"] * 40 + ["tie"] * 30
    judge = ["a"] * 25 + ["tie"] * 5 + ["b"] * 35 + ["a"] * 5 + ["tie"] * 20 + ["b"] * 10
    target = ["a"] * 300 + ["b"] * 500 + ["tie"] * 200 + ["unscored"] * 7
    r = cal.corrected_win_rate(human, judge, target)
    c = cal.corrected_win_rate_from_counts([[25, 0, 5], [5, 35, 0], [0, 10, 20]], [300, 500, 200])
    assert r.to_dict() == c.to_dict()
    assert r.n_target == 1000 and r.m == (30, 40, 30)
    assert abs(r.a.estimate + r.b.estimate + r.tie.estimate - 1) < 1e-12


def test_corrected_win_rate_refuses_what_it_cannot_estimate() -> None:
    no_b = cal.corrected_win_rate_from_counts([[5, 1, 1], [0, 0, 0], [1, 1, 5]], [10, 10, 5])
    assert no_b.refused and "humans say b" in (no_b.reason or "")
    assert no_b.a.estimate is None
    chance = cal.corrected_win_rate_from_counts([[10, 10, 10]] * 3, [10, 10, 10])
    assert chance.refused and "chance" in (chance.reason or "")
    empty = cal.corrected_win_rate_from_counts([[5, 1, 1], [1, 5, 1], [1, 1, 5]], [0, 0, 0])
    assert empty.refused
    with pytest.raises(cal.CalibrationInputError):
        cal.corrected_win_rate_from_counts([[1, 2], [3, 4]], [1, 2])
    with pytest.raises(cal.CalibrationInputError):
        cal.corrected_win_rate_from_counts([[5, 1, 1]] * 3, [1, 1, 1], method="bootstrap")


def test_corrected_win_rate_projects_onto_the_simplex_and_says_so() -> None:
    # the judge says "a" far more often than its error rates allow
    r = cal.corrected_win_rate_from_counts([[40, 5, 5], [5, 40, 5], [5, 5, 40]], [990, 5, 5])
    assert r.clipped
    assert r.b.estimate == 0.0 and r.a.estimate == pytest.approx(1.0)
    assert any("projected" in w for w in r.warnings)
    assert r.a.low <= r.a.estimate <= r.a.high


def test_forced_choice_data_gets_the_two_class_correction() -> None:
    # no tie anywhere: b is the "positive" class of Rogan-Gladen
    calibration = [[40, 10, 0], [5, 45, 0], [0, 0, 0]]
    target = [300, 700, 0]
    r = cal.corrected_win_rate_from_counts(calibration, target)
    assert not r.refused
    q1, q0, p = 45 / 50, 40 / 50, 0.7
    theta = (p + q0 - 1) / (q0 + q1 - 1)
    assert r.b.estimate == pytest.approx(theta)
    assert r.a.estimate == pytest.approx(1 - theta)
    assert (r.tie.estimate, r.tie.low, r.tie.high) == (0.0, 0.0, 0.0)
    assert any("two-class" in w for w in r.warnings)
    assert r.b.low < theta < r.b.high
    # a judge that says tie while the humans never do cannot be corrected: refused
    judge_ties = cal.corrected_win_rate_from_counts([[40, 5, 5], [5, 40, 5], [0, 0, 0]], target)
    assert judge_ties.refused and "tie" in (judge_ties.reason or "")
