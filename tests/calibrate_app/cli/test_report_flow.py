"""From the CLI alone: import rows, labels, verdicts; report; export a card; score; gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import ok, run
from click.testing import Result

from judges.calibration import format_interval

INTERVAL_KEYS = {"estimate", "low", "high", "n", "reason"}
REQUIRED = {
    "n", "confusion", "sensitivity", "specificity", "fpr", "kappa", "observed_pass_rate",
    "corrected_pass_rate", "method", "unscored", "unsure", "swap_flip_rate", "repeat_flip_rate",
    "warnings",
}


@pytest.fixture(scope="module")
def template_db(tmp_path_factory: pytest.TempPathFactory, file_writer: Any) -> Path:
    """The database built once per module, by CLI commands only."""
    folder = tmp_path_factory.mktemp("cli")
    f = file_writer(folder / "files")
    db_path = folder / "template.duckdb"
    ok(db_path, "import", str(f.cal_items), "--dataset", "cal")
    ok(db_path, "import", str(f.tgt_items), "--dataset", "tgt")
    ok(db_path, "labels", "import", str(f.alice), "--dataset", "cal", "--annotator", "alice")
    ok(db_path, "labels", "import", str(f.bob), "--dataset", "cal", "--annotator", "bob")
    ok(db_path, "verdicts", "import", str(f.judge_a_cal), "--dataset", "cal", "--judge",
       "judge-a")
    ok(db_path, "verdicts", "import", str(f.judge_a_tgt), "--dataset", "tgt", "--judge",
       "judge-a")
    ok(db_path, "verdicts", "import", str(f.judge_b_cal), "--dataset", "cal", "--judge",
       "judge-b")
    return db_path


def test_report_json_has_the_documented_shape(db_copy: Path) -> None:
    data = json.loads(ok(db_copy, "report", "--dataset", "cal", "--judge", "judge-a",
                         "--target", "tgt", "--json"))
    assert set(data) >= REQUIRED
    assert set(data["confusion"]) == {"tp", "fn", "fp", "tn"}
    for key in ("sensitivity", "specificity", "fpr", "kappa", "observed_pass_rate",
                "corrected_pass_rate", "swap_flip_rate", "repeat_flip_rate"):
        assert set(data[key]) == INTERVAL_KEYS, key
    assert data["method"] == "lee_stratified"
    assert data["design"] == "separate_calibration"
    assert data["population"].startswith("the true (human) pass rate of all 400 target rows")
    assert data["counts"]["target"] == {
        "rows": 400, "judged": 397, "not_judged": 3, "unscored": 3, "unsure": 0, "not_run": 0}
    assert data["unscored"] == {"labelled": 1, "target": 3}
    assert data["unsure"]["human"] == 4  # alice and bob disagree on 4 rows: a tie
    assert data["human_agreement"]["annotators"] == 2
    assert data["n"] == sum(data["confusion"].values())
    assert data["swap_flip_rate"]["estimate"] is None  # no swapped calls: not measured
    assert data["swap_flip_rate"]["reason"]
    # The text form says the same thing in words.
    text = ok(db_copy, "report", "--dataset", "cal", "--judge", "judge-a", "--target", "tgt")
    assert "corrected pass rate" in text and "method lee_stratified" in text
    assert "estimates the true (human) pass rate of all 400 target rows" in text
    # The first lines carry the answer, the same summary as the Calibration page's first screen.
    summary = next(line for line in text.splitlines() if line.startswith("True pass rate of"))
    assert summary == (f"True pass rate of 'tgt': {format_interval(data['corrected_pass_rate'])} "
                       f"(the corrected pass rate, n = {data['corrected_pass_rate']['n']} "
                       "labelled rows)")


def test_report_with_two_judges_adds_a_leaderboard(db_copy: Path) -> None:
    data = json.loads(ok(db_copy, "report", "--dataset", "cal", "--judge", "judge-a",
                         "--judge", "judge-b", "--json"))
    board = data["leaderboard"]
    assert [row["judge"]["name"] for row in board] == ["judge-a", "judge-b"]
    assert board[0]["mcnemar_p_vs_best"] is None
    assert 0 < board[1]["mcnemar_p_vs_best"] < 1


def test_card_score_and_gate_exit_codes(db_copy: Path, tmp_path: Path, report_files: Any) -> None:
    card = tmp_path / "card.json"
    ok(db_copy, "card", "export", "--dataset", "cal", "--judge", "judge-a", "-o", str(card))
    verdicts = tmp_path / "tgt_verdicts.csv"
    ok(db_copy, "verdicts", "export", "--dataset", "tgt", "--judge", "judge-a", "-o",
       str(verdicts))

    scored = json.loads(ok(db_copy, "score", "--card", str(card), str(verdicts), "--json"))
    report = json.loads(ok(db_copy, "report", "--dataset", "cal", "--judge", "judge-a",
                           "--target", "tgt", "--json"))
    # The card carries the calibration into CI: same numbers as the report with --target.
    assert scored["corrected_pass_rate"] == report["corrected_pass_rate"]
    assert scored["observed_pass_rate"] == report["observed_pass_rate"]
    assert scored["n"] == 397 and scored["unscored"] == 3
    # The exported file names its config, so it is checked and no warning says otherwise.
    assert not any("config_id" in w for w in scored["warnings"])
    low = scored["corrected_pass_rate"]["low"]
    estimate = scored["corrected_pass_rate"]["estimate"]

    passed = run(db_copy, "gate", "--card", str(card), str(verdicts), "--min-pass-rate",
                 f"{low - 0.01:.4f}")
    assert passed.exit_code == 0, passed.output
    assert "PASS" in passed.output

    failed = run(db_copy, "gate", "--card", str(card), str(verdicts), "--min-pass-rate",
                 f"{low + 0.01:.4f}")
    assert failed.exit_code == 1
    assert "FAIL" in failed.output and "lower 95% bound" in failed.output

    # Between the lower bound and the estimate: --on decides.
    bar = f"{(low + estimate) / 2:.4f}"
    assert run(db_copy, "gate", "--card", str(card), str(verdicts), "--min-pass-rate", bar,
               "--on", "estimate").exit_code == 0
    as_json = run(db_copy, "gate", "--card", str(card), str(verdicts), "--min-pass-rate", bar,
                  "--json")
    assert as_json.exit_code == 1
    assert json.loads(as_json.output)["gate"]["passed"] is False

    # A plain id,verdict file cannot be checked against the card's judge: refused, unless
    # --allow-unverified, and then the output says it is unverified.
    refused = run(db_copy, "score", "--card", str(card), str(report_files.new_verdicts))
    assert refused.exit_code == 2 and "--allow-unverified" in refused.output
    plain = json.loads(ok(db_copy, "score", "--card", str(card), str(report_files.new_verdicts),
                          "--allow-unverified", "--json"))
    assert plain["n"] == 200 and plain["verified"] is False
    assert any(w.startswith("UNVERIFIED") and "config_id" in w for w in plain["warnings"])
    assert scored["verified"] is True


def test_gate_bad_input_exits_2(db_copy: Path, tmp_path: Path) -> None:
    card = tmp_path / "card.json"
    ok(db_copy, "card", "export", "--dataset", "cal", "--judge", "judge-a", "-o", str(card))
    other = tmp_path / "judge_b.csv"
    ok(db_copy, "verdicts", "export", "--dataset", "cal", "--judge", "judge-b", "-o", str(other))
    mine = tmp_path / "judge_a.csv"
    ok(db_copy, "verdicts", "export", "--dataset", "tgt", "--judge", "judge-a", "-o", str(mine))

    def gate(card_path: Path, verdicts: Path) -> Result:
        return run(db_copy, "gate", "--card", str(card_path), str(verdicts), "--min-pass-rate",
                   "0.5")

    wrong_config = gate(card, other)
    assert wrong_config.exit_code == 2
    assert "judge config" in wrong_config.output and "config_id" in wrong_config.output

    assert gate(tmp_path / "missing.json", mine).exit_code == 2
    assert gate(card, tmp_path / "missing.csv").exit_code == 2

    bad_value = tmp_path / "bad.csv"
    bad_value.write_text("id,verdict\nx1,pass\nx2,maybe\n", encoding="utf-8")
    result = gate(card, bad_value)
    assert result.exit_code == 2 and "row 2" in result.output and "'verdict'" in result.output

    nothing = tmp_path / "nothing.csv"
    nothing.write_text("id,verdict\nx1,\nx2,unsure\n", encoding="utf-8")
    assert gate(card, nothing).exit_code == 2

    edited = tmp_path / "edited.json"
    data = json.loads(card.read_text(encoding="utf-8"))
    data["judge"]["config_id"] = "ext:000000000000000000000000"
    edited.write_text(json.dumps(data), encoding="utf-8")
    result = gate(edited, mine)
    assert result.exit_code == 2 and "config_id" in result.output

    not_a_card = tmp_path / "labels.json"
    not_a_card.write_text("[1, 2]", encoding="utf-8")
    assert gate(not_a_card, mine).exit_code == 2

    assert run(db_copy, "gate", "--card", str(card), str(mine), "--min-pass-rate",
               "1.5").exit_code == 2


def test_report_errors_are_clear(db_copy: Path) -> None:
    unknown = run(db_copy, "report", "--dataset", "cal", "--judge", "nobody")
    assert unknown.exit_code == 2 and "nobody" in unknown.output
    no_labels = run(db_copy, "report", "--dataset", "tgt", "--judge", "judge-a")
    assert no_labels.exit_code == 2 and "no human labels" in no_labels.output
