"""Verdict tables: the query for calibration, aggregation, flips, import and export."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from judge_helpers import faithfulness_rows, pairwise_rows

from judges.aggregation import aggregate_calls, rule_for
from judges.config import JudgeConfig, load_builtin
from judges.providers.scripted import ScriptedProvider
from judges.reporting import load_judge_items
from judges.runner import run_judge
from judges.verdicts import (
    VERDICT_COLUMNS,
    export_verdicts,
    import_verdicts,
    judge_verdicts,
    swap_flips,
)
from judges.workspace import Workspace
from labels import LabelStore
from labels.errors import CalibrateError, ConflictError, ImportFileError, NotFoundError


def scripted(*replies: str) -> ScriptedProvider:
    return ScriptedProvider("x", list(replies))


def test_query_shape_order_and_unscored_rows(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    provider = ScriptedProvider("x", responder=lambda r: "VERDICT: PASS")
    provider.script_for("plan 1", "VERDICT: FAIL", "no marker here", "VERDICT: PASS", "")
    run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=provider, swap=True,
              repeats=2,
              concurrency=1)
    frame = judge_verdicts(Workspace.of(store), "docs", "faithfulness-oneshot")
    assert tuple(frame.columns) == VERDICT_COLUMNS
    assert frame[["item_id", "repeat", "order"]].values.tolist() == [
        ["row-000", 0, "original"], ["row-000", 0, "swapped"],
        ["row-000", 1, "original"], ["row-000", 1, "swapped"],
        ["row-001", 0, "original"], ["row-001", 0, "swapped"],
        ["row-001", 1, "original"], ["row-001", 1, "swapped"],
    ]
    row1 = frame[frame["item_id"] == "row-001"]
    assert sorted(row1["verdict"]) == ["fail", "pass", "unscored", "unscored"]
    assert sorted(row1["unscored_reason"].dropna()) == ["empty_reply", "no_verdict"]
    assert row1[row1["verdict"] == "unscored"]["reasoning"].isna().all()
    assert frame["repeat"].dtype == "int64"
    assert frame["config_id"].unique().tolist() == [oneshot.config_id]


def test_a_name_resolves_to_the_revision_run_last(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(1))
    run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=scripted("VERDICT: PASS"))
    newer = oneshot.with_revision(system="Be strict.")
    run_judge(newer, "docs", workspace=Workspace.of(store), provider=scripted("VERDICT: FAIL"))
    assert judge_verdicts(Workspace.of(store), "docs",
                          "faithfulness-oneshot")["verdict"].tolist() == ["fail"]
    assert judge_verdicts(Workspace.of(store), "docs",
                          oneshot.config_id)["verdict"].tolist() == ["pass"]
    assert judge_verdicts(Workspace.of(store), "docs",
                          oneshot.config_id[:12])["verdict"].tolist() == ["pass"]
    with pytest.raises(NotFoundError, match="judges: faithfulness-oneshot"):
        judge_verdicts(Workspace.of(store), "docs", "nobody")


def test_aggregation_rules() -> None:
    frame = pd.DataFrame({
        "item_id": ["a"] * 3 + ["b"] * 2 + ["c"] * 2 + ["d"],
        "verdict": ["pass", "pass", "fail", "pass", "fail", "pass", "unscored", "unscored"],
        "repeat": [0, 1, 2, 0, 1, 0, 1, 0],
    })
    majority, _ = aggregate_calls(frame, rule="majority")
    assert majority.set_index("item_id")["verdict"].to_dict() == {
        "a": "pass", "b": "unsure", "c": "pass", "d": "unscored"}
    assert majority.set_index("item_id").loc["c", "n_scored"] == 1
    unanimous, consistency = aggregate_calls(frame, rule="unanimous")  # the configs' old word
    assert unanimous.set_index("item_id")["verdict"].to_dict() == {
        "a": "unsure", "b": "unsure", "c": "pass", "d": "unscored"}
    assert consistency is not None and consistency.any_flipped.sum() == 2
    with pytest.raises(CalibrateError, match="unknown aggregation rule 'any_fail'"):
        aggregate_calls(frame, rule="any_fail")


def test_the_judge_configs_aggregation_is_the_default_rule(
    workspace: Workspace, make_dataset: Any, oneshot: JudgeConfig
) -> None:
    make_dataset("docs", faithfulness_rows(3))
    provider = ScriptedProvider("x", responder=lambda r: "VERDICT: PASS")
    provider.script_for("plan 1", "VERDICT: PASS", "VERDICT: FAIL", "VERDICT: PASS")
    strict = oneshot.with_revision(aggregation="all_agree")
    assert oneshot.aggregation == "majority" and strict.config_id != oneshot.config_id
    for config in (oneshot, strict):
        run_judge(config, "docs", workspace=workspace, provider=provider, repeats=3,
                  concurrency=1)
        provider.script_for("plan 1", "VERDICT: PASS", "VERDICT: FAIL", "VERDICT: PASS")
    by_majority = load_judge_items(workspace, "docs", oneshot.config_id)
    by_all = load_judge_items(workspace, "docs", strict.config_id)
    assert (by_majority.rule, by_all.rule) == ("majority", "all_agree")
    assert by_majority.verdict_map()["row-001"] == "pass"
    assert by_all.verdict_map()["row-001"] == "unsure"
    assert load_judge_items(workspace, "docs", oneshot.config_id, rule="all_agree").verdict_map() \
        == by_all.verdict_map()
    assert rule_for(None) == "all_agree"  # imported verdicts have no config


def test_swap_flips_measure_position_bias(store: LabelStore, make_dataset: Any) -> None:
    make_dataset("pairs", pairwise_rows(4))
    provider = ScriptedProvider("x", responder=lambda r: "VERDICT: A")  # always the first slot
    run_judge(load_builtin("preference"), "pairs", workspace=Workspace.of(store), provider=provider)
    flips = swap_flips(judge_verdicts(Workspace.of(store), "pairs", "preference"))
    assert len(flips) == 4 and flips["flipped"].all()
    assert flips["flipped"].mean() == 1.0


def test_import_export_round_trip(
    store: LabelStore, make_dataset: Any, oneshot: JudgeConfig, tmp_path: Path
) -> None:
    make_dataset("docs", faithfulness_rows(3))
    run_judge(oneshot, "docs", workspace=Workspace.of(store), provider=ScriptedProvider("x"),
              repeats=2,
              swap=True)
    out = export_verdicts(Workspace.of(store), "docs", "faithfulness-oneshot", tmp_path / "v.csv")
    # The file names the config that made the verdicts: it re-imports under that config only.
    config_id = judge_verdicts(Workspace.of(store), "docs",
                               "faithfulness-oneshot")["config_id"].iloc[0]
    same = import_verdicts(Workspace.of(store), out, dataset="docs", judge="faithfulness-oneshot")
    assert same.config_id == config_id and same.added == 0 and same.unchanged == 12
    with pytest.raises(ImportFileError, match="come from judge 'faithfulness-oneshot'"):
        import_verdicts(Workspace.of(store), out, dataset="docs", judge="copy")
    # Without the config_id column they are an external judge's verdicts, as any other file.
    frame = pd.read_csv(out).drop(columns=["config_id"])
    out = tmp_path / "plain.csv"
    frame.to_csv(out, index=False)
    summary = import_verdicts(Workspace.of(store), out, dataset="docs", judge="copy")
    assert summary.added == 12 and summary.unchanged == 0 and summary.config_id.startswith("ext:")
    original = judge_verdicts(Workspace.of(store), "docs", "faithfulness-oneshot")
    copied = judge_verdicts(Workspace.of(store), "docs", "copy")
    cols = ["item_id", "repeat", "order", "verdict", "reasoning"]
    pd.testing.assert_frame_equal(original[cols], copied[cols])
    again = import_verdicts(Workspace.of(store), out, dataset="docs", judge="copy")
    assert again.added == 0 and again.unchanged == 12 and again.run_id is None


def _written(path: Path, text: str) -> Path:
    """``path`` with ``text`` written to it (UTF-8): a verdict file to import."""
    path.write_text(text, encoding="utf-8")
    return path


def test_import_minimal_file_with_unscored_rows(
    store: LabelStore, make_dataset: Any, tmp_path: Path
) -> None:
    make_dataset("docs", faithfulness_rows(3))
    path = _written(tmp_path / "ext.csv", "id,verdict\nrow-000,1\nrow-001,FAIL\nrow-002,\n")
    summary = import_verdicts(Workspace.of(store), path, dataset="docs", judge="gpt4o")
    assert summary.added == 3 and summary.unscored == 1
    frame = judge_verdicts(Workspace.of(store), "docs", "gpt4o")
    assert frame["verdict"].tolist() == ["pass", "fail", "unscored"]
    assert frame["unscored_reason"].tolist()[2] == "external"
    assert set(frame["order"]) == {"original"} and set(frame["repeat"]) == {0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("id,verdict\nrow-000,pass\nrow-999,pass\n", r"row 2, column 'id'.*no item 'row-999'"),
        ("id,verdict\nrow-000,great\n", r"row 1, column 'verdict': 'great' is not a verdict"),
        ("id,verdict,order\nrow-000,pass,sideways\n", r"column 'order'"),
        ("id,verdict,repeat\nrow-000,pass,-1\n", r"column 'repeat'"),
        ("id,verdict\nrow-000,pass\nrow-000,fail\n", r"row 2.*duplicates row 1"),
        ("item,verdict\nrow-000,pass\n", r"missing required column 'id'"),
    ],
)
def test_import_errors_name_row_and_column_and_write_nothing(
    store: LabelStore, make_dataset: Any, tmp_path: Path, content: str, message: str
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    path = _written(tmp_path / "bad.csv", content)
    with pytest.raises(ImportFileError, match=message):
        import_verdicts(Workspace.of(store), path, dataset="docs", judge="ext")
    with store.db.cursor() as cur:
        tables = {r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if "judge_calls" in tables:
            assert cur.execute("SELECT count(*) FROM judge_calls").fetchall()[0][0] == 0
            assert cur.execute("SELECT count(*) FROM judge_configs").fetchall()[0][0] == 0


def test_import_conflict_changes_nothing(
    store: LabelStore, make_dataset: Any, tmp_path: Path
) -> None:
    make_dataset("docs", faithfulness_rows(2))
    path = _written(tmp_path / "v.jsonl", '{"id": "row-000", "verdict": "pass"}\n')
    import_verdicts(Workspace.of(store), path, dataset="docs", judge="ext")
    path.write_text('{"id": "row-001", "verdict": "pass"}\n'
                    '{"id": "row-000", "verdict": "fail"}\n', encoding="utf-8")
    with pytest.raises(ConflictError, match=r"already has verdict 'pass'.*says 'fail'"):
        import_verdicts(Workspace.of(store), path, dataset="docs", judge="ext")
    assert judge_verdicts(Workspace.of(store), "docs", "ext")["item_id"].tolist() == ["row-000"]


def test_pairwise_import_accepts_a_b_tie(
    store: LabelStore, make_dataset: Any, tmp_path: Path
) -> None:
    make_dataset("pairs", pairwise_rows(2))
    path = _written(tmp_path / "p.csv", "id,verdict,order,reasoning\npair-000,A,original,first\n"
                                        "pair-000,tie,swapped,\npair-001,b,original,x\n")
    import_verdicts(Workspace.of(store), path, dataset="pairs", judge="mt")
    frame = judge_verdicts(Workspace.of(store), "pairs", "mt")
    assert frame["verdict"].tolist() == ["a", "tie", "b"]
    path.write_text("id,verdict\npair-000,pass\n", encoding="utf-8")
    with pytest.raises(ImportFileError, match="use a, b, tie"):
        import_verdicts(Workspace.of(store), path, dataset="pairs", judge="mt2")
