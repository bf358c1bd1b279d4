"""The judge that abstains, end to end from the CLI: select, cascade, card, score, gate, drift.

One small database per module (``tests/support/selective_data.py``): the cheap judge's calls
agree on 80 easy rows (2 wrong) and split on 40 hard ones (half wrong); the scripted stand-in
is the second stage, right on every row, and ran on the first 54 of the target's 60 rows, so
the last 6 go to experts.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_runner import ok, run
from report_data import write_csv
from scipy.stats import binom
from selective_data import human


@pytest.fixture(scope="module")
def template_db(selective_template: Path) -> Path:
    return selective_template


def _stand_in(db: Path) -> str:
    runs = json.loads(ok(db, "judge", "runs", "--dataset", "sel", "--json"))
    return next(r["config_id"] for r in runs if r["judge"] == "faithfulness")


def test_select_certifies_the_agreeing_rows_writes_them_and_escalates_the_rest(
    db_copy: Path, tmp_path: Path,
) -> None:
    # By default each judge verdict has its own threshold (delta split over them): the cheap
    # judge's 53 agreeing passes (1 wrong, p = P(Bin(53, .1) <= 1) <= 0.05) are certified;
    # its 27 agreeing fails are too few for alpha 0.1 at 0.05 (29 needed).
    data = json.loads(ok(db_copy, "judge", "select", "--dataset", "sel", "--judge", "cheap",
                         "--alpha", "0.1", "--aggregation", "majority", "--json",
                         "--no-escalate"))
    stage = data["stages"][0]
    assert stage["thresholds"] == {"judge pass": 0.8, "judge fail": None}
    assert (stage["accepted"], stage["errors"], stage["level"]) == (53, 1, 0.05)
    assert stage["tests"][0]["p_value"] == pytest.approx(binom.cdf(1, 53, 0.1))
    out = tmp_path / "accepted.csv"
    data = json.loads(ok(db_copy, "judge", "select", "--dataset", "sel", "--judge", "cheap",
                         "--alpha", "0.1", "--delta", "0.1", "--aggregation", "majority",
                         "--one-threshold", "-o", str(out), "--json"))
    stage = data["stages"][0]
    assert stage["signals"] == ["agreement"] and stage["thresholds"] == {"all rows": 0.8}
    # score 4/5: 80 labelled rows, 2 wrong: p = P(Bin(80, 0.1) <= 2); score 3/5 adds the 40
    # hard rows with 20 wrong, which fails: the rule stops at 0.8.
    assert [t["threshold"] for t in stage["tests"]] == [0.8, 0.6]
    assert [t["rejected"] for t in stage["tests"]] == [True, False]
    assert (stage["accepted"], stage["errors"], data["escalated"]) == (80, 2, 40)
    assert data["design"].startswith("the labelled rows are a random sample")
    assert "one threshold" in data["design"]
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 80 and set(rows[0]) == {"id", "verdict"}
    assert rows[5] == {"id": "s005", "verdict": human(5)}
    # Every row is labelled: the whole-run estimate is the experts' pass share, exactly.
    p = data["pass_rate"]
    assert p["estimate"] == pytest.approx(80 / 120) and p["low"] == p["high"]
    assert data["escalation"]["rows"] == 40
    text = ok(db_copy, "judge", "select", "--dataset", "sel", "--judge", "cheap", "--alpha",
              "0.1", "--aggregation", "majority", "--one-threshold", "--no-escalate")
    assert "settles 80 of the 120 rows" in text and "whole-run pass rate" in text


def test_a_rule_refused_for_too_few_labels_escalates_everything(db_copy: Path) -> None:
    data = json.loads(ok(db_copy, "judge", "select", "--dataset", "sel", "--judge", "cheap",
                         "--alpha", "0.01", "--aggregation", "majority", "--json",
                         "--no-escalate"))
    stage = data["stages"][0]
    assert stage["refused"] and "too few labelled rows" in stage["reason"]
    assert data["escalated"] == 120


def test_the_cascade_settles_what_each_stage_can_and_experts_the_rest(db_copy: Path) -> None:
    config = _stand_in(db_copy)
    data = json.loads(ok(db_copy, "judge", "cascade", "--dataset", "sel", "--judge", "cheap",
                         "--judge", config, "--alpha", "0.1", "--aggregation", "majority",
                         "--one-threshold", "--target", "tgt", "--json"))
    cheap, strong = data["stages"]
    assert (cheap["reaching"], cheap["accepted"]) == (60, 40)
    # The stand-in's four calls agree (score 5/6); on sel it is right on the 40 hard rows; on
    # tgt it has no verdict on the last 6.
    assert strong["reaching"] == 20 and strong["accepted"] == 14 and strong["stand_in"]
    assert data["escalated"] == 6 and data["expert"]["labelled"] == 0
    # The scripted provider logs tokens and a zero cost: $0 per 1,000 rows, logged.
    assert data["cost_per_1000_rows"]["stages"][strong["judge"]] == 0.0
    assert strong["cost"]["source"] == "logged" and strong["cost"]["calls_per_row"] == 4
    assert data["cost_per_1000_rows"]["stages"]["cheap"] is None  # imported: nothing logged
    assert any(w.startswith("STAND-IN") for w in data["warnings"])
    # No expert label on the 6 escalated rows yet: their share is bounded anywhere in [0, 1].
    p = data["pass_rate"]
    assert p["high"] - p["low"] >= 6 / 60
    assert any("none of the 6 escalated rows" in w for w in data["warnings"])
    queue = json.loads(ok(db_copy, "judge", "runs", "--dataset", "tgt", "--json"))
    assert queue  # the target is still judged; the escalation is recorded:
    experts = write_csv(db_copy.parent / "experts.csv", ["id", "label"],
                     [[f"t{i:03d}", human(i)] for i in range(54, 60)])
    ok(db_copy, "labels", "import", str(experts), "--dataset", "tgt", "--annotator", "expert",
       "--selection", "escalated")
    again = json.loads(ok(db_copy, "judge", "cascade", "--dataset", "sel", "--judge", "cheap",
                          "--judge", config, "--alpha", "0.1", "--aggregation", "majority",
                          "--one-threshold", "--target", "tgt", "--json", "--no-escalate"))
    assert again["rule_id"] == data["rule_id"] and again["expert"]["labelled"] == 6
    q = again["pass_rate"]
    assert q["high"] - q["low"] < p["high"] - p["low"]
    assert q["low"] <= 40 / 60 <= q["high"]  # the truth: every third row fails


def test_card_records_the_rule_and_score_and_gate_apply_it(db_copy: Path, tmp_path: Path) -> None:
    card = tmp_path / "card.json"
    ok(db_copy, "card", "export", "--dataset", "sel", "--judge", "cheap", "--aggregation",
       "majority", "--alpha", "0.1", "-o", str(card))
    data = json.loads(card.read_text())
    sel = data["selection"]
    assert sel["thresholds"] == {"judge pass": 0.8, "judge fail": None}  # majority: no unsure
    assert sel["accepted"] == 53 and sel["strata_table"] is not None
    assert sel["signals"] == ["agreement"] and "at most 0.1" in sel["guarantee"]
    assert len(data["anchor"]["rows"]) == 120 and data["anchor"]["reference"]["judged"] == 120
    assert "s000" not in card.read_text()  # ids only as hashes
    from judges.outputs.card import load_card

    loaded = load_card(card)
    assert loaded.selection is not None and loaded.selection.rule_id == sel["rule_id"]
    assert loaded.to_json() == data  # round trip
    new = tmp_path / "tgt.csv"
    ok(db_copy, "verdicts", "export", "--dataset", "tgt", "--judge", "cheap", "-o", str(new))
    accepted = tmp_path / "accepted.csv"
    score = json.loads(ok(db_copy, "score", "--card", str(card), str(new), "--json",
                          "--accepted-out", str(accepted)))
    s = score["selection"]
    # tgt: its 26 agreeing passes are accepted (the fails' stratum accepts nothing).
    assert (s["applied"], s["accepted"], s["escalated"]) == (True, 26, 34)
    assert s["error_bound"] == 0.1 and s["accepted_share"] == pytest.approx(26 / 60)
    r = s["accepted_pass_rate"]
    assert (r["estimate"], r["low"]) == (1.0, pytest.approx(0.9))
    assert len(accepted.read_text().splitlines()) == 27
    passed = run(db_copy, "gate", "--card", str(card), str(new), "--min-accepted-share", "0.4")
    assert passed.exit_code == 0, passed.output
    assert "accepted share 0.433 >= 0.4" in passed.output
    failed = run(db_copy, "gate", "--card", str(card), str(new), "--min-accepted-share", "0.5")
    assert failed.exit_code == 1 and "FAIL: accepted share 0.433 < 0.5" in failed.output


@pytest.fixture
def drift_files(db_copy: Path, tmp_path: Path) -> dict[str, Path]:
    card = tmp_path / "card.json"
    ok(db_copy, "card", "export", "--dataset", "sel", "--judge", "cheap", "--aggregation",
       "majority", "-o", str(card))
    anchor = tmp_path / "anchor.csv"
    ok(db_copy, "verdicts", "export", "--dataset", "sel", "--judge", "cheap", "-o", str(anchor))
    return {"card": card, "anchor": anchor}


def _rewrite(src: Path, dst: Path, change: object) -> Path:
    with src.open() as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["verdict"] = change(row)  # type: ignore[operator]
    with dst.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return dst


def test_drift_exit_codes_say_who_drifted(drift_files: dict[str, Path], db_copy: Path,
                                          tmp_path: Path) -> None:
    card, anchor = str(drift_files["card"]), drift_files["anchor"]
    same = run(db_copy, "drift", "--card", card, str(anchor), "--anchor", str(anchor))
    assert same.exit_code == 0, same.output
    assert same.output.startswith("No drift")
    # A judge version bump: the anchor rows (sel) come back with two in three verdicts
    # flipped; the cheap judge's own noise (its 40 hard rows flip across repeats) tolerates
    # up to the card's tolerance (the 95 % bound of 40 / 120).
    tolerance = json.loads(drift_files["card"].read_text())["anchor"]["tolerance"]
    assert 40 / 120 < tolerance < 0.5
    flip = {"pass": "fail", "fail": "pass"}
    bumped = _rewrite(anchor, tmp_path / "bumped.csv",
                      lambda r: flip[r["verdict"]] if int(r["item_id"][1:]) % 3
                      else r["verdict"])
    judge = run(db_copy, "drift", "--card", card, "--anchor", str(bumped), "--json")
    assert judge.exit_code == 1
    assert json.loads(judge.output)["which"] == "judge"
    # A system regression: the anchor rows hold, the new rows all fail.
    worse = _rewrite(anchor, tmp_path / "worse.csv", lambda r: "fail")
    system = run(db_copy, "drift", "--card", card, str(worse), "--anchor", str(anchor))
    assert system.exit_code == 1 and system.output.startswith("The system drifted")
    undetermined = run(db_copy, "drift", "--card", card, str(worse), "--json")
    assert undetermined.exit_code == 1 and json.loads(undetermined.output)["which"] == \
        "undetermined"
    # Bad input: verdicts of another judge config, or no rows of the card's anchors.
    other = tmp_path / "other.csv"
    ok(db_copy, "verdicts", "export", "--dataset", "sel", "--judge", _stand_in(db_copy), "-o",
       str(other))
    assert run(db_copy, "drift", "--card", card, str(other)).exit_code == 2
    foreign = tmp_path / "foreign.csv"
    foreign.write_text("\n".join("x" + line[1:] if line.startswith("s") else line
                                 for line in anchor.read_text().splitlines()) + "\n")
    assert run(db_copy, "drift", "--card", card, "--anchor", str(foreign)).exit_code == 2
