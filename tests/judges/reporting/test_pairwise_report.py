"""Pairwise reports end to end: MT-Bench's real votes through convert, import and report."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from judges.demo.layout import DATA_DIR
from judges.demo.mtbench import MTBENCH_JUDGE, convert_mtbench
from judges.reporting import pairwise_report
from judges.verdicts import import_verdicts
from judges.workspace import Workspace
from labels import LabelStore, import_labels, import_rows
from labels.errors import ImportFileError

MTBENCH = DATA_DIR / "mtbench"


def _votes() -> list[dict[str, str]]:
    return [json.loads(line) for line in (MTBENCH / "votes.jsonl").read_text().splitlines()]


def test_mtbench_agreement_reproduces_source_figures_through_the_cli(tmp_path: Path) -> None:
    """SOURCE.md: 67.3 % with ties, 85.6 % without (n = 1,118); the paper: 66 % / 85 %."""
    files = convert_mtbench(MTBENCH, tmp_path / "out")
    # 8 items share their text with another: each keeps its own verdict (the same as its twin's)
    assert (files.n_items, files.n_votes, files.n_verdicts) == (1232, 1751, 1232)
    assert files.conflicts == ()
    assert files.empty_answers == ("q127-t1-llama-13b-vs-claude-v1: answer_a",
                                   "q127-t1-llama-13b-vs-gpt-3.5-turbo: answer_a")
    db = str(tmp_path / "m.duckdb")
    runner = CliRunner()
    rows = runner.invoke(cli, ["--db", db, "import", str(files.rows), "--dataset", "mtbench"])
    assert rows.exit_code == 0, rows.output
    assert "rows 714, 715 have an empty answer" in rows.output
    # no --criterion: a pairwise dataset takes a / b / tie under "preference"
    labels = runner.invoke(cli, ["--db", db, "labels", "import", str(files.labels),
                                 "--dataset", "mtbench", "--selection", "all"])
    assert labels.exit_code == 0, labels.output
    verdicts = runner.invoke(cli, ["--db", db, "verdicts", "import", str(files.verdicts),
                                   "--dataset", "mtbench", "--judge", MTBENCH_JUDGE])
    assert verdicts.exit_code == 0, verdicts.output
    out = runner.invoke(cli, ["--db", db, "report", "--dataset", "mtbench", "--judge",
                              MTBENCH_JUDGE, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["kind"] == "pairwise" and data["criterion"] == "preference"
    with_ties, without = data["agreement"]["with_ties"], data["agreement"]["without_ties"]
    assert (with_ties["n"], without["n"]) == (1751, 1118)
    assert round(with_ties["estimate"], 3) == 0.673
    assert round(without["estimate"], 3) == 0.856
    assert with_ties["low"] < with_ties["estimate"] < with_ties["high"]

    # the same counts straight from the source file, independently of the code under test
    def norm(w: str) -> str:
        return "tie" if w.startswith("tie") else w

    votes = _votes()
    table = Counter((norm(v["human_winner"]), norm(v["gpt4_winner"])) for v in votes)
    names = {"a": "model_a", "b": "model_b", "tie": "tie"}
    expected = [[table[(names[h], names[j])] for j in ["a", "b", "tie"]]
                for h in ["a", "b", "tie"]]
    assert data["confusion"]["table"] == expected
    assert sum(map(sum, expected)) == 1751
    assert data["position_consistency"]["order_pairs"] == 0
    assert len(data["by_pair"]) == 15

    text = runner.invoke(cli, ["--db", db, "report", "--dataset", "mtbench", "--judge",
                               MTBENCH_JUDGE])
    assert text.exit_code == 0, text.output
    assert "with ties            0.673 [" in text.output
    assert "without ties         0.856 [" in text.output
    assert "(n = 1118 votes where neither side said tie)" in text.output
    assert "not measured (the judge ran one order)" in text.output


def test_pairwise_report_counts_position_flips_and_applies_the_mtbench_rule(
    store: LabelStore, workspace: Workspace, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(json.dumps({
        "id": f"r{i}", "question": f"q{i}", "answer_a": f"A{i}", "answer_b": f"B{i}",
        "model_a": "m1", "model_b": "m2" if i < 6 else "m3",
    }) for i in range(10)) + "\n")
    import_rows(store, rows, "pw")
    labels = tmp_path / "labels.csv"
    human = ["a", "a", "b", "b", "tie", "tie", "a", "b", "tie", "a"]
    labels.write_text("id,annotator,label\n" + "".join(
        f"r{i},ann{k},{h}\n" for i, h in enumerate(human) for k in range(2)))
    import_labels(store, labels, "pw")
    verdicts = tmp_path / "v.csv"
    # rows 0-7 consistent; rows 8 and 9 flip when the order is swapped
    original = ["a", "a", "b", "b", "tie", "tie", "a", "b", "a", "b"]
    swapped = ["a", "a", "b", "b", "tie", "tie", "a", "b", "b", "a"]
    verdicts.write_text("id,verdict,order\n" + "".join(
        f"r{i},{o},original\nr{i},{s},swapped\n"
        for i, (o, s) in enumerate(zip(original, swapped, strict=True))))
    import_verdicts(workspace, verdicts, dataset="pw", judge="j")

    report = pairwise_report(workspace, "pw", "j")
    data = report.to_json()
    pc = data["position_consistency"]
    assert (pc["order_pairs"], pc["flipped"]) == (10, 2)
    assert pc["flip_rate"]["estimate"] == pytest.approx(0.2)
    # all_agree: the flipped rows 8 (human tie) and 9 (human a) become ties
    assert data["agreement"]["with_ties"]["estimate"] == pytest.approx(18 / 20)
    assert data["agreement"]["without_ties"]["n"] == 12  # rows 0-3, 6, 7: neither side tie
    assert data["human_agreement"]["with_ties"]["estimate"] == 1.0
    assert [(p["model_a"], p["model_b"], p["n_target"]) for p in data["by_pair"]] == [
        ("m1", "m2", 6), ("m1", "m3", 4)]
    assert any("2 of 10 rows changed verdict" in w for w in data["warnings"])
    majority = pairwise_report(workspace, "pw", "j", rule="majority").to_json()
    assert majority["aggregation"] == "majority"


def test_labels_import_on_a_pairwise_dataset_refuses_pass_fail(
    store: LabelStore, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "r1", "question": "q", "answer_a": "x",
                                "answer_b": ""}) + "\n")
    summary = import_rows(store, rows, "pw")
    assert any("empty answer" in w for w in summary.warnings)
    bad = tmp_path / "bad.csv"
    bad.write_text("id,annotator,label\nr1,ann,pass\n")
    with pytest.raises(ImportFileError, match="row 1"):
        import_labels(store, bad, "pw")
    with pytest.raises(ImportFileError, match="use --criterion preference"):
        import_labels(store, bad, "pw", criterion="faithfulness")


def test_pairwise_card_score_and_gate_through_the_cli(tmp_path: Path) -> None:
    db = str(tmp_path / "c.duckdb")
    rows = tmp_path / "rows.jsonl"
    human = ["a"] * 12 + ["b"] * 20 + ["tie"] * 8
    judge = ["a"] * 10 + ["tie"] * 2 + ["b"] * 17 + ["a"] * 3 + ["tie"] * 5 + ["b"] * 3
    rows.write_text("".join(json.dumps({"id": f"r{i}", "question": f"q{i}", "answer_a": "x",
                                        "answer_b": f"y{i}"}) + "\n" for i in range(40)))
    labels = tmp_path / "labels.csv"
    labels.write_text("id,annotator,label\n" + "".join(f"r{i},ann,{h}\n"
                                                      for i, h in enumerate(human)))
    verdicts = tmp_path / "v.csv"
    verdicts.write_text("id,verdict\n" + "".join(f"r{i},{j}\n" for i, j in enumerate(judge)))
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(cli, ["--db", db, *args], catch_exceptions=False)

    assert run("import", str(rows), "--dataset", "pw").exit_code == 0
    assert run("labels", "import", str(labels), "--dataset", "pw").exit_code == 0
    assert run("verdicts", "import", str(verdicts), "--dataset", "pw", "--judge",
               "ext").exit_code == 0
    card_path = tmp_path / "card.json"
    out = run("card", "export", "--dataset", "pw", "--judge", "ext", "-o", str(card_path))
    assert out.exit_code == 0, out.output
    assert "Card for pairwise judge ext" in out.output
    card = json.loads(card_path.read_text())
    table = [[10, 0, 2], [3, 17, 0], [0, 3, 5]]
    assert card["metrics"]["pairwise"]["table"] == table
    assert card["judge"]["kind"] == "pairwise"
    assert card["metrics"]["sensitivity"]["reason"] == "pairwise judge: see metrics.pairwise"

    exported = tmp_path / "new.csv"
    assert run("verdicts", "export", "--dataset", "pw", "--judge", "ext", "-o",
               str(exported)).exit_code == 0
    scored = run("score", "--card", str(card_path), str(exported), "--json")
    assert scored.exit_code == 0, scored.output
    data = json.loads(scored.output)
    assert data["kind"] == "pairwise" and data["counts"] == {"a": 13, "b": 20, "tie": 7}
    # The calibration run's own verdicts: the report's same-run answer. Every row is
    # labelled, so the shares are the human ones exactly (20 of 40 rows: B wins).
    report = json.loads(run("report", "--dataset", "pw", "--judge", "ext", "--json").output)
    assert data["win_rate"] == report["win_rate"]
    assert data["design"] == report["design"] == "same_run_stratified"
    assert data["corrected"]["b"] == {"estimate": 0.5, "low": 0.5, "high": 0.5, "n": 40,
                                      "reason": None}
    low = data["corrected"]["b"]["low"]
    passed = run("gate", "--card", str(card_path), str(exported), "--min-pass-rate",
                 f"{low - 0.01:.3f}")
    assert passed.exit_code == 0 and "PASS" in passed.output
    failed = run("gate", "--card", str(card_path), str(exported), "--min-pass-rate",
                 f"{low + 0.01:.3f}", "--side", "b")
    assert failed.exit_code == 1 and "FAIL: lower 95% bound" in failed.output
    bad = runner.invoke(cli, ["--db", db, "gate", "--card", str(card_path), str(exported),
                              "--min-pass-rate", "0.2", "--baseline", str(exported)])
    assert bad.exit_code == 2
