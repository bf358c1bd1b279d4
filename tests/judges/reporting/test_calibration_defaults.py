"""The Calibration page opens on the demo's story: the right judge and target, a plain verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_pages import calibration_page
from markup import shown as rendered
from stores import opened_workspace

from judges.calibration.trust import trust_verdict
from judges.demo import LABELLED_DATASET, PRODUCTION_DATASET
from judges.reporting import calibration_report, default_judge, judges_on

SAME_RUN = "(the labelled dataset)"  # the page's target option for the labels' own rows


@pytest.fixture
def demo_db(demo_app_db: Path) -> Path:
    return demo_app_db


def test_the_default_judge_has_the_most_usable_rows_not_the_newest(demo_db: Path) -> None:
    with opened_workspace(demo_db) as workspace:  # closed before the page opens the file
        refs = judges_on(workspace, LABELLED_DATASET)
        real = [ref for ref in refs if not ref.stand_in]
        assert real[0].name == "qwen1.5b-oneshot"  # the newest run: 2 usable labelled rows
        best = default_judge(workspace, LABELLED_DATASET)
        assert best is not None and best.name == "qwen1.5b-claimsplit"
        used = {ref.name: calibration_report(workspace, LABELLED_DATASET, ref).answer.confusion.n
                for ref in refs}
        assert used["qwen1.5b-claimsplit"] == max(used[r.name] for r in real)
        assert used["qwen1.5b-claimsplit"] > used["qwen1.5b-oneshot"]
        # The scripted stand-in covers every labelled row, yet never opens the page.
        assert [r.name for r in refs if r.stand_in] == ["standin-simulated"]
        assert used["standin-simulated"] > used["qwen1.5b-claimsplit"]


def test_the_page_opens_on_the_story_with_a_plain_verdict(demo_db: Path) -> None:
    with opened_workspace(demo_db) as workspace:  # closed before the page opens the file
        report = calibration_report(workspace, LABELLED_DATASET, "qwen1.5b-claimsplit",
                                    target=PRODUCTION_DATASET)
        same = calibration_report(workspace, LABELLED_DATASET,
                                  "qwen1.5b-claimsplit").answer.summary()
    summary = report.answer.summary()
    at = calibration_page()
    judge = at.selectbox(key="cal_judge")
    assert judge.value == "b2:1967089ffe21956c2b7a4d04596781e0"  # the recorded config's id
    assert "claimsplit" in judge.format_func(judge.value)
    assert at.selectbox(key="cal_target").value == PRODUCTION_DATASET
    first = at.get_by_key("cal_verdict")  # the bordered box the page opens with
    headline = next(m.value for m in first.markdown if m.value.startswith("##### Passes"))
    # The verdict uses the very rates of the metrics under it (the population rates): FPR
    # 0.100 [0.046, 0.281], sensitivity 0.445 [0.315, 0.568], kappa 0.291.
    assert headline == (
        "##### Passes 10 % [5–28 %] of failing answers and misses 56 % [43–69 %] of passing "
        "ones; agreement 0.29 vs the experts' 0.73."
    )
    shown = {m.label: m.value for m in at.metric}
    assert shown["False-positive rate"] == "0.100" and shown["Sensitivity"] == "0.445"
    assert shown["Cohen's kappa"] == "0.291"
    assert [rendered(e.value) for e in first.error] == [
        "Not certified (lower bounds of sensitivity ≥ 0.80 and specificity ≥ 0.80): "
        "sensitivity is at most 0.57."
    ]
    # The icon says what the box says: no check badge on a judge that is not certified.
    assert [e.icon for e in first.error] == [":material/cancel:"]
    # Beside the verdict, in the same box: the library's answer for this judge and target. On
    # the production week the segment-aware correction spans [0, 1], so it is "can't say" with
    # the reason, and still the numbers (interval and n) to check it by.
    assert not summary.says and summary.source == "the segment-aware correction"
    h = summary.headline
    assert (h["estimate"], h["low"], h["high"], h["n"]) == (0.52, 0.0, 1.0, 95)
    answer = first.get_by_key("cal_answer")
    assert [(rendered(m.label), m.value) for m in answer.metric] == [
        (f"True pass rate of {PRODUCTION_DATASET}", "Can't say")]
    assert [rendered(c.value) for c in answer.caption] == [
        f"Because {summary.because}.",
        "The segment-aware correction: 0.520 [0.000, 1.000] · n = 95 labelled rows",
        f"Estimates {summary.estimand}.",
    ]
    assert ("in identifier, lookup, multi_page, negation (90% of the target rows) the judge is "
            "not shown to tell pass from fail") in summary.because
    # One estimand sentence, whose counts are those of "N of M target rows judged" below it.
    target = report.answer.counts["target"]
    assert shown["Target rows judged"] == f"{target['judged']} of {target['rows']}" == "88 of 600"
    assert summary.estimand == (
        "the true (human) pass rate of the 100 of 600 target rows the judge ran on: the 88 the "
        "judge judged and the 12 it did not (0 unscored, 12 unsure); the 500 it never ran on are "
        "outside")
    # The other real judge is in the leaderboard from the start, ranked last, and the reason
    # is its inconsistency (98 % of rows flip across repeats), not "n = 2, kappa 0".
    board = next(d.value for d in at.dataframe if "mcnemar_p_vs_best" in d.value.columns)
    assert board["judge"].tolist() == ["qwen1.5b-claimsplit", "qwen1.5b-oneshot"]
    assert board["note"].tolist()[0] == ""
    assert board["repeat_flip_rate"].tolist()[1] == "0.980 [0.930, 0.994]"
    # Its recorded config (imported with the verdicts) says majority: 78 rows decided.
    assert board["rows used"].tolist() == ["86 of 200", "78 of 200"]
    assert board["note"].tolist()[1] == ""
    # Under "all must agree" its flips leave almost every row unsure, and the page says why.
    at.selectbox(key="cal_rule").set_value("all_agree").run()
    assert not at.exception, at.exception
    reason = next(t.value for t in at.text if t.value.startswith("2. qwen1.5b-oneshot: "))
    assert "flips across repeats on 98% of rows" in reason
    assert "leaves 98 of 100 judged rows unsure" in reason and "rest on 2 rows" in reason
    at.selectbox(key="cal_rule").set_value("judge").run()
    # The eval owner's rule is a setting: a lower bar for sensitivity changes the decision.
    at.number_input(key="cal_min_sensitivity").set_value(0.30).run()
    assert not at.error
    undecided = [w for w in at.get_by_key("cal_verdict").warning
                 if rendered(w.value).startswith("Undecided against the rule")]
    assert [w.icon for w in undecided] == [":material/help:"]
    # On its own labelled rows the answer is a number: the point, its interval and n.
    at.selectbox(key="cal_target").set_value(SAME_RUN).run()
    assert not at.exception, at.exception
    assert same.says and same.source == "the corrected pass rate bounded over the human-unsure rows"
    h = same.headline
    assert [(rendered(m.label), m.value) for m in at.get_by_key("cal_answer").metric] == [
        (f"True pass rate of {LABELLED_DATASET}", f"{h['estimate']:.3f}")]
    assert [rendered(c.value) for c in at.get_by_key("cal_answer").caption] == [
        f"CI {h['low']:.3f}–{h['high']:.3f} · n = {h['n']} labelled rows · {same.source}",
        f"Estimates {same.estimand}.",
    ]


def test_the_page_and_the_library_say_the_same(demo_db: Path) -> None:
    with opened_workspace(demo_db) as workspace:  # closed before the page opens the file
        ref = default_judge(workspace, LABELLED_DATASET)
        assert ref is not None
        report = calibration_report(workspace, LABELLED_DATASET, ref, target=PRODUCTION_DATASET)
        agreement = report.human.agreement
        assert agreement is not None
        verdict = trust_verdict(report.answer.rates.sensitivity, report.answer.rates.specificity,
                                kappa=report.answer.kappa,
                                human_kappa=agreement.mean_pairwise_kappa)
        assert verdict.status == "not certified"
        assert not verdict.small_sample  # 54 passing and 32 failing rows


def test_the_page_shows_the_transfer_check_and_offers_active_labelling(demo_db: Path) -> None:
    with opened_workspace(demo_db) as workspace:  # closed before the page opens the file
        data = calibration_report(workspace, LABELLED_DATASET, "qwen1.5b-claimsplit",
                                  target=PRODUCTION_DATASET).to_json()
    at = calibration_page()
    assert any(s.value == "Does the correction transfer to the target?" for s in at.subheader)
    assert any("here it likely fails" in w.value for w in at.warning)
    shown = {m.label: m.value for m in at.metric}
    aware = data["transfer"]["segment_aware_pass_rate"]
    assert shown["Segment-aware corrected"] == f"{aware['estimate']:.3f}"
    captions = " ".join(c.value for c in at.caption)
    assert "Active order (judge-uncertain rows served more often" in captions
    assert "fewer labels than a random order" in captions
