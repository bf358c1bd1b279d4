"""The report's numbers equal direct calls of the statistics core on the same joined arrays.

The expected values are computed from the *files*, joined with pandas here, independently of the
database and of ``judges.reporting``'s own joining.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from report_data import build_report_db
from sklearn.metrics import cohen_kappa_score

from judges.calibration import (
    interval_json,
    labels_needed,
    leaderboard,
    population_rates,
    segment_aware_pass_rate,
    self_consistency,
    transported_pass_rate,
)
from judges.reporting import (
    calibration_report,
    judge_leaderboard,
    load_human_labels,
)
from judges.workspace import Workspace
from labels import CalibrateError, LabelStore
from labels.sampling import QueueSettings


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    return build_report_db(tmp_path_factory.mktemp("numbers"))


@pytest.fixture(scope="module")
def template_db(template: tuple[Path, Any]) -> Path:
    """The database each test gets a copy of (``store_copy``)."""
    return template[0]


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def expected_join(files: Any) -> pd.DataFrame:
    """Consensus human verdict + judge-a verdict + segment/doc per labelled id, sorted by id."""
    labels = pd.concat([_read(files.alice).assign(who="alice"), _read(files.bob).assign(who="bob")])
    counts = labels.groupby("id")["label"].agg(
        n_pass=lambda s: (s == "pass").sum(), n_fail=lambda s: (s == "fail").sum()
    )
    counts["human"] = np.where(counts.n_pass > counts.n_fail, "pass",
                               np.where(counts.n_fail > counts.n_pass, "fail", "unsure"))
    judge = _read(files.judge_a_cal).set_index("id")["verdict"].replace("", "unscored")
    items = pd.read_json(files.cal_items, lines=True, dtype={"id": str}).set_index("id")
    out = counts[["human"]].join(judge.rename("judge")).join(items[["segment", "doc_id"]])
    return out.sort_index().reset_index()


def cal_items_segments(files: Any) -> np.ndarray:
    """The segment of each row of the calibration verdicts file (joined by id)."""
    items = pd.read_json(files.cal_items, lines=True, dtype={"id": str}).set_index("id")
    return items.loc[_read(files.judge_a_cal)["id"], "segment"].to_numpy(dtype=str)


def test_report_equals_direct_statistics(workspace_copy: Workspace, template: Any) -> None:
    files = template[1]
    joined = expected_join(files)
    target = _read(files.judge_a_tgt)["verdict"].replace("", "unscored")
    tgt_items = pd.read_json(files.tgt_items, lines=True, dtype={"id": str})
    report = calibration_report(workspace_copy, "cal", "judge-a", target="tgt")
    data = report.to_json()
    decided = joined[joined.human.isin(["pass", "fail"]) & joined.judge.isin(["pass", "fail"])]
    sample = data["sample_rates"]  # the raw rates of the labelled sample, kept beside
    assert sample["kappa"]["estimate"] == pytest.approx(
        cohen_kappa_score(decided.human, decided.judge), abs=1e-12)
    tp = int(((decided.human == "pass") & (decided.judge == "pass")).sum())
    fp = int(((decided.human == "fail") & (decided.judge == "pass")).sum())
    assert data["confusion"]["tp"] == tp and data["confusion"]["fp"] == fp
    assert sample["sensitivity"]["estimate"] == pytest.approx(
        tp / (decided.human == "pass").sum())
    assert sample["fpr"]["estimate"] == pytest.approx(fp / (decided.human == "fail").sum())
    # The headline: labels from another dataset -> verdict-reweighted transport (every row of
    # both datasets, unscored ones included), population rates of the calibration dataset.
    cal_pop = _read(files.judge_a_cal)["verdict"].replace("", "unscored")
    cal_pop = cal_pop.to_numpy(dtype=object)
    human = joined["human"].to_numpy(dtype=object)
    judge = joined["judge"].to_numpy(dtype=object)
    headline = transported_pass_rate(human, judge, cal_pop, target.to_numpy(dtype=object))
    assert data["transfer"]["warning"] is None  # no segment shift: the plain transfer
    assert data["corrected_pass_rate"] == interval_json(headline)
    assert data["method"] == "lee_stratified" and data["design"] == "separate_calibration"
    seg_names = joined["segment"].to_numpy(dtype=str)
    aware = segment_aware_pass_rate(human, judge, seg_names, cal_pop,
                                    cal_items_segments(files), target.to_numpy(dtype=object),
                                    tgt_items["segment"].to_numpy(dtype=str))
    assert data["transfer"]["segment_aware_pass_rate"]["estimate"] == aware.estimate
    rates = population_rates(human, judge, cal_pop)
    assert data["kappa"] == interval_json(rates.kappa)
    assert data["sensitivity"] == interval_json(rates.sensitivity)
    assert data["population"] == (
        "the true (human) pass rate of all 400 target rows: the 397 the judge judged and the 3 it "
        "did not (3 unscored, 0 unsure)")
    assert data["labels_only_pass_rate"]["valid_for_target"] is False  # another run
    assert data["counts"]["target"]["unscored"] == 3
    bounds = data["human_unsure_bounds"]  # 4 rows where alice and bob tie: all pass / all fail
    assert bounds["if_all_fail"] < data["corrected_pass_rate"]["estimate"] < bounds["if_all_pass"]
    assert bounds["low"] <= data["corrected_pass_rate"]["low"]
    assert bounds["high"] >= data["corrected_pass_rate"]["high"]
    assert data["observed_pass_rate"]["estimate"] == pytest.approx(250 / 397)
    assert data["unscored"] == {"labelled": 1, "target": 3}
    cm = report.answer.confusion
    plan = labels_needed(target_half_width=0.05, n_target=397, judge_pass_rate=250 / 397,
                         q0=cm.tn / cm.m0, q1=cm.tp / cm.m1, m0=cm.m0, m1=cm.m1)
    assert data["plan"]["extra_failing"] == plan.extra_m0
    assert data["plan"]["achievable"] == plan.achievable


def test_human_human_agreement_is_cohens_kappa(store_copy: LabelStore, template: Any) -> None:
    files = template[1]
    both = _read(files.alice).merge(_read(files.bob), on="id", suffixes=("_a", "_b"))
    both = both[both.label_a.isin(["pass", "fail"]) & both.label_b.isin(["pass", "fail"])]
    human = load_human_labels(store_copy, "cal", "faithfulness")
    assert human.agreement is not None and human.n_overlap == 40
    (pair,) = human.agreement.pairwise
    assert pair.kappa.n == len(both) == 38
    assert pair.kappa.estimate == pytest.approx(cohen_kappa_score(both.label_a, both.label_b))
    assert human.annotators == ("alice", "bob")
    note = human.items.set_index("item_id")["note"]
    assert (note.str.contains(r"\*\*now\*\*")).sum() == 1


def test_flips_and_aggregation_rules(workspace_copy: Workspace, template: Any) -> None:
    files = template[1]
    calls = _read(files.swapper_cal)
    direct = self_consistency(calls["id"], calls["verdict"], order=calls["order"],
                              repeat=calls["repeat"].astype(int))
    report = calibration_report(workspace_copy, "cal", "swapper")
    data = report.to_json()
    assert data["swap_flip_rate"] == interval_json(direct.flip_rate_order)
    assert data["swap_flip_rate"]["estimate"] == pytest.approx(10 / 120)
    assert data["repeat_flip_rate"]["estimate"] is None
    assert data["flipped_items"] == 10
    # MT-Bench rule: a flipped row is unsure, so it leaves the confusion matrix.
    assert data["unsure"]["judge_labelled"] + data["unsure"]["judge_target"] > 0
    assert data["n"] + data["unsure"]["judge_labelled"] + data["unsure"]["human"] == 120
    flips = report.disagreements()
    assert set(flips["kind"]) == {"flip"} and len(flips) == 10
    majority = calibration_report(workspace_copy, "cal", "swapper", rule="majority").to_json()
    assert majority["unsure"]["judge_labelled"] == data["unsure"]["judge_labelled"]  # 1-1 ties
    assert majority["aggregation"] == "majority"


def test_leaderboard_equals_direct(workspace_copy: Workspace, template: Any) -> None:
    files = template[1]
    joined = expected_join(files)
    judge_b = _read(files.judge_b_cal).set_index("id")["verdict"]
    board = judge_leaderboard(workspace_copy, "cal", ["judge-a", "judge-b"])
    direct = leaderboard(joined["human"].to_numpy(dtype=object), {
        "judge-a": joined["judge"].to_numpy(dtype=object),
        "judge-b": joined["id"].map(judge_b).to_numpy(dtype=object),
    })
    assert [r.to_dict() for r in board.rows] == [r.to_dict() for r in direct]
    assert board.frame()["judge"].tolist() == ["judge-a", "judge-b"]


def test_design_follows_target_and_provenance(workspace_copy: Workspace) -> None:
    assert calibration_report(workspace_copy, "cal", "judge-a", target="tgt").design == (
        "separate_calibration")
    # The report follows the labels' recorded provenance (imported, selection unknown: checked
    # against the judge's verdicts), not the queue setting.
    workspace_copy.labels.save_queue_settings("cal", "faithfulness",
                                              QueueSettings(order="stratified"))
    data = calibration_report(workspace_copy, "cal", "judge-a").to_json()
    assert data["design"] in ("same_run_random", "same_run_stratified")
    # Four labelled rows where alice and bob tie could move the estimate beyond its interval:
    # the headline is the bound over both resolutions.
    assert data["method"] == "verdict_stratified+unsure_bounds" and data["answer_kind"] == "bounds"
    bounds = data["human_unsure_bounds"]
    assert (data["corrected_pass_rate"]["low"], data["corrected_pass_rate"]["high"]) == (
        bounds["low"], bounds["high"])
    assert data["selection"]["labels"] == {"unknown": 120}  # labelled rows (alice's 120)
    assert data["selection"]["check"].split(" (")[0].split(":")[0] in (
        "consistent with a random sample", "not a random sample")
    forced = calibration_report(workspace_copy, "cal", "judge-a", design="separate_calibration")
    assert forced.to_json()["method"] == "lee_stratified"
    assert forced.design_reason.startswith("chosen explicitly")
    with pytest.raises(CalibrateError, match="not rows of the target run"):
        calibration_report(workspace_copy, "cal", "judge-a", target="tgt",
                           design="same_run_random")
