"""Judge cards round-trip, never hold a key, catch edits; the gate's numbers and decisions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from report_data import build_report_db

from calibrate_app.cli import cli
from judges.calibration import (
    StratumCounts,
    interval_json,
    lee_pass_rate,
    transported_pass_rate_from_counts,
)
from judges.card import CardError, card_from_report, dumps_card, load_card, write_card
from judges.gate import (
    VerdictsFileError,
    gate,
    read_verdicts_file,
    score_file,
    score_verdicts,
)
from judges.reporting import calibration_report
from judges.store import JudgeStore
from judges.verdicts import dataset_keys, judge_verdicts
from labels import LabelStore

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


def test_card_round_trips_in_json_and_yaml(store_copy: LabelStore, tmp_path: Path) -> None:
    report = calibration_report(store_copy, "cal", "faithfulness")
    # A scripted judge on 24 rows: refused unless forced (tests/judges/reporting/
    # test_card_rules.py), and the forced card says why inside.
    card = card_from_report(store_copy, report, force=True)
    assert card.judge.stand_in and card.forced and card.forced[0].startswith(
        "the verdicts come from scripted/demo, a stand-in")
    assert card.judge.config is not None
    assert card.judge.config["model"] == "scripted/demo"
    assert card.judge.policy.repeats == 2 and card.judge.policy.swap is True
    # The rule is the judge config's own aggregation (the built-in says majority).
    assert card.judge.policy.aggregation == report.judge.config.aggregation == "majority"
    assert card.judge.params == card.judge.config["generation"]
    assert card.calibration.content_hash == store_copy.dataset_content_hash("cal")
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
    store_copy: LabelStore,
) -> None:
    """The card's repeats and swap, and the calls of one row, come from SQL on those rows.

    They used to load every per-call row of the dataset (10 M at report scale).
    """
    report = calibration_report(store_copy, "cal", "faithfulness")
    config_id = report.judge.config_id
    judge_store = JudgeStore(store_copy.db)
    assert judge_store.call_layout(config_id, dataset_keys(store_copy, "cal")) == (2, True)
    every = judge_verdicts(store_copy, "cal", config_id)
    assert judge_store.call_layout(config_id, dataset_keys(store_copy, "cal").slice(0, 0)) == \
        (0, False)
    judged = every["item_id"].iloc[0]
    one = report.judge_items.call_rows([judged])
    assert len(one) == 4  # 2 repeats x 2 orders
    pd.testing.assert_frame_equal(
        one, every[every["item_id"] == judged].reset_index(drop=True))
    assert report.judge_items.call_rows([]).empty
    assert len(report.judge_items.call_rows()) == len(every)


def test_edited_config_is_refused(store_copy: LabelStore, tmp_path: Path) -> None:
    card = card_from_report(store_copy, calibration_report(store_copy, "cal", "faithfulness"),
                            force=True)
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


def test_gate_rejects_verdicts_of_another_config(store_copy: LabelStore, tmp_path: Path) -> None:
    card = card_from_report(store_copy, calibration_report(store_copy, "cal", "faithfulness"),
                            force=True)
    path = write_card(card, tmp_path / "card.json")
    verdicts = tmp_path / "other.csv"
    result = CliRunner().invoke(cli, ["--db", str(store_copy.db.path), "verdicts", "export",
                                      "--dataset", "tgt", "--judge", "judge-a", "-o",
                                      str(verdicts)])
    store_copy.db.close()
    assert result.exit_code == 0, result.output
    gated = CliRunner().invoke(cli, ["gate", "--card", str(path), str(verdicts),
                                     "--min-pass-rate", "0.1"])
    assert gated.exit_code == 2
    assert card.judge.config_id in gated.output


def test_score_uses_the_cards_strata_and_old_cards_fall_back_to_lee(
    store_copy: LabelStore, tmp_path: Path
) -> None:
    report = calibration_report(store_copy, "cal", "judge-a")
    card = card_from_report(store_copy, report, force=True)
    assert card.metrics.strata == report.to_json()["calibration_strata"]
    new = tmp_path / "new.jsonl"
    rows = [{"item_id": f"n{i}", "verdict": "pass" if i < 70 else "fail",
             "config_id": card.judge.config_id} for i in range(100)]
    rows.append({"item_id": "n100", "verdict": None, "config_id": card.judge.config_id})
    new.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    strata = card.metrics.strata
    assert strata is not None
    with_strata = score_file(card, new)
    calibration = StratumCounts(**{k: tuple(v) for k, v in strata.items()})  # type: ignore[arg-type]
    assert interval_json(with_strata.corrected) == interval_json(
        transported_pass_rate_from_counts(calibration, (70, 30, 1)))  # the unscored row stays in
    card = card.model_copy(update={"metrics": card.metrics.model_copy(update={"strata": None})})
    score = score_file(card, new)  # a card written before strata existed: Lee
    cm = card.metrics.confusion
    human = ["pass"] * (cm.tp + cm.fn) + ["fail"] * (cm.fp + cm.tn)
    judge = ["pass"] * cm.tp + ["fail"] * cm.fn + ["pass"] * cm.fp + ["fail"] * cm.tn
    direct = lee_pass_rate(human, judge, ["pass"] * 70 + ["fail"] * 30)
    assert interval_json(score.corrected) == interval_json(direct)
    assert score.n == 100 and score.k == 70 and score.unscored == 1
    data = score.to_json()
    assert data["corrected_pass_rate"]["estimate"] == direct.estimate
    assert not any("config_id" in w for w in data["warnings"])

    low, est = direct.low, direct.estimate
    assert low is not None and est is not None
    assert gate(score, min_pass_rate=low).passed
    assert not gate(score, min_pass_rate=low + 1e-6).passed
    assert gate(score, min_pass_rate=est, on="estimate").passed
    decision = gate(score, min_pass_rate=0.99)
    assert not decision.passed and "< 0.99" in decision.reason
    with pytest.raises(ValueError):
        gate(score, min_pass_rate=1.2)


def test_uninformative_card_never_passes(store_copy: LabelStore, tmp_path: Path) -> None:
    card = card_from_report(store_copy, calibration_report(store_copy, "cal", "judge-a"),
                            force=True)
    weak = card.model_copy(update={"metrics": card.metrics.model_copy(update={
        "strata": None,
        "confusion": card.metrics.confusion.model_copy(update={"tp": 3, "fn": 2, "fp": 2,
                                                               "tn": 2}),
    })})
    path = tmp_path / "v.csv"
    path.write_text("id,verdict\n" + "".join(f"x{i},pass\n" for i in range(50)), encoding="utf-8")
    score = score_verdicts(weak, read_verdicts_file(path), allow_unverified=True)
    assert score.corrected.uninformative
    decision = gate(score, min_pass_rate=0.0, on="estimate")
    assert not decision.passed and "better than chance" in decision.reason


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
