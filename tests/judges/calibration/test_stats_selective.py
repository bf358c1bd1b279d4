"""Selective judging: LTT p-values and rule choice (known values), escalated strata, the cascade."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import binom

from judges.calibration import (
    SELECTIONS,
    CalibrationEvidence,
    CalibrationInputError,
    LabelledRows,
    RunCounts,
    TargetRun,
    answer_pass_rate,
    binomial_p_value,
    cascade_cells,
    cascade_pass_rate,
    confidence_score,
    evidence_strata,
    hoeffding_bentkus_p_value,
    learn_then_test,
    min_labels_to_certify,
    resolve_design,
)
from judges.calibration.strata import OUTCOME_FAIL, OUTCOME_NOT_JUDGED, OUTCOME_PASS


def test_p_values_are_the_binomial_tail_and_the_hoeffding_bentkus_bound() -> None:
    assert binomial_p_value(0, 22, 0.1) == pytest.approx(0.9**22)
    assert binomial_p_value(3, 70, 0.1) == pytest.approx(binom.cdf(3, 70, 0.1))
    assert binomial_p_value(5, 0, 0.1) == 1.0
    # HB: min(exp(-n KL(r || alpha)), e * binomial tail at ceil(n r)); 0 errors: (1 - a)^n.
    assert hoeffding_bentkus_p_value(0, 30, 0.1) == pytest.approx(0.9**30)
    r, n, a = 2 / 60, 60, 0.1
    kl = r * np.log(r / a) + (1 - r) * np.log((1 - r) / (1 - a))
    assert hoeffding_bentkus_p_value(2, 60, 0.1) == pytest.approx(
        min(np.exp(-n * kl), np.e * binom.cdf(2, 60, 0.1)))
    assert hoeffding_bentkus_p_value(2, 60, 0.1) >= binomial_p_value(2, 60, 0.1)
    assert (min_labels_to_certify(0.1, 0.1), min_labels_to_certify(0.2, 0.05)) == (22, 14)


def _levels(spec: list[tuple[float, int, int]], unlabelled: int = 0) -> tuple[np.ndarray, ...]:
    """Labelled rows per score level (score, rows, wrong); ``unlabelled`` more rows per level."""
    score = np.concatenate([np.full(n, s) for s, n, _ in spec])
    wrong = np.concatenate([np.arange(n) < e for _, n, e in spec])
    population = np.concatenate([score] + [np.full(unlabelled, s) for s, _, _ in spec])
    return score, wrong, population


def test_fixed_sequence_stops_at_the_first_rule_not_certified() -> None:
    # 0.9: 40 rows, 0 wrong (p = 0.9^40); 0.7: +30 rows, 3 wrong (p = P(Bin(70, .1) <= 3));
    # 0.5: +30, 15 wrong (p ~ 1): the rule accepts score >= 0.7.
    score, wrong, pop = _levels([(0.9, 40, 0), (0.7, 30, 3), (0.5, 30, 15)], unlabelled=100)
    rule = learn_then_test(score, wrong, population_score=pop, alpha=0.1, delta=0.1)
    assert [t.threshold for t in rule.tests] == [0.9, 0.7, 0.5]
    assert [t.p_value for t in rule.tests][:2] == pytest.approx(
        [0.9**40, binom.cdf(3, 70, 0.1)])
    assert [t.rejected for t in rule.tests] == [True, True, False]
    assert (rule.threshold, rule.accepted, rule.rows) == (0.7, 270, 400)
    assert rule.accepted_share == pytest.approx(270 / 400)
    assert (rule.accepted_labelled, rule.errors) == (70, 3)
    assert rule.error_estimate == pytest.approx(3 / 70)
    assert not rule.refused and "at most 0.1" in rule.guarantee and "90%" in rule.guarantee
    assert rule.accepts([0.95, 0.7, 0.69, np.nan]).tolist() == [True, True, False, False]
    # A rule tested after a failure is never used, even if it would pass on its own.
    score2, wrong2, pop2 = _levels([(0.9, 40, 0), (0.7, 30, 9), (0.5, 300, 0)])
    rule2 = learn_then_test(score2, wrong2, population_score=pop2, alpha=0.1, delta=0.1)
    assert rule2.threshold == 0.9 and len(rule2.tests) == 2


def test_rules_with_too_few_labels_are_dropped_from_the_front_and_refusal_says_why() -> None:
    # Score 0.99 holds 10 labelled rows: (0.9)^10 > 0.1, so it could never pass; the sequence
    # starts at 0.9 (35 rows with the 10 above).
    score, wrong, pop = _levels([(0.99, 10, 0), (0.9, 25, 0), (0.5, 40, 20)])
    rule = learn_then_test(score, wrong, population_score=pop, alpha=0.1, delta=0.1)
    assert rule.tests[0].threshold == 0.9 and rule.threshold == 0.9
    bad = learn_then_test(*_levels([(0.9, 40, 8)])[:2], population_score=np.full(40, 0.9),
                          alpha=0.1, delta=0.1)
    assert bad.refused and bad.threshold is None and bad.accepted == 0
    assert "no rule is certified" in (bad.reason or "")
    assert not bad.accepts([0.99]).any()
    few = learn_then_test([0.9] * 5, [False] * 5, population_score=[0.9] * 50, alpha=0.1,
                          delta=0.1)
    assert few.refused and "at least 22 with a judge verdict" in (few.reason or "")
    with pytest.raises(CalibrationInputError, match="alpha and delta"):
        learn_then_test([0.9], [False], population_score=[0.9], alpha=0.0, delta=0.1)


def test_labels_drawn_by_stratum_are_tested_in_every_stratum() -> None:
    # Stratum 0 (judge pass): 60 accepted labelled rows, 0 wrong; stratum 1 (judge fail): 30
    # accepted, 3 wrong (10 %). Pooled 3/90 passes (p = 0.009); the per-stratum test does not.
    score = np.full(90, 0.9)
    wrong = np.r_[np.zeros(60, bool), np.arange(30) < 3]
    strata = np.r_[np.zeros(60, int), np.ones(30, int)]
    pop_strata = np.r_[np.zeros(900, int), np.ones(100, int)]
    pooled = learn_then_test(score, wrong, population_score=np.full(1000, 0.9), alpha=0.1,
                             delta=0.1)
    assert not pooled.refused
    rule = learn_then_test(score, wrong, population_score=np.full(1000, 0.9), alpha=0.1,
                           delta=0.1, strata=strata, population_strata=pop_strata,
                           strata_names=("judge pass", "judge fail"))
    # Each stratum gets its own threshold at delta / 2: the judge's passes are certified
    # (0.9 ** 60 = 0.0018), its fails are not and accept nothing.
    assert not rule.refused and rule.per_stratum
    assert rule.thresholds == (0.9, None) and rule.accepted == 900
    assert pooled.tests[0].p_value == pytest.approx(binom.cdf(3, 90, 0.1))
    by_stratum = {t.stratum: t for t in rule.tests}
    assert by_stratum[0].p_value == pytest.approx(0.9 ** 60) and by_stratum[0].rejected
    assert by_stratum[1].p_value == pytest.approx(binom.cdf(3, 30, 0.1))
    assert not by_stratum[1].rejected
    assert "every judge-verdict stratum" in rule.guarantee
    # With few failing errors both strata pass; the error estimate weights them by population.
    ok = learn_then_test(score, np.r_[np.zeros(60, bool), np.arange(30) < 0], strata=strata,
                         population_score=np.full(1000, 0.9), population_strata=pop_strata,
                         alpha=0.1, delta=0.1)
    assert not ok.refused and ok.error_estimate == 0.0
    # A stratum with population rows but no labelled row cannot be certified: it accepts
    # nothing, the other keeps its threshold.
    none = learn_then_test(score[:60], wrong[:60], strata=strata[:60],
                           population_score=np.full(1000, 0.9), population_strata=pop_strata,
                           alpha=0.1, delta=0.1)
    assert none.thresholds == (0.9, None) and none.accepted == 900


def test_confidence_score_combines_the_signals() -> None:
    s = confidence_score(agreeing=[6, 3, 0], scored=[6, 6, 0], pass_probability=[0.9, np.nan,
                                                                                  0.5])
    assert s[0] == pytest.approx(7 / 8 * 0.9) and s[1] == pytest.approx(4 / 8)
    assert np.isnan(s[2])
    both = confidence_score(agreeing=[2], scored=[2], others_agreeing=[1], others=[2])
    assert both[0] == pytest.approx(3 / 4 * 2 / 4)
    with pytest.raises(CalibrationInputError, match="go together"):
        confidence_score(agreeing=[1])


# -- escalated labels in the one estimation path ------------------------------------------


def _escalated_evidence(escalated_labels: bool = True) -> CalibrationEvidence:
    """1,000 rows: judge pass 600 (100 escalated), fail 400 (100 escalated).

    Labels: 20 random-like rows in each judge-verdict stratum outside the escalation (by verdict:
    pass 18/20, fail 2/20 human pass) and 20 escalated rows per verdict (pass 10/20, fail 8/20).
    """
    outcome = np.r_[np.zeros(600, np.int8), np.ones(400, np.int8)]
    esc = np.zeros(1000, bool)
    esc[:100] = True
    esc[600:700] = True
    lab = np.r_[np.arange(100, 120), np.arange(700, 720), np.arange(0, 20), np.arange(600, 620)]
    human = np.r_[np.arange(20) < 18, np.arange(20) < 2, np.arange(20) < 10,
                  np.arange(20) < 8].astype(np.int8)
    sel = ["by_verdict"] * 40 + (["escalated"] * 40 if escalated_labels else ["by_verdict"] * 40)
    rows = LabelledRows(
        human=human, outcome=outcome[lab], flipped=np.zeros(80, bool),
        segment=np.zeros(80, np.int64), document=np.full(80, -1, np.int64),
        selection=np.array([SELECTIONS.index(x) for x in sel], np.int8),
        share=np.full(80, np.nan), escalated=esc[lab],
    )
    return CalibrationEvidence(rows, RunCounts.from_rows(outcome),
                               escalated=RunCounts.from_rows(outcome[esc]))


def test_escalated_labels_are_their_own_strata_with_the_known_value() -> None:
    ev = _escalated_evidence()
    answer = answer_pass_rate(ev, TargetRun(ev.population, same_run=True), segments=False)
    assert answer.decision.design == "same_run_stratified"
    assert any("escalated queue" in w for w in answer.warnings)
    assert answer.strata.names == ("judge pass", "judge pass, escalated", "judge fail",
                                   "judge fail, escalated", "not judged")
    assert answer.strata.population == (500, 100, 300, 100, 0)
    # theta = 0.5 * 18/20 + 0.1 * 10/20 + 0.3 * 2/20 + 0.1 * 8/20
    assert answer.corrected.estimate == pytest.approx(0.45 + 0.05 + 0.03 + 0.04)
    strata = evidence_strata(ev, same_run=True)
    assert strata.assign([0, 0, 1, 2], escalated=[False, True, True, False]).tolist() == \
        [0, 1, 3, 4]
    # Evidence with escalation round-trips through JSON (version 2); without, it stays 1.
    data = ev.to_json()
    assert data["version"] == 2 and data["labelled"]["columns"][-2:] == ["escalated", "rows"]
    back = CalibrationEvidence.from_json(data)
    again = answer_pass_rate(back, TargetRun(back.population, same_run=True), segments=False)
    assert again.corrected.estimate == pytest.approx(answer.corrected.estimate)
    assert _plain(ev).to_json()["version"] == 1


def _plain(ev: CalibrationEvidence) -> CalibrationEvidence:
    lab = ev.labelled
    rows = LabelledRows(lab.human, lab.outcome, lab.flipped, lab.segment, lab.document,
                        np.full(lab.n, SELECTIONS.index("by_verdict"), np.int8), lab.share)
    return CalibrationEvidence(rows, ev.population)


def test_escalated_labels_without_their_escalation_are_refused() -> None:
    d = resolve_design(None, labelled_in_target=True, selections={"escalated": 10},
                       escalation_recorded=False)
    assert d.refused and "escalation that drew them" in d.reason
    d = resolve_design("same_run_random", labelled_in_target=True,
                       selections={"escalated": 10, "random": 5})
    assert d.refused
    assert resolve_design(None, labelled_in_target=True,
                          selections={"escalated": 10}).design == "same_run_stratified"


def test_a_one_stage_cascade_is_the_answer_with_escalated_strata() -> None:
    ev = _escalated_evidence()
    outcome = np.r_[np.zeros(600, np.int8), np.ones(400, np.int8)]
    esc = np.zeros(1000, bool)
    esc[:100] = True
    esc[600:700] = True
    lab = np.r_[np.arange(100, 120), np.arange(700, 720), np.arange(0, 20), np.arange(600, 620)]
    design = evidence_strata(ev, same_run=True)
    base = evidence_strata(_plain(ev), same_run=True)  # the design strata without the split
    cells = cascade_cells(np.where(esc, 1, 0), base.assign(outcome), lab, ev.labelled.human,
                          stage_names=("judge A",), stratum_names=base.counts.names)
    est = cascade_pass_rate(cells)
    answer = answer_pass_rate(ev, TargetRun(ev.population, same_run=True), segments=False)
    assert est.estimate == pytest.approx(answer.corrected.estimate)
    assert (est.low, est.high) == pytest.approx((answer.corrected.low, answer.corrected.high))
    assert sorted(cells.counts.population) == sorted(p for p in design.counts.population if p)
    assert est.method == "cascade_stratified"


def test_the_cascade_bounds_over_human_unsure_rows_as_the_report_does() -> None:
    ev = _escalated_evidence()
    human = ev.labelled.human.copy()
    human[:12] = -1  # twelve labelled rows of the large judge-pass stratum: unsure
    ev = replace(ev, labelled=replace(ev.labelled, human=human))
    outcome = np.r_[np.zeros(600, np.int8), np.ones(400, np.int8)]
    esc = np.zeros(1000, bool)
    esc[:100] = True
    esc[600:700] = True
    lab = np.r_[np.arange(100, 120), np.arange(700, 720), np.arange(0, 20), np.arange(600, 620)]
    base = evidence_strata(_plain(ev), same_run=True)
    cells = cascade_cells(np.where(esc, 1, 0), base.assign(outcome), lab, human,
                          stage_names=("judge A",), stratum_names=base.counts.names)
    est = cascade_pass_rate(cells)
    answer = answer_pass_rate(ev, TargetRun(ev.population, same_run=True), segments=False)
    assert answer.kind == "bounds"
    assert est.method == "cascade_stratified+unsure_bounds"
    assert (est.low, est.high) == pytest.approx((answer.headline.low, answer.headline.high))
    assert any("12 human-unsure labelled rows could move" in w for w in est.warnings)


def test_cascade_cells_split_each_design_stratum_only_into_settled_and_escalated() -> None:
    # Rows settled by judge A and by judge B, with either verdict, share one cell of their
    # design stratum: which stage settled a row follows thresholds tuned on these labels.
    stage = np.array([0, 0, 1, 1, 2, 0, 1, 2, 2])
    design = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1])
    lab = np.array([0, 2, 3, 4, 5, 7])
    human = np.array([1, 0, 1, 1, 0, -1], dtype=np.int8)
    cells = cascade_cells(stage, design, lab, human, stage_names=("A", "B"),
                          stratum_names=("judge pass", "judge fail"),
                          stratum_outcomes=(OUTCOME_PASS, OUTCOME_FAIL))
    c = cells.counts
    assert c.names == ("settled · judge pass", "escalated · judge pass", "settled · judge fail",
                       "escalated · judge fail")
    assert c.population == (4, 1, 2, 2)
    assert (c.labelled, c.human_pass, c.human_unsure) == ((3, 1, 1, 0), (2, 1, 0, 0),
                                                          (0, 0, 0, 1))
    assert c.outcomes == (OUTCOME_PASS, OUTCOME_NOT_JUDGED, OUTCOME_FAIL, OUTCOME_NOT_JUDGED)
    assert cells.of_rows.tolist() == [0, 0, 0, 0, 1, 2, 2, 3, 3]
