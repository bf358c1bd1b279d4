"""The one pairwise estimation path: how the labels were drawn decides the a / b / tie shares.

Worked by hand on a small constructed run: 300 rows the judge calls a (60), b (200) or tie (40),
20 labels drawn in each judge stratum (the Label page's stratified order).
"""

from __future__ import annotations

import numpy as np
import pytest

from judges.calibration import (
    SELECTIONS,
    PairwiseEvidence,
    PairwiseLabelledRows,
    PairwiseRunCounts,
    PairwiseTarget,
    answer_win_rate,
    corrected_win_rate_from_counts,
    one_order_flags,
    pairwise_outcomes,
)

# judge stratum -> human consensus of its 20 labelled rows (a, b, tie)
HUMANS = {0: (16, 2, 2), 1: (2, 16, 2), 2: (4, 6, 10)}
POPULATION = {0: 60, 1: 200, 2: 40}


def _evidence(
    *, selection: str = "by_verdict", rule: str = "all_agree", one_order: int = 0,
    labelled_one_order: int = 0, share: float | None = None,
) -> PairwiseEvidence:
    """The constructed run; ``one_order`` of the judge-b rows were judged in one order only."""
    outcome = np.concatenate([np.full(n, j) for j, n in POPULATION.items()]).astype(np.int8)
    one = np.zeros(outcome.size, dtype=bool)
    b_rows = np.flatnonzero(outcome == 1)
    one[b_rows[:one_order]] = True
    human, lab_outcome, lab_one = [], [], []
    for j, per in HUMANS.items():
        codes = np.repeat(np.arange(3), per)
        human += codes.tolist()
        lab_outcome += [j] * codes.size
        flags = [False] * codes.size
        if j == 1:
            flags[:labelled_one_order] = [True] * labelled_one_order
        lab_one += flags
    n = len(human)
    rows = PairwiseLabelledRows(
        human=np.array(human, dtype=np.int8), outcome=np.array(lab_outcome, dtype=np.int8),
        flipped=np.zeros(n, dtype=bool), one_order=np.array(lab_one, dtype=bool),
        pair=np.zeros(n, dtype=np.int64), document=np.full(n, -1, dtype=np.int64),
        selection=np.full(n, SELECTIONS.index(selection), dtype=np.int8),
        share=np.full(n, np.nan if share is None else share),
    )
    return PairwiseEvidence(rows, PairwiseRunCounts.from_rows(outcome, one_order=one),
                            rule=rule)


@pytest.fixture(scope="module")
def by_verdict() -> PairwiseEvidence:
    return _evidence()


def test_by_verdict_labels_give_the_stratified_shares_not_the_raw_matrix(
    by_verdict: PairwiseEvidence,
) -> None:
    answer = answer_win_rate(by_verdict, PairwiseTarget(by_verdict.population, same_run=True))
    assert answer.decision.design == "same_run_stratified"
    assert answer.headline.method == "verdict_stratified"
    # share_b = sum_j W_j P(human b | judge j) = (60 * 2 + 200 * 16 + 40 * 6) / 20 / 300
    b = (60 * 2 + 200 * 16 + 40 * 6) / 20 / 300
    assert answer.headline.b.estimate == pytest.approx(b, abs=1e-12)
    assert answer.headline.a.estimate + b + answer.headline.tie.estimate == pytest.approx(1.0)
    assert answer.headline.b.low < b < answer.headline.b.high
    # The raw 3 x 3 table ignores that judge-b rows were under-sampled: another number.
    table = np.zeros((3, 3))
    for j, per in HUMANS.items():
        table[:, j] = per
    raw = corrected_win_rate_from_counts(table, list(POPULATION.values()))
    assert raw.b.estimate is not None and abs(raw.b.estimate - b) > 0.05
    data = answer.to_json()
    assert data["win_rate"]["corrected"]["b"]["estimate"] == pytest.approx(b)
    assert data["design"] == "same_run_stratified" and data["answer_kind"] == "corrected"
    assert data["calibration_strata"]["judge b"] == {
        "population": 200, "labelled": 20, "a": 2, "b": 16, "tie": 2, "human_unsure": 0,
        "decided": True}
    assert not data["labels_only"]["valid_for_target"]
    assert data["population"] == "the true (human) shares of a / b / tie over all 300 rows of " \
                                 "the run"


def test_another_run_corrects_through_the_verdict_reweighted_matrix(
    by_verdict: PairwiseEvidence,
) -> None:
    # M^T pi = observed with M from the reweighted strata: on the calibration run's own
    # verdict shares the solution is the same-run point estimate exactly (Bayes).
    same = answer_win_rate(by_verdict, PairwiseTarget(by_verdict.population, same_run=True))
    other = answer_win_rate(by_verdict, PairwiseTarget(by_verdict.population))
    assert other.decision.design == "separate_calibration"
    assert other.headline.method == "matrix_stratified"
    for side in ("a", "b", "tie"):
        assert other.headline.shares()[side].estimate == pytest.approx(
            same.headline.shares()[side].estimate, abs=1e-9)
    assert other.misclassification is not None
    m = np.asarray(other.misclassification)
    np.testing.assert_allclose(m.sum(axis=1), 1.0)
    assert other.population.startswith("the true (human) shares of a / b / tie over the 300 "
                                       "target rows with a decided judge verdict")
    # a target where the judge says b more often: the corrected b share moves with it
    shifted = PairwiseRunCounts.from_rows(np.array([0] * 30 + [1] * 250 + [2] * 20))
    moved = answer_win_rate(by_verdict, PairwiseTarget(shifted))
    assert moved.headline.b.estimate > other.headline.b.estimate


def test_refusals_say_why(by_verdict: PairwiseEvidence) -> None:
    # the target has ties the calibration run never showed from the judge
    no_ties = PairwiseEvidence(
        by_verdict.labelled.take(by_verdict.labelled.outcome != 2),
        PairwiseRunCounts.from_rows(np.array([0] * 60 + [1] * 200)), rule=by_verdict.rule)
    answer = answer_win_rate(no_ties, PairwiseTarget(PairwiseRunCounts.from_rows(
        np.array([0, 1, 2] * 10))))
    assert answer.refused and answer.kind == "refused"
    assert "never says tie on the calibration set but does on 10 target rows" in (
        answer.headline.reason or "")
    assert any(w.startswith("corrected win rate refused: the judge never says tie")
               for w in answer.warnings)
    # an explicit design the provenance contradicts
    forced = answer_win_rate(by_verdict, PairwiseTarget(by_verdict.population, same_run=True),
                             design="same_run_random")
    assert forced.kind == "refused" and forced.decision.refused
    assert "chosen by_verdict" in (forced.headline.reason or "")


def test_one_order_rows_are_counted_named_and_not_decided_under_all_agree() -> None:
    ev = _evidence(one_order=30, labelled_one_order=4)
    answer = answer_win_rate(ev, PairwiseTarget(ev.population, same_run=True))
    data = answer.to_json()
    assert data["one_order"]["calibration"] == 30 and data["one_order"]["labelled"] == 4
    strata = data["calibration_strata"]
    assert strata["judge b"]["population"] == 170
    assert strata["judge b, one order only"] == {
        "population": 30, "labelled": 4, "a": 2, "b": 2, "tie": 0, "human_unsure": 0,
        "decided": False}
    assert "30 judged in one order only" in data["population"]
    assert any("30 rows were judged in one order only" in w and "all_agree" in w
               for w in answer.warnings)
    # the raw table holds the decided verdicts only: 4 one-order judge-b rows are left out
    assert sum(map(sum, answer.confusion)) == 56
    # another run: left out of the decided rows and of the matrix, said so
    target = PairwiseRunCounts.from_rows(np.array([1] * 10 + [0] * 5), one_order=np.array(
        [True] * 3 + [False] * 12))
    other = answer_win_rate(ev, PairwiseTarget(target))
    assert other.n_target == 12 and other.to_json()["counts"]["target"]["one_order"] == 3
    assert "the 3 without one (0 unsure or unscored, 3 judged in one order only)" in (
        other.population)
    # majority: the single verdict counts, and the output says so
    majority = _evidence(one_order=30, labelled_one_order=4, rule="majority")
    m = answer_win_rate(majority, PairwiseTarget(majority.population, same_run=True))
    assert "judge b, one order only" not in m.to_json()["calibration_strata"]
    assert any("under majority their single verdict counts" in w for w in m.warnings)


def test_active_labels_are_weighted_by_their_inclusion_probability() -> None:
    ev = _evidence(selection="active", share=1 / 300)
    answer = answer_win_rate(ev, PairwiseTarget(ev.population, same_run=True))
    assert answer.decision.design == "active" and answer.headline.method == "active_ipw"
    # equal probabilities: the Hajek means are the plain within-stratum shares
    assert answer.headline.b.estimate == pytest.approx((60 * 2 + 200 * 16 + 40 * 6) / 6000)


def test_evidence_json_round_trip_and_helpers(by_verdict: PairwiseEvidence) -> None:
    data = by_verdict.to_json()
    back = PairwiseEvidence.from_json(data)  # identical rows grouped: the same multiset
    assert back.to_json() == data and back.labelled.n == by_verdict.labelled.n
    np.testing.assert_array_equal(back.population.counts, by_verdict.population.counts)
    same = answer_win_rate(back, PairwiseTarget(back.population, same_run=True)).to_json()
    assert same == answer_win_rate(by_verdict, PairwiseTarget(by_verdict.population,
                                                              same_run=True)).to_json()
    assert pairwise_outcomes(["a", "tie", None, "unscored"]).tolist() == [0, 2, 4, 3]
    assert one_order_flags([2, 1, 1], [True, False, True]).tolist() == [False, True, False]


def test_forced_choice_humans_are_corrected_over_the_judges_ties() -> None:
    # LLMBar-like: the humans never tie, the judge does (its orders disagreed)
    ev = _evidence()
    no_tie = ev.labelled.take(ev.labelled.human != 2)
    forced = PairwiseEvidence(no_tie, ev.population, rule=ev.rule)
    answer = answer_win_rate(forced, PairwiseTarget(PairwiseRunCounts.from_rows(
        np.array([0] * 40 + [1] * 50 + [2] * 10))))
    assert not answer.refused and answer.headline.method == "matrix_stratified"
    assert answer.headline.tie.estimate == 0.0
    assert answer.headline.a.estimate + answer.headline.b.estimate == pytest.approx(1.0)
    assert any("over the judge's a / b / tie verdicts (least squares" in w
               for w in answer.warnings)
