"""The cache hash stored with each item: equal to ``item_hash(item)``, filled for older files."""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from repo_paths import TESTS

from judges.stores.judge_store import item_hash
from judges.verdicts import dataset_hashes
from judges.workspace import Workspace
from labels import import_rows, open_store
from labels.errors import ImportFileError
from labels.item_hashes import content_hashes
from labels.stores import item_store
from labels.stores.item_store import _HASH_SQL, fill_item_hashes
from labels.stores.label_store import LabelStore

# Text that JSON writers disagree on: control characters (Python writes \u000b, lower case),
# quotes, backslashes, slashes, escapes written as text, non-ASCII, astral characters, line
# separators, a byte-order mark, DEL.
TRICKY = ["plain", "tab\there", "vt\x0bthen\x1fus", 'quote " and \\ back/slash', "é ñ 中文",
          "smile \U0001f600", "line\u2028sep", "nul-ish \x01\x02", "<b>tag</b>", "\\u000B as text",
          "crlf\r\nend", "\ufeffbom", "del\x7f", "  spaced  ", "nul-ish \x01 in JSON"]
# No NUL: neither a CSV file nor (since issue 25) a JSON string may hold one.
CSV_TRICKY = TRICKY


def _stored(store: LabelStore, dataset: str) -> dict[str, str]:
    return dict(store.db.fetchall(
        "SELECT item_id, item_hash FROM items WHERE dataset = ?", [dataset]
    ))


def _expected(store: LabelStore, dataset: str) -> dict[str, str]:
    return {item.item_id: item_hash(item) for item in store.items(dataset)}


def _odd_sources(i: int, text: str) -> Any:
    """Each shape of sources the importer accepts, in turn."""
    shapes: list[Any] = [
        [f"s{i} {text}", f"second {text}"],
        [{"text": f"t {text}", "id": f"d{i}"}, {"content": text, "source_id": 7}],
        [{"page_content": text, "document_id": None}],
        [],
        f"plain passage {text}",
        json.dumps([f"json in a cell {text}", text]),
        f"[1] a citation, not JSON {text}",
        None,
    ]
    return shapes[i % len(shapes)]


def test_imported_jsonl_stores_item_hash_on_tricky_text(store: LabelStore, tmp_path: Path) -> None:
    rows = []
    for i in range(48):
        text = TRICKY[i % len(TRICKY)]
        row: dict[str, Any] = {"id": f"r{i}", "question": f"q{i} {text}?", "answer": f"a {text}",
                               "sources": _odd_sources(i, text), "meta_field": text}
        if i % 3 == 0:
            row["reference"] = f"ref {text}"
        rows.append(row)
    path = tmp_path / "tricky.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    import_rows(store, path, "tricky")
    stored = _stored(store, "tricky")
    assert len(stored) == 48 and None not in stored.values()
    assert stored == _expected(store, "tricky")
    _assert_content_hashes(store, "tricky")


def test_an_import_in_slices_stores_the_same_hashes_and_refuses_a_key_across_slices(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Into an empty dataset rows go in slices, hashed in a worker thread meanwhile.

    The stored hashes are those of a one-slice import; a key met in two slices, or a failure
    while hashing a later slice, leaves nothing written.
    """
    rows = [{"id": f"r{i}", "question": f"q{i} {TRICKY[i % len(TRICKY)]}?", "answer": f"a{i}",
             "sources": _odd_sources(i, TRICKY[i % len(TRICKY)])} for i in range(23)]
    path = tmp_path / "sliced.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    import_rows(store, path, "whole")
    monkeypatch.setattr(item_store, "_SLICE_ROWS", 5)
    import_rows(store, path, "sliced")
    assert _stored(store, "sliced") == _stored(store, "whole") == _expected(store, "sliced")
    _assert_content_hashes(store, "sliced")

    rows[17]["id"] = "r3"  # slice 4 repeats a key of slice 1
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(ImportFileError, match="rows 4, 18 share the id 'r3'"):
        import_rows(store, path, "dup")
    rows[17]["id"] = "r17"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    real_hashes, calls = item_store.hash_columns, []

    def failing(part: Any) -> Any:
        calls.append(part.num_rows)
        if len(calls) == 3:
            raise RuntimeError("hashing failed")
        return real_hashes(part)

    monkeypatch.setattr(item_store, "hash_columns", failing)
    with pytest.raises(RuntimeError, match="hashing failed"):
        import_rows(store, path, "broken")
    assert store.db.fetchall("SELECT count(*) FROM items WHERE dataset IN ('dup', 'broken')") \
        == [(0,)]
    assert store.db.fetchall("SELECT name FROM datasets WHERE name IN ('dup', 'broken')") == []


def _assert_content_hashes(store: LabelStore, dataset: str) -> None:
    """The content hash written by Python is DuckDB's sha256 of the same text."""
    assert store.db.fetchall(
        f"SELECT count(*), count(*) FILTER (content_hash = {_HASH_SQL}) FROM items "
        "WHERE dataset = ?", [dataset],
    )[0] == (len(_stored(store, dataset)),) * 2


def test_imported_csv_stores_item_hash_pairwise_and_generated_ids(
    store: LabelStore, tmp_path: Path
) -> None:
    path = tmp_path / "pairs.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "answer_a", "answer_b", "contexts", "reference"])
        for i, text in enumerate(CSV_TRICKY):
            sources = json.dumps([text, f"p{i}"], ensure_ascii=i % 2 == 0)  # \u escapes or not
            writer.writerow([f"q{i} {text}", f"A {text}", "" if i == 3 else f"B {text}",
                             sources + (" " if i == 5 else ""), "" if i % 2 else text])
    import_rows(store, path, "pairs")
    stored = _stored(store, "pairs")
    assert len(stored) == len(CSV_TRICKY)
    assert stored == _expected(store, "pairs")
    _assert_content_hashes(store, "pairs")


# Every character JSON escapes (short escapes \b \f \n \r \t, the rest \u00xx in lower case)
# and those it does not (DEL, U+2028, U+2029): the texts real answers hold, several lines long.
CONTROL = [f"c{code:02x} {chr(code)} end" for code in range(0x20)] + [
    "line one\nline two\n", "crlf one\r\ncrlf two\r\n", "tab\tand\ttab", "del\x7f",
    "ls\u2028ps\u2029", "mixed \"quote\"\\n\n\x1b[0m\x0b\x0c\x08 all",
]


def test_item_hash_by_arrow_equals_item_hash_on_every_control_character(
    store: LabelStore, tmp_path: Path
) -> None:
    # Every control character but NUL, which no file may hold (a CSV's NUL refusal, and JSON's
    # since issue 25); hash_columns still writes its escape (the test below).
    rows = [{"id": f"r{i}", "question": f"q{i} {text}", "answer": f"{text}\nsecond line",
             "reference": text if i % 2 else None, "sources": [text, f"p{i}"]}
            for i, text in enumerate(CONTROL) if i]
    path = tmp_path / "control.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    import_rows(store, path, "control")
    stored = _stored(store, "control")
    assert len(stored) == len(CONTROL) - 1
    assert stored == _expected(store, "control")
    _assert_content_hashes(store, "control")
    # The same rows through the CSV reader's Arrow columns.
    csv_path = tmp_path / "control.csv"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "question", "answer_a", "answer_b", "reference"])
        for row in rows:
            writer.writerow([row["id"], row["question"], row["answer"], f"B {row['question']}",
                             row["reference"] or ""])
    import_rows(store, csv_path, "control_csv")
    stored = _stored(store, "control_csv")
    assert len(stored) == len(CONTROL) - 1
    assert stored == _expected(store, "control_csv")
    _assert_content_hashes(store, "control_csv")


def test_hash_columns_writes_the_json_escapes_as_json_dumps_does() -> None:
    import pyarrow as pa

    column = pa.chunked_array([pa.array(CONTROL[:16]), pa.array([*CONTROL[16:], None])])
    escaped = item_store._json_string(column).to_pylist()
    assert escaped[:-1] == [json.dumps(text, ensure_ascii=False)[1:-1] for text in CONTROL]
    assert escaped[-1] is None


def test_foreign_sources_json_is_rewritten_before_hashing(
    store: LabelStore, make_dataset: Any
) -> None:
    """Rows a tool wrote with spaces or ASCII escapes in their sources hash as the store reads them.

    Their text starts as the importer's canonical JSON does, so only parsing tells them apart.
    """
    make_dataset("d", [{"id": f"r{i}", "question": f"q{i}", "answer": "a"} for i in range(3)])
    foreign = ['[{"source_id": null, "text": "caf\\u00e9"}]',
               '[{"source_id":null,"text":"tab\\u0009 \\ud83d\\ude00"}]',
               '[{"source_id":"s1" ,"text":"x"},{"text":"y","source_id":null}]']
    with store.db.transaction() as cur:
        for i, sources in enumerate(foreign):
            cur.execute("UPDATE items SET sources = ?, item_hash = NULL WHERE item_id = ?",
                        [sources, f"r{i}"])
        assert fill_item_hashes(cur) == 3
    expected = _expected(store, "d")
    assert [store.item("d", f"r{i}").sources[0].text for i in range(2)] == ["café",
                                                                         "tab\t 😀"]
    assert _stored(store, "d") == expected


def test_an_older_file_gets_its_hashes_on_opening(tmp_path: Path) -> None:
    path = tmp_path / "release.duckdb"
    release = TESTS / "data" / "releases" / "a39e63f.duckdb.gz"
    with gzip.open(release, "rb") as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    store = open_store(str(path))
    stored = _stored(store, "old")
    assert sorted(stored) == [f"r{i}" for i in range(6)]
    assert stored == _expected(store, "old")
    store.db.close()


def test_rows_stored_without_a_hash_are_hashed_then_filled(
    store: LabelStore, make_dataset: Any
) -> None:
    make_dataset("d", [{"id": f"r{i}", "question": f"q {t}", "answer": t, "sources": [t]}
                       for i, t in enumerate(TRICKY)])
    expected = _expected(store, "d")
    with store.db.transaction() as cur:  # as a tool writing items directly would leave them
        cur.execute("UPDATE items SET item_hash = NULL WHERE item_id IN ('r1', 'r2', 'r9')")
    frame = dataset_hashes(Workspace.of(store), "d")
    assert dict(zip(frame["item_id"], frame["item_hash"], strict=True)) == expected
    assert frame["position"].tolist() == list(range(len(TRICKY)))
    planned: list[str] = []
    for batch in store.content_batches("d", batch_rows=4):
        planned += content_hashes(batch)
    assert planned == [expected[f"r{i}"] for i in range(len(TRICKY))]
    with store.db.transaction() as cur:
        assert fill_item_hashes(cur, page_rows=2) == 3
        assert fill_item_hashes(cur) == 0
    assert _stored(store, "d") == expected


def test_reports_and_planning_read_the_stored_column(
    store: LabelStore, make_dataset: Any
) -> None:
    make_dataset("d", [{"id": "r0", "question": "q", "answer": "a"},
                       {"id": "r1", "question": "q1", "answer": "a1"}])
    with store.db.transaction() as cur:
        cur.execute("UPDATE items SET item_hash = 'istored' WHERE item_id = 'r1'")
    frame = dataset_hashes(Workspace.of(store), "d")
    assert frame["item_hash"].tolist() == [item_hash(store.items("d")[0]), "istored"]
    batch = next(store.content_batches("d"))
    assert content_hashes(batch)[1] == "istored"


# Sources cells as files hold them: json.dumps lists (spaced, compact, ASCII-escaped), other
# writers' spacing, trailing commas DuckDB would accept, nesting, objects, citations, escapes.
SOURCE_CELLS = [
    json.dumps(["a", "b"]), json.dumps(["a", "b"], separators=(",", ":")), json.dumps([]),
    json.dumps(["é 中文 \U0001f600", 'q " and \\ b/s']), json.dumps(["é"], ensure_ascii=True),
    json.dumps(["tab\there", "vt\x0bx"]), '["\\u000B upper"]', '["a\\/b"]', '["a",]', '["a" ,"b"]',
    '[ "a", "b" ]', '["a", "b"] ', '["a",\n"b"]', '["a", "b","c"]', '["[", ", "]', '[""]',
    '["",",",""]', '["a", ",", "b"]', "[1] See the manual", "[]", "", "plain text",
    '[{"text": "t", "id": 3}]', '["a"]]', '["a"',
    "  [\"lead\"]", '["a", "b", "c", "d"]', '["line\u2028sep", "<b>"]',
]


def test_csv_sources_are_stored_as_the_careful_path_writes_them(
    store: LabelStore, tmp_path: Path
) -> None:
    """Whole-column (CSV) and per-row (JSONL) paths store the same bytes and hashes."""
    rows = [{"id": f"r{i}", "question": f"q{i}", "answer": "a", "sources": cell}
            for i, cell in enumerate(SOURCE_CELLS)]
    path = tmp_path / "cells.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    fast = import_rows(store, path, "fast")
    lines = tmp_path / "cells.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    careful = import_rows(store, lines, "careful")
    query = ("SELECT item_id, sources::VARCHAR, content_hash, item_hash FROM items "
             "WHERE dataset = ? ORDER BY position")
    stored = store.db.fetchall(query, ["fast"])
    assert stored == store.db.fetchall(query, ["careful"])
    assert [s[1] for s in stored][:3] == [
        '[{"source_id":null,"text":"a"},{"source_id":null,"text":"b"}]'] * 2 + ["[]"]
    assert stored[5][1] == ('[{"source_id":null,"text":"tab\\there"},'
                            '{"source_id":null,"text":"vt\\u000bx"}]')
    assert [w.replace("cells.csv", "cells.jsonl") for w in fast.warnings] == list(careful.warnings)
    assert _stored(store, "fast") == _expected(store, "fast")


@pytest.mark.parametrize("cell", ['[["nested"]]', "[null]", '["x", 1]', '[{"id": 1}]'])
def test_a_bad_sources_cell_gets_the_same_message_from_csv_and_jsonl(
    store: LabelStore, tmp_path: Path, cell: str
) -> None:
    rows = [{"question": "q0", "answer": "a", "sources": '["fine", "cell"]'},
            {"question": "q1", "answer": "a", "sources": cell}]
    path = tmp_path / "bad.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    lines = tmp_path / "bad.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    messages = []
    for source in (path, lines):
        with pytest.raises(ImportFileError) as refused:
            import_rows(store, source, "d")
        messages.append(str(refused.value).replace(str(source), "FILE"))
    assert messages[0] == messages[1]
    assert messages[0].startswith("FILE, row 2, column 'sources': passage ")
    assert store.db.fetchall("SELECT count(*) FROM items") == [(0,)]
