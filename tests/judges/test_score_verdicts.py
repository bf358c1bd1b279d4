"""Scores made verdicts by a stated rule, nested --map for verdicts and labels, content ids."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from judges.score_rules import ScoreRuleError, parse_score_rule, verdict_of
from judges.verdicts import import_verdicts, judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore
from labels.errors import CalibrateError, ImportFileError
from labels.importing import import_rows
from labels.label_import import import_labels

FORMATS = Path(__file__).parents[1] / "data" / "formats"
RAGAS_RESULTS = FORMATS / "ragas" / "results.csv"
# non_llm_string_similarity of the four rows, as ragas 0.4.3 wrote them
SIMILARITY = [0.6222222222222222, 1.0, 1.0, 0.26190476190476186]


def _verdicts(workspace: Workspace, dataset: str, judge: str) -> list[str]:
    return list(judge_verdicts(workspace, dataset, judge)["verdict"])


@pytest.fixture
def ragas(workspace: Workspace) -> Workspace:
    import_rows(workspace.labels, RAGAS_RESULTS, "r")
    return workspace


def test_score_rules() -> None:
    assert str(parse_score_rule(" >= 0.5")) == "score>=0.5"
    assert str(parse_score_rule("score<1e-1")) == "score<0.1"
    # the text is the judge's identity: every threshold keeps all its digits (":g" kept six)
    assert [str(parse_score_rule(f">={t}")) for t in ("0.7000001", "1", "2.5e-7", "1234567")] == [
        "score>=0.7000001", "score>=1", "score>=2.5e-07", "score>=1234567"]
    assert [verdict_of(s, parse_score_rule(">=0.5")) for s in (0.5, 0.49)] == ["pass", "fail"]
    band = parse_score_rule("<0.7")
    assert [verdict_of(s, parse_score_rule(">=0.5"), band) for s in (0.4, 0.6, 0.8)] == [
        "unsure", "unsure", "pass"]
    for bad in ("0.5", ">= x", "=>0.5", ">=nan", "score >= 0.5; drop"):
        with pytest.raises(ScoreRuleError):
            parse_score_rule(bad)


def test_ragas_scores_become_verdicts_by_content(ragas: Workspace) -> None:
    # The results file has no ids: each row finds the item its content was imported as.
    summary = import_verdicts(ragas, RAGAS_RESULTS, dataset="r",
                              judge="ragas-sim",
                              mapping={"score": "non_llm_string_similarity"}, pass_if=">=0.5")
    assert (summary.rows_read, summary.added, summary.unscored) == (4, 4, 0)
    assert _verdicts(ragas, "r", "ragas-sim") == [
        "pass" if s >= 0.5 else "fail" for s in SIMILARITY]
    stored = ragas.judges.stored_config(summary.config_id)
    assert stored.source == {"metric": "non_llm_string_similarity", "pass_if": "score>=0.5"}
    again = import_verdicts(ragas, RAGAS_RESULTS, dataset="r",
                            judge="ragas-sim",
                            mapping={"score": "non_llm_string_similarity"}, pass_if=">=0.5")
    assert (again.added, again.unchanged, again.config_id) == (0, 4, summary.config_id)
    # another threshold is another judge config: the 0.7 verdicts never mix with the 0.5 ones
    strict = import_verdicts(ragas, RAGAS_RESULTS, dataset="r",
                             judge="ragas-sim",
                             mapping={"score": "non_llm_string_similarity"}, pass_if=">0.7",
                             unsure_if="<0.3", source={"tool": "ragas"})
    assert strict.config_id != summary.config_id
    assert _verdicts(ragas, "r", strict.config_id) == ["fail", "pass", "pass", "unsure"]
    assert ragas.judges.stored_config(strict.config_id).source == {
        "tool": "ragas", "metric": "non_llm_string_similarity", "pass_if": "score>0.7",
        "unsure_if": "score<0.3"}


def test_bad_scores_and_rules_are_refused_before_anything_is_written(
    ragas: Workspace, tmp_path: Path
) -> None:
    with pytest.raises(CalibrateError, match="scores need a rule"):
        import_verdicts(ragas, RAGAS_RESULTS, dataset="r", judge="j",
                        mapping={"score": "exact_match"})
    with pytest.raises(ImportFileError, match=r"row 1, column 'response': .* is not a score"):
        import_verdicts(ragas, RAGAS_RESULTS, dataset="r", judge="j",
                        mapping={"score": "response"}, pass_if=">=0.5")
    # without a --map, the ragas file's metrics are offered (tests/labels/test_tool_formats.py)
    with pytest.raises(ImportFileError, match=r"several metrics .* choose one with --metric"):
        import_verdicts(ragas, RAGAS_RESULTS, dataset="r", judge="j",
                        pass_if=">=0.5")
    plain = tmp_path / "plain.csv"
    plain.write_text("id,grade\na,0.5\n")
    with pytest.raises(ImportFileError, match="missing required column 'score'"):
        import_verdicts(ragas, plain, dataset="r", judge="j", pass_if=">=0.5")
    text = RAGAS_RESULTS.read_text().replace(",1.0,0.26190476190476186,0.0", ",1.0,,0.0")
    blank = tmp_path / "results.csv"
    blank.write_text(text.replace("Is there an uptime SLA?", "Another question?"))
    with pytest.raises(ImportFileError, match=r"row 4, .*has no item with this row's content"):
        import_verdicts(ragas, blank, dataset="r", judge="j",
                        mapping={"score": "non_llm_string_similarity"}, pass_if=">=0.5")
    assert ragas.judges.runs(dataset="r") == []
    blank.write_text(text)  # an empty score (ragas writes NaN on a failed metric): unscored
    summary = import_verdicts(ragas, blank, dataset="r", judge="j",
                              mapping={"score": "non_llm_string_similarity"}, pass_if=">=0.5")
    assert (summary.added, summary.unscored) == (4, 1)


PROMPTFOO_LIKE = {"results": {"results": [
    {"testCase": {"vars": {"id": "p1"}}, "vars": {"question": "Does Pro include SSO?"},
     "response": {"output": "Yes."},
     "gradingResult": {"pass": True, "score": 1, "reason": "All assertions passed"}},
    {"testCase": {"vars": {"id": "p2"}}, "vars": {"question": "Is there an API?"},
     "response": {"output": "No."},
     "gradingResult": {"pass": False, "score": 0.2, "reason": "Says no; the docs say yes"}},
]}}


def test_nested_maps_for_verdicts_and_labels(store: LabelStore, workspace: Workspace,
                                             tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text(json.dumps(PROMPTFOO_LIKE))
    import_rows(store, path, "p", records="results.results", mapping={
        "id": "testCase.vars.id", "question": "vars.question", "answer": "response.output"})
    summary = import_verdicts(workspace, path, dataset="p", judge="pf",
                              records="results.results",
                              mapping={"id": "testCase.vars.id",
                                       "verdict": "gradingResult.pass",
                                       "reasoning": "gradingResult.reason"})
    assert summary.added == 2
    frame = judge_verdicts(workspace, "p", "pf")
    assert list(frame["verdict"]) == ["pass", "fail"]
    assert frame["reasoning"][1] == "Says no; the docs say yes"
    scored = import_verdicts(workspace, path, dataset="p", judge="pf-score",
                             records="results.results", pass_if=">=0.5",
                             mapping={"id": "testCase.vars.id", "score": "gradingResult.score"})
    assert _verdicts(workspace, "p", scored.config_id) == ["pass", "fail"]

    feedback: list[dict[str, Any]] = [
        {"run": {"row": "p1"}, "feedback": {"value": 1, "by": {"user": "dana"}}},
        {"run": {"row": "p2"}, "feedback": {"value": 0, "by": {"user": "lee"}}},
    ]
    labels = tmp_path / "feedback.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in feedback))
    done = import_labels(store, labels, "p", mapping={
        "id": "run.row", "label": "feedback.value", "annotator": "feedback.by.user"})
    assert (done.added, done.annotators) == (2, ("dana", "lee"))
    current = store.current_labels("p")
    assert sorted(zip(current["item_id"], current["verdict"], strict=True)) == [
        ("p1", "pass"), ("p2", "fail")]


def test_cli_verdicts_import_with_scores(tmp_path: Path) -> None:
    db = tmp_path / "c.duckdb"
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", str(db), "import", str(RAGAS_RESULTS), "--dataset", "r"])
    assert result.exit_code == 0, result.output
    args = ["--db", str(db), "verdicts", "import", str(RAGAS_RESULTS), "--dataset", "r",
            "--judge", "ragas-exact", "--map", "score=exact_match"]
    result = runner.invoke(cli, [*args, "--pass-if", ">=0.5"])
    assert result.exit_code == 0, result.output
    assert "4 verdicts read, 4 added (0 unscored)" in result.output
    result = runner.invoke(cli, [*args, "--pass-if", "about 0.5"])
    assert result.exit_code != 0 and "is not a score rule" in result.output


def test_the_card_shows_the_rule_and_verifies(ragas: Workspace, tmp_path: Path) -> None:
    from judges.outputs.card import build_card

    ids = ragas.labels.item_ids("r")
    labels = tmp_path / "labels.csv"
    labels.write_text("id,label\n" + "".join(f"{i},{v}\n" for i, v in zip(
        ids, ["fail", "pass", "pass", "fail"], strict=True)))
    import_labels(ragas.labels, labels, "r", annotator="dana")
    summary = import_verdicts(ragas, RAGAS_RESULTS, dataset="r",
                              judge="ragas-sim",
                              mapping={"score": "non_llm_string_similarity"}, pass_if=">=0.5",
                              source={"tool": "ragas"})
    card = build_card(ragas, "r", "ragas-sim", force=True)
    assert card.judge.config_id == summary.config_id
    assert card.judge.params == {"source": {
        "tool": "ragas", "metric": "non_llm_string_similarity", "pass_if": "score>=0.5"}}
    card.verify()  # the id is the hash of name, kind and source: a card edited to 0.4 is not
    edited = card.model_copy(deep=True)
    edited.judge.params["source"]["pass_if"] = "score>=0.4"
    with pytest.raises(CalibrateError, match="does not belong to external judge"):
        edited.verify()
