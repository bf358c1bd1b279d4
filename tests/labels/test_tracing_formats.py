"""Exports of Langfuse, LangSmith and Phoenix import without flags: rows, verdicts, labels.

The fixtures (tests/data/formats/{langfuse,langsmith,phoenix}, with the commands that wrote
them and the schemas they follow) hold the same four RAG traces; their judges say fail, pass,
pass, fail, and two reviewers label all four and two of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from judges.stores.judge_store import JudgeStore
from judges.verdicts import import_verdicts, judge_verdicts
from judges.workspace import Workspace
from labels import LabelStore
from labels.errors import ImportFileError
from labels.importing import import_rows
from labels.label_import import import_labels

FORMATS = Path(__file__).parents[1] / "data" / "formats"
JUDGED = ["fail", "pass", "pass", "fail"]

# rows file · tool · passages per row · first id · scores file · metric · its source · reviewers
CASES = [
    ("langfuse/traces.json", "langfuse", "t-q1", "langfuse/scores.parquet", "faithfulness",
     {"score_source": "EVAL", "evaluator": "ev-faithfulness", "evaluation_rule": "rule-faith-1"},
     ("dana", "lee")),
    ("langfuse/observations.jsonl", "langfuse", "t-q1", "langfuse/scores.csv", "faithfulness",
     {"score_source": "EVAL", "evaluator": "ev-faithfulness", "evaluation_rule": "rule-faith-1"},
     ("dana", "lee")),
    ("langsmith/runs.jsonl", "langsmith", "5a1e0002-0000-4000-8000-000000000000",
     "langsmith/feedback.jsonl", "correctness", {"feedback_source": "model"},
     ("dana@example.com", "lee@example.com")),
    ("phoenix/spans.parquet", "phoenix", "a000000000000000", "phoenix/annotations.parquet",
     "hallucination", {"annotator_kind": "LLM"}, ("VXNlcjoy", "VXNlcjoz")),
]


@pytest.mark.parametrize(("rows", "tool", "first", "scores", "metric", "source", "reviewers"),
                         CASES)
def test_rows_verdicts_and_labels_without_flags(
    store: LabelStore, rows: str, tool: str, first: str, scores: str, metric: str,
    source: dict[str, str], reviewers: tuple[str, ...],
) -> None:
    summary = import_rows(store, FORMATS / rows, "d")
    # one row per trace: the child spans / observations / runs are not rows
    assert (summary.tool, summary.rows_read, summary.added) == (tool, 4, 4)
    items = store.items("d")
    assert [len(i.sources) for i in items] == [2, 1, 1, 1]
    assert (items[0].item_id, items[0].question) == (
        first, "Does the Pro plan include single sign-on?")
    assert items[0].answer == "Yes, SSO is included on Pro at no extra cost."

    verdicts = import_verdicts(Workspace.of(store), FORMATS / scores, dataset="d", metric=metric)
    assert (verdicts.judge, verdicts.rows_read, verdicts.added) == (f"{tool}-{metric}", 4, 4)
    assert list(judge_verdicts(Workspace.of(store), "d", verdicts.config_id)["verdict"]) == JUDGED
    assert JudgeStore(store.db).stored_config(verdicts.config_id).source == {
        "tool": tool, "metric": metric, **source}

    labels = import_labels(store, FORMATS / scores, "d")
    assert (labels.tool, labels.metric, labels.rows_read, labels.added) == (tool, metric, 6, 6)
    assert labels.annotators == reviewers
    current = store.current_labels("d")
    by = current.groupby("annotator")["verdict"].apply(list).to_dict()
    assert by == {reviewers[0]: JUDGED, reviewers[1]: ["pass", "fail"]}


def test_langfuse_scores_in_every_format_are_the_same_verdicts(store: LabelStore) -> None:
    import_rows(store, FORMATS / "langfuse" / "traces.json", "lf")
    ids = set()
    for name in ("scores.jsonl", "scores.csv", "scores.parquet"):
        summary = import_verdicts(Workspace.of(store), FORMATS / "langfuse" / name, dataset="lf",
                                  metric="faithfulness")
        ids.add(summary.config_id)
        assert summary.rows_read == 4
    assert len(ids) == 1  # one judge: the re-imports added nothing
    # a numeric evaluator score becomes a verdict only by a rule; 0.7000001 meets >=0.7
    helpful = import_verdicts(Workspace.of(store), FORMATS / "langfuse" / "scores.parquet",
                              dataset="lf",
                              metric="helpfulness", pass_if=">=0.7")
    assert list(judge_verdicts(Workspace.of(store), "lf", helpful.config_id)["verdict"]) == JUDGED
    # the reviewer's comment is the label's note
    import_labels(store, FORMATS / "langfuse" / "scores.jsonl", "lf")
    dana = store.current_labels("lf").set_index(["annotator", "item_id"]).loc[("dana", "t-q1")]
    assert dana["note"] == "at no extra cost: not in the sources"


def test_langsmith_examples_and_the_scores_file_refused_as_rows(store: LabelStore) -> None:
    summary = import_rows(store, FORMATS / "langsmith" / "examples.jsonl", "ex")
    assert (summary.tool, summary.added) == ("langsmith", 4)
    assert [len(i.sources) for i in store.items("ex")] == [2, 1, 1, 1]
    with pytest.raises(ImportFileError, match=r"holds scores and feedback \(correctness\), "
                                              "not rows"):
        import_rows(store, FORMATS / "langsmith" / "feedback.jsonl", "x")


# file · bytes kept · what reads it · the message
TRUNCATED = [
    ("langfuse/traces.json", 1500, "rows", r"traces\.json, row 3: not valid JSON"),
    ("langfuse/scores.jsonl", 1500, "verdicts", r"scores\.jsonl, row 3: line 3 is not valid"),
    ("langfuse/scores.csv", 1500, "labels", r"scores\.csv, row 7: has 4 fields but the header"),
    ("langfuse/scores.parquet", 5000, "verdicts", r"scores\.parquet: not a readable Parquet"),
    ("langsmith/runs.jsonl", 3000, "rows", r"runs\.jsonl, row 3: line 3 is not valid JSON"),
    ("langsmith/feedback.jsonl", 3000, "labels", r"feedback\.jsonl, row 6: line 6 is not valid"),
    ("phoenix/spans.parquet", 5000, "rows", r"spans\.parquet: not a readable Parquet"),
    ("phoenix/annotations.csv", 700, "verdicts", r"annotations\.csv, row 4: has 2 fields"),
]


@pytest.mark.parametrize(("name", "size", "reader", "message"), TRUNCATED)
def test_truncated_exports_name_the_file_and_row(
    store: LabelStore, tmp_path: Path, name: str, size: int, reader: str, message: str,
) -> None:
    store.create_dataset("d")
    cut = tmp_path / Path(name).name
    cut.write_bytes((FORMATS / name).read_bytes()[:size])
    with pytest.raises(ImportFileError, match=message):
        if reader == "rows":
            import_rows(store, cut, "d")
        elif reader == "verdicts":
            import_verdicts(Workspace.of(store), cut, dataset="d", judge="j")
        else:
            import_labels(store, cut, "d")
    assert store.items("d") == []


def test_a_kept_record_keeps_its_row_number(store: LabelStore, tmp_path: Path) -> None:
    # row 4 is the second trace's root observation (rows 2 and 3 are the first's children)
    observations = (FORMATS / "langfuse" / "observations.jsonl").read_text().splitlines()
    observations[3] = observations[3].replace('"input":"{', '"input":"{]')
    broken = tmp_path / "observations.jsonl"
    broken.write_text("\n".join(observations) + "\n")
    with pytest.raises(ImportFileError, match=r"observations\.jsonl, row 4"):
        import_rows(store, broken, "x")


def test_cli_langfuse_round_trip_with_forced_format(tmp_path: Path) -> None:
    db, runner = str(tmp_path / "c.duckdb"), CliRunner()
    traces, scores = FORMATS / "langfuse" / "traces.json", FORMATS / "langfuse" / "scores.csv"
    steps = [
        ["import", str(traces), "--dataset", "lf"],
        ["verdicts", "import", str(scores), "--dataset", "lf", "--metric", "faithfulness"],
        ["labels", "import", str(scores), "--dataset", "lf", "--format", "langfuse",
         "--metric", "faithfulness"],
    ]
    outputs = []
    for step in steps:
        result = runner.invoke(cli, ["--db", db, *step])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    assert "judge 'langfuse-faithfulness'" in outputs[1]
    assert "6 labels read, 6 added" in outputs[2]
    result = runner.invoke(cli, ["--db", db, "labels", "import", str(scores), "--dataset", "lf",
                                 "--format", "phoenix"])
    assert result.exit_code == 2
    assert "--format phoenix: the file does not have phoenix's shape" in result.output
