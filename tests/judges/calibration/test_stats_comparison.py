"""McNemar between two judges and the leaderboard."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar

from judges.calibration import CalibrationInputError, leaderboard, mcnemar_test

rows3 = st.lists(
    st.tuples(st.sampled_from([0, 1, -1]), st.sampled_from([0, 1, -2]), st.sampled_from([0, 1])),
    min_size=1, max_size=200,
)


@settings(max_examples=150, deadline=None)
@given(rows3)
def test_mcnemar_matches_statsmodels_exact(rows: list[tuple[int, int, int]]) -> None:
    h, a, b = (np.array(c) for c in zip(*rows, strict=True))
    r = mcnemar_test(h, a, b)
    ok = (h >= 0) & (a >= 0) & (b >= 0)
    if not ok.any():
        assert r.refused and r.pvalue is None and r.difference.refused
        return
    ar, br = a[ok] == h[ok], b[ok] == h[ok]
    table = [[int((ar & br).sum()), int((ar & ~br).sum())],
             [int((~ar & br).sum()), int((~ar & ~br).sum())]]
    ref = mcnemar(table, exact=True)
    assert r.pvalue == pytest.approx(ref.pvalue, abs=1e-12)
    assert r.statistic == ref.statistic
    disc = table[0][1] + table[1][0]
    if disc:
        assert r.pvalue == pytest.approx(
            min(1.0, binomtest(table[0][1], disc, 0.5).pvalue), abs=1e-9)
    assert r.n == int(ok.sum()) and r.n_excluded == len(rows) - r.n
    assert r.difference.estimate == pytest.approx(r.accuracy_a - r.accuracy_b)
    assert -1 <= r.difference.low <= r.difference.high <= 1


def test_mcnemar_known_value_and_misaligned() -> None:
    r = mcnemar_test([1] * 10, [1] * 10, [1] * 2 + [0] * 8)
    assert (r.n_a_only, r.n_b_only) == (8, 0)
    assert r.pvalue == pytest.approx(2 * 0.5**8)
    assert r.difference.low > 0  # A clearly better
    with pytest.raises(CalibrationInputError):
        mcnemar_test([1, 0], [1, 0], [1])


def test_leaderboard_sorted_by_kappa_with_mcnemar_vs_best() -> None:
    rng = np.random.default_rng(5)
    human = (rng.random(400) < 0.5).astype(int)

    def noisy(acc: float) -> np.ndarray:
        return np.where(rng.random(400) < acc, human, 1 - human)

    judges = {"weak": noisy(0.7), "strong": noisy(0.92), "mid": noisy(0.82),
              "always_pass": np.ones(400, dtype=int)}
    board = leaderboard(human, judges)
    assert [r.judge for r in board][:3] == ["strong", "mid", "weak"]
    assert [r.rank for r in board] == [1, 2, 3, 4]
    kappas = [r.kappa.estimate for r in board[:3]]
    assert kappas == sorted(kappas, reverse=True)
    for r in board[:3]:
        assert r.kappa.estimate == pytest.approx(cohen_kappa_score(human, judges[r.judge]))
    assert board[0].mcnemar_vs_best is None and board[0].mcnemar_p_vs_best is None
    assert board[2].mcnemar_p_vs_best is not None and board[2].mcnemar_p_vs_best < 1e-6
    # A judge that passes everything used one category: its kappa is refused (0 by
    # construction, statsmodels' SE undefined), and a refused kappa ranks last.
    assert board[3].judge == "always_pass" and board[3].kappa.refused
    assert "single category" in (board[3].kappa.reason or "")
    assert board[3].specificity.estimate == 0.0
    d = board[1].to_dict()
    assert d["judge"] == "mid" and d["mcnemar_vs_best"]["pvalue"] is not None


def test_leaderboard_guards() -> None:
    with pytest.raises(CalibrationInputError):
        leaderboard([1, 0], {})
    with pytest.raises(CalibrationInputError):
        leaderboard([1, 0], {"j": [1]})
    board = leaderboard([1, 1], {"j": [1, 1], "k": ["unscored", "unscored"]})
    assert all(r.kappa.refused for r in board)
    assert board[1].n_judge_unscored == 2 or board[0].n_judge_unscored == 2
