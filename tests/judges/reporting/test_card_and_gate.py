"""Judge cards round-trip, never hold a key, catch edits; the gate's numbers and decisions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from report_data import build_report_db

from calibrate_app.cli import cli
from judges.calibration import (
    CalibrationEvidence,
    LabelledRows,
    RunCounts,
    StratumCounts,
    TargetRun,
    answer_pass_rate,
    interval_json,
    transported_pass_rate_from_counts,
)
from judges.outputs.card import (
    CardError,
    card_from_report,
    dumps_card,
    load_card,
    loads_card,
    write_card,
)
from judges.outputs.gate import (
    VerdictsFileError,
    gate,
    read_verdicts_file,
    score_file,
    score_verdicts,
)
from judges.reporting import calibration_report
from judges.verdicts import dataset_keys, judge_verdicts
from judges.workspace import Workspace

CANARY = "sk-canary-3f9c1e77d2b04a5c"


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test data plus a real (scripted) judge run with repeats and swapped orders."""
    db, _ = build_report_db(tmp_path_factory.mktemp("card"))
    result = CliRunner().invoke(cli, [
        "--db", str(db), "judge", "run", "faithfulness", "--dataset", "cal", "--model",
        "scripted/demo", "--swap", "--repeats", "2", "--limit", "24",
    ])
    assert result.exit_code == 0, result.output
    return db


def test_card_round_trips_in_json_and_yaml(workspace_copy: Workspace, tmp_path: Path) -> None:
    report = calibration_report(workspace_copy, "cal", "faithfulness")
    # A scripted judge on 24 rows: refused unless forced (tests/judges/reporting/
    # test_card_rules.py), and the forced card says why inside.
    card = card_from_report(workspace_copy, report, force=True)
    assert card.judge.stand_in and card.forced and card.forced[0].startswith(
        "the verdicts come from scripted/demo, a stand-in")
    assert card.judge.config is not None
    assert card.judge.config["model"] == "scripted/demo"
    assert card.judge.policy.repeats == 2 and card.judge.policy.swap is True
    # The rule is the judge config's own aggregation (the built-in says majority).
    assert card.judge.policy.aggregation == report.judge.config.aggregation == "majority"
    assert card.judge.params == card.judge.config["generation"]
    assert card.calibration.content_hash == workspace_copy.labels.dataset_content_hash("cal")
    assert card.calibration.rows == 120 and card.calibration.annotators == ["alice", "bob"]
    assert card.created_at.utcoffset() is not None and card.created_at.utcoffset().seconds == 0
    assert card.software["duckdb"] and card.software["python"]
    data = report.to_json()
    assert card.metrics.sensitivity.model_dump() == data["sensitivity"]
    assert card.metrics.confusion.model_dump() == data["confusion"]
    assert card.metrics.m0 == data["m0"] and card.metrics.m1 == data["m1"]
    assert card.metrics.swap_flip_rate.model_dump() == data["swap_flip_rate"]
    for suffix in (".json", ".yaml"):
        path = write_card(card, tmp_path / f"card{suffix}")
        loaded = load_card(path)
        assert loaded == card
        assert dumps_card(loaded, format="json") == dumps_card(card, format="json")


def test_card_holds_no_key(db_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CALIBRATE_OPENAI_API_KEY",
                 "CALIBRATE_ANTHROPIC_API_KEY"):
        monkeypatch.setenv(name, CANARY)
    for suffix in (".json", ".yaml"):
        out = tmp_path / f"card{suffix}"
        result = CliRunner().invoke(cli, ["--db", str(db_copy), "card", "export", "--dataset",
                                          "cal", "--judge", "faithfulness", "-o", str(out),
                                          "--force"])
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        assert CANARY not in text and CANARY[:12] not in text
        assert "api_key" not in text.lower()
        assert CANARY not in result.output


def test_the_card_policy_and_a_rows_calls_are_read_without_every_call(
    workspace_copy: Workspace,
) -> None:
    """The card's repeats and swap, and the calls of one row, come from SQL on those rows.

    They used to load every per-call row of the dataset (10 M at report scale).
    """
    report = calibration_report(workspace_copy, "cal", "faithfulness")
    config_id = report.judge.config_id
    judge_store = workspace_copy.judges
    keys = dataset_keys(workspace_copy, "cal")
    assert judge_store.call_layout(config_id, keys) == (2, True)
    every = judge_verdicts(workspace_copy, "cal", config_id)
    assert judge_store.call_layout(config_id, dataset_keys(workspace_copy,
                                                           "cal").slice(0, 0)) == \
        (0, False)
    judged = every["item_id"].iloc[0]
    one = report.judge_items.call_rows([judged])
    assert len(one) == 4  # 2 repeats x 2 orders
    pd.testing.assert_frame_equal(
        one, every[every["item_id"] == judged].reset_index(drop=True))
    assert report.judge_items.call_rows([]).empty
    assert len(report.judge_items.call_rows()) == len(every)


def test_edited_config_is_refused(workspace_copy: Workspace, tmp_path: Path) -> None:
    report = calibration_report(workspace_copy, "cal", "faithfulness")
    card = card_from_report(workspace_copy, report, force=True)
    path = write_card(card, tmp_path / "card.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["judge"]["config"]["template"] += "\nBe lenient."
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CardError, match="edited after calibration"):
        load_card(path)
    data["judge"]["config"] = None
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CardError, match="missing"):
        load_card(path)
    with pytest.raises(CardError, match="must end in"):
        load_card(tmp_path / "card.txt")


def test_gate_rejects_verdicts_of_another_config(workspace_copy: Workspace, tmp_path: Path) -> None:
    report = calibration_report(workspace_copy, "cal", "faithfulness")
    card = card_from_report(workspace_copy, report, force=True)
    path = write_card(card, tmp_path / "card.json")
    verdicts = tmp_path / "other.csv"
    result = CliRunner().invoke(cli, ["--db", str(workspace_copy.db.path), "verdicts", "export",
                                      "--dataset", "tgt", "--judge", "judge-a", "-o",
                                      str(verdicts)])
    workspace_copy.db.close()
    assert result.exit_code == 0, result.output
    gated = CliRunner().invoke(cli, ["gate", "--card", str(path), str(verdicts),
                                     "--min-pass-rate", "0.1"])
    assert gated.exit_code == 2
    assert card.judge.config_id in gated.output


def test_score_answers_from_the_cards_evidence_and_old_cards_are_refused(
    workspace_copy: Workspace, tmp_path: Path
) -> None:
    report = calibration_report(workspace_copy, "cal", "judge-a")
    card = card_from_report(workspace_copy, report, force=True)
    assert card.metrics.strata == report.to_json()["calibration_strata"]
    assert card.evidence is not None and card.estimation is not None
    new = tmp_path / "new.jsonl"
    rows = [{"item_id": f"n{i}", "verdict": "pass" if i < 70 else "fail",
             "config_id": card.judge.config_id} for i in range(100)]
    rows.append({"item_id": "n100", "verdict": None, "config_id": card.judge.config_id})
    new.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    score = score_file(card, new)
    # New rows: the judge's verdict-reweighted error rates transferred, the unscored row kept
    # in the estimand as the third outcome, from the card's evidence alone.
    evidence = CalibrationEvidence.from_json(card.evidence)
    outcome = np.array([0] * 70 + [1] * 30 + [3], dtype=np.int8)
    direct = answer_pass_rate(evidence, TargetRun(RunCounts.from_rows(outcome)),
                              confidence=card.estimation.confidence)
    assert interval_json(score.corrected) == interval_json(direct.headline)
    assert score.corrected.method == "lee_stratified"
    cal = _strata_counts(evidence)
    assert interval_json(score.corrected) == interval_json(
        transported_pass_rate_from_counts(cal, (70, 30, 1)))
    assert score.n == 100 and score.k == 70 and score.unscored == 1
    data = score.to_json()
    assert data["corrected_pass_rate"]["estimate"] == direct.headline.estimate
    assert data["labels_only_pass_rate"]["valid_for_target"] is False
    assert not any("config_id" in w for w in data["warnings"])

    low, est = direct.headline.low, direct.headline.estimate
    assert low is not None and est is not None
    assert gate(score, min_pass_rate=low).passed
    assert not gate(score, min_pass_rate=low + 1e-6).passed
    assert gate(score, min_pass_rate=est, on="estimate").passed
    decision = gate(score, min_pass_rate=0.99)
    assert not decision.passed and "< 0.99" in decision.reason
    with pytest.raises(ValueError):
        gate(score, min_pass_rate=1.2)

    old = card.to_json()
    old["schema_version"] = 1
    with pytest.raises(CardError, match="re-export it: calibrate card export --dataset cal "
                                        "--judge judge-a"):
        loads_card(json.dumps(old), source="old.json")


def _strata_counts(evidence: CalibrationEvidence) -> StratumCounts:
    """The three base strata of the evidence's rows the judge ran on, counted here."""
    lab = evidence.labelled
    ran = lab.outcome != 4
    stratum = np.minimum(lab.outcome[ran], 2)
    by_outcome = evidence.population.by_outcome()
    population = [int(by_outcome[0]), int(by_outcome[1]), int(by_outcome[2] + by_outcome[3])]
    h = lab.human[ran]
    labelled = tuple(int(((stratum == s) & (h >= 0)).sum()) for s in range(3))
    passed = tuple(int(((stratum == s) & (h == 1)).sum()) for s in range(3))
    unsure = tuple(int(((stratum == s) & (h < 0)).sum()) for s in range(3))
    return StratumCounts(tuple(population), labelled, passed, unsure)


def _evidence(pass_pass: int, pass_fail: int, fail_pass: int, fail_fail: int) -> dict[str, Any]:
    """Evidence of 200 judged rows (100 judge pass, 100 judge fail) and labels per cell.

    ``pass_fail`` counts labelled judge-pass rows the humans failed, and so on.
    """
    labelled = RunCounts.from_rows(np.array([0] * 100 + [1] * 100, dtype=np.int8))
    cells = [(1, 0, pass_pass), (0, 0, pass_fail), (1, 1, fail_pass), (0, 1, fail_fail)]
    human = np.concatenate([[h] * n for h, _, n in cells]).astype(np.int8)
    outcome = np.concatenate([[o] * n for _, o, n in cells]).astype(np.int8)
    n = human.size
    rows = LabelledRows(human=human, outcome=outcome, flipped=np.zeros(n, dtype=bool),
                        segment=np.zeros(n, dtype=np.int64), document=np.full(n, -1),
                        selection=np.zeros(n, dtype=np.int8), share=np.full(n, np.nan))
    return CalibrationEvidence(rows, labelled).to_json()


def test_uninformative_card_never_passes(workspace_copy: Workspace, tmp_path: Path) -> None:
    card = card_from_report(workspace_copy, calibration_report(workspace_copy, "cal", "judge-a"),
                            force=True)
    weak = card.model_copy(update={"evidence": _evidence(3, 2, 2, 2)})
    path = tmp_path / "v.csv"
    path.write_text("id,verdict\n" + "".join(f"x{i},pass\n" for i in range(50)), encoding="utf-8")
    score = score_verdicts(weak, read_verdicts_file(path), allow_unverified=True)
    assert score.corrected.uninformative or score.corrected.refused
    decision = gate(score, min_pass_rate=0.0, on="estimate")
    assert not decision.passed
    assert "better than chance" in decision.reason or "no corrected" in decision.reason


def test_verdicts_file_errors_name_row_and_column(tmp_path: Path) -> None:
    cases = {
        "no_verdict.csv": ("id,label\nx,pass\n", "missing required column verdict"),
        "bad_order.csv": ("id,verdict,order\nx,pass,sideways\n", "row 1, column 'order'"),
        "bad_repeat.csv": ("id,verdict,repeat\nx,pass,-1\n", "column 'repeat'"),
        "duplicate.csv": ("id,verdict\nx,pass\nx,fail\n", "duplicates row 1"),
        "empty_id.csv": ("id,verdict\n,pass\n", "column 'id'"),
    }
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(VerdictsFileError, match=message.replace("(", r"\(")):
            read_verdicts_file(path)
    ok = tmp_path / "ok.csv"
    ok.write_text("id,verdict,repeat,order\nx,1,0,original\nx,0,0,swapped\ny,TRUE,,\n",
                  encoding="utf-8")
    calls = read_verdicts_file(ok).calls
    assert calls["verdict"].tolist() == ["pass", "fail", "pass"]
    assert np.array_equal(calls["repeat"].to_numpy(), [0, 0, 0])
