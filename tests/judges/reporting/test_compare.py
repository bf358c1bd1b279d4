"""`calibrate compare`, the regression gate and the judge-change guard, through the CLI.

The card calibrates ``judge-a`` on ``cal`` (``tests/support/report_data.py``). The baseline
is judge-a's exported verdicts on ``tgt`` (t000-t249 pass, t250-t396 fail, t397-t399
unscored). The candidate answers the same questions: it loses t000-t029 (pass -> fail), gains
t250-t309 (fail -> pass), lacks t395-t399 and has two new rows. Paired: 395 rows, table
220 / 30 lost / 60 gained / 85.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from report_data import ReportFiles, build_workspace
from scipy.stats import binomtest, norm
from stores import opened_workspace

from calibrate_app.cli import cli
from judges.calibration import (
    CalibrationEvidence,
    RunCounts,
    TargetRun,
    answer_pass_rate,
    transferred_error_rates,
)
from judges.outputs.card import JudgeCard, card_from_report, write_card
from judges.reporting import calibration_report
from judges.verdicts import export_verdicts
from judges.workspace import Workspace
from labels import open_store

INTERVAL_KEYS = {"estimate", "low", "high", "n", "reason"}


@pytest.fixture
def filled(db_path: Path, report_files: ReportFiles) -> Iterator[Workspace]:
    """A workspace with every generated file imported."""
    with opened_workspace(db_path) as workspace:
        build_workspace(workspace, report_files)
        yield workspace


@pytest.fixture
def files(filled: Workspace, tmp_path: Path) -> Iterator[dict[str, Path]]:
    report = calibration_report(filled, "cal", "judge-a")
    card = card_from_report(filled, report, force=True)  # a scripted judge
    paths = {"card": write_card(card, tmp_path / "card.json")}
    paths["baseline"] = export_verdicts(filled, "tgt", "judge-a",
                                        tmp_path / "base.csv")
    rows = list(csv.DictReader(paths["baseline"].open(encoding="utf-8")))
    cand = []
    for row in rows:
        i = int(row["item_id"][1:])
        if i >= 395:
            continue
        verdict = row["verdict"]
        if i < 30:
            verdict = "fail"
        elif 250 <= i < 310:
            verdict = "pass"
        cand.append({**row, "verdict": verdict, "document_id": f"doc{i // 5}"})
    cand += [{**cand[0], "item_id": f"x{k}", "verdict": "pass"} for k in range(2)]
    paths["candidate"] = _write(tmp_path / "cand.csv", cand)
    paths["nodocs"] = _write(tmp_path / "nodocs.csv",
                             [{k: v for k, v in r.items() if k != "document_id"} for r in cand])
    paths["unverified"] = _write(tmp_path / "plain.csv", [
        {"id": r["item_id"], "verdict": r["verdict"]} for r in cand])
    paths["other_judge"] = _write(tmp_path / "other.csv", [
        {**r, "config_id": "b2:" + "0" * 32} for r in cand])
    yield paths


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _card(path: Path) -> JudgeCard:
    return JudgeCard.model_validate_json(path.read_text(encoding="utf-8"))


def test_compare_json_numbers(files: dict[str, Path]) -> None:
    result = run("compare", "--card", files["card"], files["baseline"], files["nodocs"],
                 "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"baseline", "candidate", "difference", "mcnemar_p", "n_paired", "segments",
            "warnings"} <= set(data)
    for key in ("baseline", "candidate", "difference"):
        assert set(data[key]) == INTERVAL_KEYS
    assert data["n_paired"] == 395
    assert data["table"] == {"both_pass": 220, "baseline_only": 30, "candidate_only": 60,
                             "both_fail": 85}
    assert data["excluded"] == {"baseline_only": 5, "candidate_only": 2, "not_pass_fail": 0}
    assert any("5 items only in the baseline" in w and "2 only in the candidate" in w
               for w in data["warnings"])
    card = _card(files["card"])
    assert card.evidence is not None
    evidence = CalibrationEvidence.from_json(card.evidence)
    rates = transferred_error_rates(evidence)
    assert rates is not None
    # The card's verdict-reweighted error rates: with a random calibration sample they are
    # the raw confusion rates up to the dataset's verdict mix.
    cm = card.metrics.confusion
    assert rates.a == pytest.approx(cm.tp / (cm.tp + cm.fn), abs=0.05)
    youden = rates.a - rates.b
    assert data["difference"]["estimate"] == pytest.approx((60 - 30) / 395 / youden)
    assert data["observed_difference"] == pytest.approx(30 / 395)
    assert data["mcnemar_p"] == pytest.approx(binomtest(30, 90, 0.5).pvalue, rel=1e-9)
    assert data["mcnemar_method"] == "exact" and data["documents"] is None
    # Fieller by hand: Agresti-Min paired proportions, the smoothed transferred rates.
    z = norm.ppf(0.975)
    gain, loss = 60.5 / 397, 30.5 / 397
    d, var_d = gain - loss, (gain + loss - (gain - loss) ** 2) / 397
    j = rates.a_smoothed - rates.b_smoothed
    var_j = rates.cov[0, 0] + rates.cov[1, 1] - 2 * rates.cov[0, 1]
    a = j * j - z * z * var_j
    root = (z * z * (d * d * var_j + j * j * var_d - z * z * var_j * var_d)) ** 0.5
    assert data["difference"]["low"] == pytest.approx((d * j - root) / a, rel=1e-9)
    assert data["difference"]["high"] == pytest.approx((d * j + root) / a, rel=1e-9)
    # Each version's rate is the card's answer on the 395 paired rows (250 and 280 judge
    # passes): what calibrate score gives for them.
    for key, k in (("baseline", 250), ("candidate", 280)):
        outcome = np.array([0] * k + [1] * (395 - k), dtype=np.int8)
        direct = answer_pass_rate(evidence, TargetRun(RunCounts.from_rows(outcome)),
                                  segments=False)
        assert (data[key]["estimate"], data[key]["low"]) == (
            direct.headline.estimate, direct.headline.low)
    # Segments come from the exported file (tgt: odd rows billing, even rows search).
    segments = {s["segment"]: s for s in data["segments"]}
    assert set(segments) == {"billing", "search"}
    assert segments["billing"]["n_paired"] == 197 and segments["search"]["n_paired"] == 198
    assert segments["billing"]["table"]["baseline_only"] == 15
    assert segments["search"]["table"]["candidate_only"] == 30
    assert data["verified"] is True


def test_compare_text_and_documents(files: dict[str, Path]) -> None:
    result = run("compare", "--card", files["card"], files["baseline"], files["candidate"])
    assert result.exit_code == 0, result.output
    assert "difference" in result.output and "McNemar" in result.output
    assert "395 paired" in result.output
    data = json.loads(run("compare", "--card", files["card"], files["baseline"],
                          files["candidate"], "--json").output)
    assert data["documents"] == 79 and data["mcnemar_method"] == "durkalski-clustered"
    assert data["design_effect"] >= 1.0
    flat = json.loads(run("compare", "--card", files["card"], files["baseline"],
                          files["nodocs"], "--json").output)
    assert data["difference"]["estimate"] == flat["difference"]["estimate"]
    width = data["difference"]["high"] - data["difference"]["low"]
    flat_width = flat["difference"]["high"] - flat["difference"]["low"]
    assert width >= flat_width


def test_judge_change_guard(files: dict[str, Path]) -> None:
    card = files["card"]
    changed = run("compare", "--card", card, files["baseline"], files["other_judge"])
    assert changed.exit_code == 2
    assert "rerun the baseline under the new judge" in changed.output
    assert "recalibrate" in changed.output
    for command in (["score", "--card", card, files["other_judge"]],
                    ["gate", "--card", card, files["other_judge"], "--min-pass-rate", "0.1"]):
        refused = run(*command)
        assert refused.exit_code == 2 and "rerun the baseline" in refused.output
    unverified = run("compare", "--card", card, files["baseline"], files["unverified"])
    assert unverified.exit_code == 2 and "--allow-unverified" in unverified.output
    allowed = run("compare", "--card", card, files["baseline"], files["unverified"],
                  "--allow-unverified", "--json")
    assert allowed.exit_code == 0, allowed.output
    data = json.loads(allowed.output)
    assert data["verified"] is False
    assert any(w.startswith("candidate: UNVERIFIED") for w in data["warnings"])
    assert data["n_paired"] == 395
    score = run("score", "--card", card, files["unverified"])
    assert score.exit_code == 2 and "--allow-unverified" in score.output
    text = run("score", "--card", card, files["unverified"], "--allow-unverified")
    assert text.exit_code == 0 and "UNVERIFIED" in text.output


def test_regression_gate(files: dict[str, Path]) -> None:
    card, base, cand = files["card"], files["baseline"], files["nodocs"]
    better = json.loads(run("compare", "--card", card, base, cand, "--json").output)
    low = better["difference"]["low"]
    assert low > 0  # the candidate is better
    passed = run("gate", "--card", card, "--baseline", base, cand, "--max-drop", "0.02")
    assert passed.exit_code == 0, passed.output
    assert f"{low:+.3f}" in passed.output
    # The same files the other way round: the "candidate" loses 0.08 to 0.1 of true pass rate.
    worse = json.loads(run("compare", "--card", card, cand, base, "--json").output)
    assert worse["difference"]["high"] < 0
    failed = run("gate", "--card", card, "--baseline", cand, base, "--max-drop", "0.02",
                 "--json")
    assert failed.exit_code == 1
    gate_json = json.loads(failed.output)["gate"]
    assert gate_json["passed"] is False
    assert gate_json["max_drop"] == 0.02
    assert gate_json["difference_low"] == pytest.approx(worse["difference"]["low"])
    # A tolerance wider than the worst plausible drop lets it through.
    tolerant = f"{-worse['difference']['low'] + 0.001:.4f}"
    assert run("gate", "--card", card, "--baseline", cand, base, "--max-drop",
               tolerant).exit_code == 0


def test_measured_gate_from_baseline(files: dict[str, Path]) -> None:
    card, base, cand = files["card"], files["baseline"], files["nodocs"]
    base_score = json.loads(run("score", "--card", card, base, "--json").output)
    cand_score = json.loads(run("score", "--card", card, cand, "--json").output)
    bar = base_score["corrected_pass_rate"]["low"]
    result = run("gate", "--card", card, "--baseline", base, cand, "--min-pass-rate",
                 "from-baseline", "--json")
    data = json.loads(result.output)
    assert data["gate"]["min_pass_rate"] == pytest.approx(bar)
    assert data["gate"]["min_pass_rate_from"] == "baseline"
    expected = cand_score["corrected_pass_rate"]["low"] >= bar
    assert result.exit_code == (0 if expected else 1)
    assert expected  # the candidate is better, so it clears the baseline's lower bound
    # Reversed, the worse version's lower bound is below the better one's.
    reverse = run("gate", "--card", card, "--baseline", cand, base, "--min-pass-rate",
                  "from-baseline")
    assert reverse.exit_code == 1


def test_gate_and_compare_bad_input_exit_2(files: dict[str, Path], tmp_path: Path) -> None:
    card, base, cand = files["card"], files["baseline"], files["nodocs"]
    assert run("gate", "--card", card, cand, "--max-drop", "0.02").exit_code == 2
    assert run("gate", "--card", card, cand, "--min-pass-rate",
               "from-baseline").exit_code == 2
    assert run("gate", "--card", card, cand).exit_code == 2
    assert run("gate", "--card", card, "--baseline", tmp_path / "missing.csv", cand,
               "--max-drop", "0.02").exit_code == 2
    assert run("gate", "--card", card, "--baseline", base, cand, "--max-drop",
               "1.5").exit_code == 2
    assert run("gate", "--card", card, cand, "--min-pass-rate", "high").exit_code == 2
    disjoint = _write(tmp_path / "disjoint.csv", [
        {"item_id": "zz", "verdict": "pass", "config_id": _card(card).judge.config_id}])
    nothing = run("compare", "--card", card, base, disjoint)
    assert nothing.exit_code == 2 and "same rows" in nothing.output
    assert run("compare", "--card", tmp_path / "nope.json", base, cand).exit_code == 2


def test_verdicts_import_reads_the_config_id(filled: Workspace, tmp_path: Path) -> None:
    exported = export_verdicts(filled, "tgt", "judge-a", tmp_path / "a.csv")
    db = filled.db.path
    filled.close()
    same = run("--db", db, "verdicts", "import", exported, "--dataset", "tgt", "--judge",
               "judge-a")
    assert same.exit_code == 0, same.output
    assert "0 added" in same.output
    other = run("--db", db, "verdicts", "import", exported, "--dataset", "tgt", "--judge",
                "judge-b")
    assert other.exit_code == 2
    assert "judge-a" in other.output and "config_id" in other.output
    rows = list(csv.DictReader(exported.open(encoding="utf-8")))
    unknown = _write(tmp_path / "unknown.csv", [{**r, "config_id": "b2:" + "1" * 32}
                                                for r in rows])
    refused = run("--db", db, "verdicts", "import", unknown, "--dataset", "tgt", "--judge",
                  "judge-a")
    assert refused.exit_code == 2 and "not in this database" in refused.output
    store = open_store(str(db))
    try:
        assert store.count_items("tgt") == 400
    finally:
        store.db.close()
