"""Files of promptfoo, inspect_ai, DeepEval and ragas import without flags: rows and verdicts."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from judges.stores.judge_store import JudgeStore
from judges.verdicts import import_verdicts, judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore
from labels.errors import CalibrateError, ImportFileError
from labels.importing import import_rows

FORMATS = Path(__file__).parents[1] / "data" / "formats"
HAS_INSPECT = importlib.util.find_spec("inspect_ai") is not None

# file · tool · rows · passages per row · metrics (the fixtures' own numbers)
ROWS = [
    ("promptfoo/results.json", "promptfoo", 3, [1, 1, 1], ("gradingResult",)),
    ("inspect/rag.json", "inspect", 4, [2, 1, 1, 1], ("model_graded_fact", "includes")),
    ("deepeval/test_cases.json", "deepeval", 3, [2, 1, 1], ()),
    ("deepeval/test_run.json", "deepeval", 3, [2, 1, 1], ("Overlap",)),
    ("ragas/dataset.jsonl", "ragas", 4, [2, 1, 3, 1], ()),
    ("ragas/results.csv", "ragas", 4, [2, 1, 3, 1],
     ("non_llm_context_recall", "non_llm_string_similarity", "exact_match")),
]


@pytest.mark.parametrize(("name", "tool", "n", "passages", "metrics"), ROWS)
def test_tool_files_import_without_flags(
    store: LabelStore, name: str, tool: str, n: int, passages: list[int],
    metrics: tuple[str, ...],
) -> None:
    summary = import_rows(store, FORMATS / name, "d")
    assert (summary.tool, summary.added, summary.metrics) == (tool, n, metrics)
    items = store.items("d")
    assert [len(i.sources) for i in items] == passages
    assert all(i.question and i.answer for i in items)
    # the transcript, grader prompts and raw provider output are not copied into metadata
    assert all(len(json.dumps(i.metadata)) < 400 for i in items)


def test_inspect_rows_and_the_reviewed_grade(store: LabelStore) -> None:
    log = FORMATS / "inspect" / "rag.json"
    import_rows(store, log, "in")
    first = store.items("in")[0]
    assert (first.item_id, first.reference) == ("q1", "Yes, for teams under 50 seats.")
    with pytest.raises(ImportFileError, match=r"several metrics \(model_graded_fact, includes\)"):
        import_verdicts(Workspace.of(store), log, dataset="in")
    summary = import_verdicts(Workspace.of(store), log, dataset="in", metric="model_graded_fact")
    assert summary.judge == "inspect-model_graded_fact"
    frame = judge_verdicts(Workspace.of(store), "in", summary.judge)
    # C/I grades; q1's C was overridden to I by the reviewer (inspect's edit_score)
    assert list(frame["verdict"]) == ["fail", "pass", "pass", "fail"]
    assert JudgeStore(store.db).stored_config(summary.config_id).source == {
        "tool": "inspect", "metric": "model_graded_fact"}


def test_promptfoo_verdicts_and_scores(store: LabelStore) -> None:
    results = FORMATS / "promptfoo" / "results.json"
    import_rows(store, results, "pf")
    assert store.item_ids("pf") == ["r-1", "r-2", "r-3"]
    passed = import_verdicts(Workspace.of(store), results, dataset="pf")
    assert passed.judge == "promptfoo-gradingResult"
    assert list(judge_verdicts(Workspace.of(store), "pf", passed.config_id)["verdict"]) == [
        "fail", "pass", "pass"]
    strict = import_verdicts(Workspace.of(store), results, dataset="pf", pass_if=">=0.8")
    assert list(judge_verdicts(Workspace.of(store), "pf", strict.config_id)["verdict"]) == [
        "fail", "pass", "fail"]  # score 0.75 misses the stricter rule
    assert JudgeStore(store.db).stored_config(strict.config_id).source == {
        "tool": "promptfoo", "metric": "gradingResult", "pass_if": "score>=0.8"}


def test_deepeval_run_verdicts_find_rows_of_the_test_cases_file(store: LabelStore) -> None:
    import_rows(store, FORMATS / "deepeval" / "test_cases.json", "de")
    summary = import_verdicts(Workspace.of(store), FORMATS / "deepeval" / "test_run.json",
                              dataset="de")
    assert (summary.judge, summary.added) == ("deepeval-Overlap", 3)
    frame = judge_verdicts(Workspace.of(store), "de", summary.judge)
    assert list(frame["verdict"]) == ["pass", "pass", "fail"]
    assert list(frame["reasoning"]) == [
        "5 of 6 expected words", "7 of 7 expected words", "1 of 7 expected words"]


def test_ragas_scores_need_a_rule(store: LabelStore) -> None:
    results = FORMATS / "ragas" / "results.csv"
    import_rows(store, FORMATS / "ragas" / "dataset.csv", "ra")
    with pytest.raises(CalibrateError, match="holds scores: say which pass"):
        import_verdicts(Workspace.of(store), results, dataset="ra", metric="exact_match")
    summary = import_verdicts(Workspace.of(store), results, dataset="ra", metric="exact_match",
                              pass_if=">=1")
    assert list(judge_verdicts(Workspace.of(store), "ra", summary.judge)["verdict"]) == [
        "fail", "pass", "pass", "fail"]


def test_forced_format_and_broken_files(store: LabelStore, tmp_path: Path) -> None:
    with pytest.raises(ImportFileError, match="--format promptfoo: the file does not have"):
        import_rows(store, FORMATS / "ragas" / "dataset.jsonl", "x", format="promptfoo")
    truncated = tmp_path / "results.json"
    truncated.write_text((FORMATS / "promptfoo" / "results.json").read_text()[:1500])
    with pytest.raises(ImportFileError, match=r"results.json: not valid JSON"):
        import_rows(store, truncated, "x")
    if not HAS_INSPECT:
        with pytest.raises(ImportFileError, match=r"\.eval log is a zip archive; install"):
            import_rows(store, FORMATS / "inspect" / "rag.eval", "x")
    assert store.datasets() == []


@pytest.mark.skipif(not HAS_INSPECT, reason="inspect_ai (the 'inspect' extra) is not installed")
def test_eval_log_read_by_inspects_own_reader(store: LabelStore, tmp_path: Path) -> None:
    log = FORMATS / "inspect" / "rag.eval"
    summary = import_rows(store, log, "ev")
    assert (summary.tool, summary.added) == ("inspect", 4)
    assert [len(i.sources) for i in store.items("ev")] == [2, 1, 1, 1]
    import_rows(store, FORMATS / "inspect" / "rag.json", "js")
    assert [i.model_dump() for i in store.items("ev")] == [
        i.model_dump() for i in store.items("js")]  # the same rows as the JSON log's
    verdicts = import_verdicts(Workspace.of(store), log, dataset="ev", metric="model_graded_fact")
    assert list(judge_verdicts(Workspace.of(store), "ev", verdicts.judge)["verdict"]) == [
        "fail", "pass", "pass", "fail"]  # with the reviewer's edit of q1
    cut = tmp_path / "rag.eval"
    cut.write_bytes(log.read_bytes()[:5000])
    with pytest.raises(ImportFileError, match=r"rag\.eval: not a readable inspect_ai \.eval log"):
        import_rows(store, cut, "x")


def test_cli_round_trip_on_a_promptfoo_file(tmp_path: Path) -> None:
    db, results = str(tmp_path / "c.duckdb"), str(FORMATS / "promptfoo" / "results.json")
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", db, "import", results, "--dataset", "pf"])
    assert result.exit_code == 0, result.output
    assert "it also holds judge results (gradingResult)" in result.output
    result = runner.invoke(cli, ["--db", db, "verdicts", "import", results, "--dataset", "pf"])
    assert result.exit_code == 0, result.output
    assert "3 verdicts read, 3 added (0 unscored)" in result.output
    assert "judge 'promptfoo-gradingResult'" in result.output
