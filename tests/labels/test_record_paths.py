"""Nested paths in --map and --records, and ragas' Python-list cells, on real DuckDB stores."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from calibrate_app.cli import cli
from labels import LabelStore
from labels.errors import ImportFileError
from labels.importing import import_rows
from labels.record_paths import leaf_paths, parse_path, record_lists, resolve

FORMATS = Path(__file__).parents[1] / "data" / "formats"

NESTED = {
    "meta": {"exported": "2026-11-01"},
    "data": {"items": [
        {"id": "n1", "prompt": {"text": "Does Pro include SSO?"},
         "response": {"output": {"text": "Yes, at no cost."}, "tokens": 3},
         "contexts": [{"text": "Pro includes SSO.", "score": 0.9},
                      {"text": "SSO needs the Security add-on.", "score": 0.5}]},
        {"id": "n2", "prompt": {"text": "Is there an API?"},
         "response": {"output": {"text": "No."}, "tokens": 2},
         "contexts": [{"text": "There is a REST API."}]},
    ]},
}
MAP = {"question": "prompt.text", "answer": "response.output.text",
       "sources": "contexts[*].text"}


def _write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return path


def test_paths_resolve_keys_indexes_wildcards_and_filters() -> None:
    record = {"a": {"b": [{"name": "x", "v": 1}, {"name": "y", "v": 2}]}, "s": "text"}
    assert resolve(record, parse_path("a.b[*].v")) == [1, 2]
    assert resolve(record, parse_path("a.b[-1].name")) == "y"
    assert resolve(record, parse_path("a.b[name=y].v")) == 2
    assert resolve(record, parse_path("a.b[5].v")) is None  # past the end: absent, not an error
    assert resolve(record, parse_path("a.c")) is None
    assert leaf_paths(record) == ["a.b[*].name", "a.b[*].v", "s"]
    assert record_lists({"x": {"rows": [{}, {}]}, "y": [1]}) == [("x.rows", 2)]
    for bad in ("a..b", "a[", "a[b c]", ""):
        with pytest.raises(ImportFileError):
            parse_path(bad)


def test_nested_map_and_records_import_rows_and_passages(store: LabelStore, tmp_path: Path) -> None:
    path = _write(tmp_path, "nested.json", NESTED)
    summary = import_rows(store, path, "n", mapping=MAP, records="data.items")
    assert (summary.rows_read, summary.added) == (2, 2)
    items = {i.item_id: i for i in store.items("n")}
    assert items["n1"].question == "Does Pro include SSO?"
    assert items["n1"].answer == "Yes, at no cost."
    assert [p.text for p in items["n1"].sources] == [
        "Pro includes SSO.", "SSO needs the Security add-on."]
    assert len(items["n2"].sources) == 1
    # the objects the paths read from are not copied into metadata as well
    assert items["n1"].metadata == {}
    again = import_rows(store, path, "n", mapping=MAP, records="data.items")
    assert (again.added, again.unchanged) == (0, 2)


def test_an_unmappable_file_lists_the_paths_it_has(store: LabelStore, tmp_path: Path) -> None:
    path = _write(tmp_path, "nested.json", NESTED)
    with pytest.raises(ImportFileError) as error:
        import_rows(store, path, "n")
    assert str(error.value) == (
        f"{path}: expected a JSON list of records, got a JSON object; its lists of records: "
        "data.items (2): name one with --records PATH (e.g. --records data.items)")
    with pytest.raises(ImportFileError) as error:
        import_rows(store, path, "n", records="data.items")
    assert "missing required column 'question'" in str(error.value)
    assert ("prompt.text, response.output.text, response.tokens, contexts[*].text, "
            "contexts[*].score") in str(error.value)
    with pytest.raises(ImportFileError, match=r"--map answer=response.output.txt: no record "
                       r"has this path \(paths: id, prompt.text"):
        import_rows(store, path, "n", records="data.items",
                    mapping={**MAP, "answer": "response.output.txt"})
    with pytest.raises(ImportFileError, match=r"--records 'data.itemz': has no key 'itemz'"):
        import_rows(store, path, "n", records="data.itemz")
    assert store.datasets() == []  # nothing half-written


def test_a_record_that_does_not_fit_the_path_names_its_row(
    store: LabelStore, tmp_path: Path
) -> None:
    rows = json.loads(json.dumps(NESTED["data"]["items"]))  # type: ignore[index]
    rows[1]["response"] = "flat text"
    path = _write(tmp_path, "rows.json", rows)
    with pytest.raises(ImportFileError) as error:
        import_rows(store, path, "n", mapping=MAP)
    assert str(error.value).startswith(
        f"{path}, row 2, column 'response.output.text': the path does not fit: 'output' is a "
        "key, but here the record holds text")
    rows[1]["response"] = {"output": {"text": "No."}}
    rows[1]["prompt"] = {}
    path = _write(tmp_path, "rows.json", rows)
    with pytest.raises(ImportFileError, match=r"row 2, column 'prompt.text': is empty but is"):
        import_rows(store, path, "n", mapping=MAP)
    assert store.datasets() == []


def test_paths_reach_into_json_text_cells_of_a_csv(store: LabelStore, tmp_path: Path) -> None:
    path = _write(tmp_path, "rows.csv", (
        'id,q,reply\nc1,Is there an API?,"{""output"": {""text"": ""Yes.""}}"\n'))
    import_rows(store, path, "c", mapping={"question": "q", "answer": "reply.output.text"})
    (item,) = store.items("c")
    assert item.answer == "Yes."


def test_ragas_csv_list_cells_are_lists_of_passages(store: LabelStore) -> None:
    csv_summary = import_rows(store, FORMATS / "ragas" / "dataset.csv", "from-csv")
    assert csv_summary.warnings == ()
    jsonl_summary = import_rows(store, FORMATS / "ragas" / "dataset.jsonl", "from-jsonl")
    assert (csv_summary.added, jsonl_summary.added) == (4, 4)
    from_csv, from_jsonl = store.items("from-csv"), store.items("from-jsonl")
    assert [len(i.sources) for i in from_csv] == [2, 1, 3, 1]
    assert from_csv[2].sources[2].text == 'Admins can schedule exports, e.g. "weekly", in Settings.'
    # the same rows either way: same passages, same generated ids
    assert [(i.item_id, [s.text for s in i.sources]) for i in from_csv] == [
        (i.item_id, [s.text for s in i.sources]) for i in from_jsonl]


def test_python_list_cells_are_read_as_data_never_run(store: LabelStore, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = _write(tmp_path, "rows.csv", (
        "question,answer,contexts\n"
        f"q1,a1,\"[__import__('pathlib').Path('{marker}').touch()]\"\n"
        "q2,a2,[1] See the manual\n"
        "q3,a3,\"[\"\"it's here\"\", 'and here']\"\n"))
    summary = import_rows(store, path, "p")
    assert not marker.exists()
    texts = [[s.text for s in i.sources] for i in store.items("p")]
    assert texts[0] == [f"[__import__('pathlib').Path('{marker}').touch()]"]
    assert texts[1] == ["[1] See the manual"]
    assert texts[2] == ["it's here", "and here"]
    assert "rows 1, 2 start with '[' but are not a JSON list" in summary.warnings[0]


def test_cli_import_takes_records_and_nested_maps(tmp_path: Path) -> None:
    path = _write(tmp_path, "nested.json", NESTED)
    db = tmp_path / "c.duckdb"
    args = ["--db", str(db), "import", str(path), "--dataset", "n", "--records", "data.items"]
    maps = [a for k, v in MAP.items() for a in ("--map", f"{k}={v}")]
    result = CliRunner().invoke(cli, [*args, *maps])
    assert result.exit_code == 0, result.output
    assert "2 rows read, 2 added" in result.output
    result = CliRunner().invoke(cli, args)
    assert result.exit_code != 0
    assert "contexts[*].text" in result.output


def test_a_mistyped_column_or_field_name_gets_a_did_you_mean(
    store: LabelStore, tmp_path: Path
) -> None:
    """Issue 29 item 8: column names in --map and import errors suggest the closest name."""
    flat = _write(tmp_path, "flat.csv", "id,prompt,answr\nr1,Q?,A.\n")
    with pytest.raises(ImportFileError) as error:
        import_rows(store, flat, "d", mapping={"question": "promt"})
    assert "the file has no column 'promt'; did you mean 'prompt'? (columns: id, prompt, answr)" \
        in str(error.value)
    with pytest.raises(ImportFileError) as error:
        import_rows(store, flat, "d", mapping={"question": "prompt"})
    assert str(error.value).endswith(
        "missing required column 'answer' (columns: id, prompt, answr); map one with "
        "--map answer=COLUMN (did you mean --map answer=answr?)")
    nested = _write(tmp_path, "nested.json", NESTED["data"]["items"])  # type: ignore[index]
    with pytest.raises(ImportFileError) as error:
        import_rows(store, nested, "n", mapping={**MAP, "answer": "respons.output.text"})
    assert "no column or path 'respons' in the file; did you mean 'response.output.text'?" \
        in str(error.value)
    # a header that is a .env line is never offered back, even when it is the closest name
    dotenv = _write(tmp_path, "env.csv", "id,QUESTION=hunter2,answer\nr1,x,y\n")
    with pytest.raises(ImportFileError) as error:
        import_rows(store, dotenv, "e", mapping={"question": "QUESTION"})
    assert "did you mean" not in str(error.value) and "hunter2" not in str(error.value)
    assert store.datasets() == []
    # the fields a --map names, on the command line, for rows and for labels
    result = CliRunner().invoke(cli, ["--db", str(store.db.path), "import", str(flat),
                                      "--dataset", "d", "--map", "questoin=prompt"])
    assert result.exit_code == 2
    assert "unknown field 'questoin'; did you mean 'question'?" in result.output


def test_a_labels_file_with_a_mistyped_column_gets_a_did_you_mean(
    store: LabelStore, tmp_path: Path
) -> None:
    from labels.importing import import_labels

    rows = _write(tmp_path, "rows.csv", "id,question,answer\nr1,Q?,A.\n")
    import_rows(store, rows, "d")
    sheet = _write(tmp_path, "sheet.csv", "id,lable\nr1,pass\n")
    with pytest.raises(ImportFileError) as error:
        import_labels(store, sheet, "d", annotator="dana")
    assert "missing required column 'label'; did you mean 'lable'? (columns: id, lable)" \
        in str(error.value)
    with pytest.raises(ImportFileError) as error:
        import_labels(store, sheet, "d", annotator="dana", mapping={"lable": "lable"})
    assert "--map lable=…: unknown field; did you mean 'label'?" in str(error.value)
    imported = import_labels(store, sheet, "d", annotator="dana", mapping={"label": "lable"})
    assert imported.added == 1
