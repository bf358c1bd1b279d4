"""The label store on real DuckDB files: schema, migrations, round trips, history, threads."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labels import (
    CalibrateError,
    ConflictError,
    Database,
    DatabaseLockedError,
    LabelStore,
    NotFoundError,
    content_id,
    import_rows,
    open_store,
)
from labels.errors import AlreadyLabelledError
from labels.models import sources_json
from labels.stores.migrations import Migration, applied_migrations, migrate
from labels.stores.schema import LABEL_TABLES

EXPECTED_COLUMNS = {
    "items": [
        "dataset",
        "item_id",
        "position",
        "question",
        "answer",
        "answer_a",
        "answer_b",
        "sources",
        "reference",
        "segment",
        "document_id",
        "metadata",
        "content_hash",
        "imported_at",
        "item_hash",
    ],
    "labels": [
        "label_id",
        "dataset",
        "item_id",
        "annotator",
        "criterion",
        "verdict",
        "note",
        "failure_tags",
        "labelled_at",
        "seconds_spent",
        "origin",
    ],
    "datasets": ["name", "kind", "source_file", "created_at"],
    "annotators": ["name", "created_at"],
    "criteria": ["name", "kind", "guidelines", "show_reference", "failure_tags", "created_at"],
    "label_provenance": [
        "label_id", "selection", "stratum", "inclusion_probability", "selection_share", "judge",
    ],
}


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]


def test_blank_file_gets_the_whole_schema(db_path: Path) -> None:
    open_store(str(db_path)).db.close()
    con = duckdb.connect(str(db_path))
    tables = {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert set(LABEL_TABLES) <= tables
    for table, columns in EXPECTED_COLUMNS.items():
        assert _columns(con, table) == columns
    assert applied_migrations(con, "labels") == [
        "m001_core", "m002_label_provenance", "m003_item_hash", "m004_escalated_selection",
        "m005_items_by_id",
    ]
    timestamp_type = con.execute(
        "SELECT data_type FROM information_schema.columns WHERE table_name = 'labels' "
        "AND column_name = 'labelled_at'"
    ).fetchall()[0][0]
    assert timestamp_type == "TIMESTAMP WITH TIME ZONE"
    con.close()


def test_reopening_applies_nothing_and_keeps_data(db_path: Path) -> None:
    s = open_store(str(db_path))
    s.create_dataset("d")
    s.db.close()
    s = open_store(str(db_path))
    assert [d.name for d in s.datasets()] == ["d"]
    with s.db.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM _migrations").fetchall()[0][0] == 5
    s.db.close()


def test_an_older_file_is_migrated_in_order(db_path: Path) -> None:
    first = [Migration("m001_a", "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")]
    later = [*first, Migration("m002_b", "ALTER TABLE t ADD COLUMN y VARCHAR DEFAULT 'new'")]
    con = duckdb.connect(str(db_path))
    assert migrate(con, "demo", first) == ["m001_a"]
    assert migrate(con, "demo", later) == ["m002_b"]
    assert con.execute("SELECT x, y FROM t").fetchall() == [(1, "new")]
    assert migrate(con, "demo", later) == []
    con.close()


def test_a_failing_migration_leaves_no_trace(db_path: Path) -> None:
    con = duckdb.connect(str(db_path))
    broken = [
        Migration("m001_ok_then_bad", "CREATE TABLE u (x INTEGER); SELECT no_such_column FROM u")
    ]
    with pytest.raises(duckdb.Error):
        migrate(con, "demo", broken)
    tables = {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    assert "u" not in tables
    assert applied_migrations(con, "demo") == []
    con.close()


def test_a_newer_file_is_refused(db_path: Path) -> None:
    con = duckdb.connect(str(db_path))
    migrate(
        con,
        "demo",
        [
            Migration("m001_a", "CREATE TABLE t (x INTEGER)"),
            Migration("m002_b", "CREATE TABLE v (x INTEGER)"),
        ],
    )
    with pytest.raises(RuntimeError, match="newer version"):
        migrate(con, "demo", [Migration("m001_a", "CREATE TABLE t (x INTEGER)")])
    con.close()


_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=40,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(question=_text, answer=_text, passages=st.lists(_text, max_size=3), use_csv=st.booleans())
def test_any_unicode_text_survives_import_and_read(
    store: LabelStore,
    tmp_path: Path,
    question: str,
    answer: str,
    passages: list[str],
    use_csv: bool,
) -> None:
    if use_csv:
        path = tmp_path / "rows.csv"
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "question", "answer", "sources"])
            writer.writerow(["x", question, answer, json.dumps(passages, ensure_ascii=False)])
    else:
        path = tmp_path / "rows.jsonl"
        row = {"id": "x", "question": question, "answer": answer, "sources": passages}
        path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    with store.db.cursor() as cur:
        cur.execute("DELETE FROM items")
    import_rows(store, path, "rt")
    item = store.item("rt", "x")
    assert item.question == question
    assert item.answer == answer
    assert [s.text for s in item.sources] == passages


def test_reimport_is_idempotent_and_changes_are_reported(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    rows = [
        {"id": str(i), "question": f"q{i}", "answer": f"a{i}", "sources": [f"s{i}"]}
        for i in range(5)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    first = import_rows(store, path, "d")
    again = import_rows(store, path, "d")
    assert (first.added, first.unchanged) == (5, 0)
    assert (again.added, again.unchanged) == (0, 5)
    assert store.count_items("d") == 5

    rows[2]["answer"] = "a different answer"
    rows.append({"id": "new", "question": "q", "answer": "a"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(
        ConflictError, match=r"1 row\(s\) differ .*'2' \(row 3\).*Nothing was imported"
    ):
        import_rows(store, path, "d")
    assert store.count_items("d") == 5
    assert store.item("d", "2").answer == "a2"
    skipped = import_rows(store, path, "d", on_changed="skip")
    assert (skipped.added, skipped.unchanged, skipped.changed) == (1, 4, 1)
    assert store.item("d", "2").answer == "a2", "never silently overwritten"


def test_rows_without_ids_get_the_same_content_id_in_every_format(
    store: LabelStore, tmp_path: Path
) -> None:
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text(
        json.dumps({"question": "Q?", "answer": "A.", "sources": ["one", "two"]}) + "\n"
    )
    as_csv = tmp_path / "a.csv"
    as_csv.write_text("question,answer,sources_1,sources_2\nQ?,A.,one,two\n")
    import_rows(store, jsonl, "j")
    import_rows(store, as_csv, "c")
    (j,), (c,) = store.items("j"), store.items("c")
    assert j.item_id == c.item_id
    assert j.item_id == content_id("Q?", "A.", None, None, sources_json(j.sources), None)


def test_ragas_format_and_column_mapping(store: LabelStore, tmp_path: Path) -> None:
    ragas = tmp_path / "ragas.json"
    ragas.write_text(
        json.dumps(
            [
                {
                    "user_input": "Does Pro include SSO?",
                    "retrieved_contexts": ["Pro includes SSO."],
                    "response": "Yes.",
                    "reference": "Yes, on Pro.",
                }
            ]
        )
    )
    import_rows(store, ragas, "r", format="ragas")
    (item,) = store.items("r")
    assert (item.question, item.answer, item.reference) == (
        "Does Pro include SSO?",
        "Yes.",
        "Yes, on Pro.",
    )
    assert [s.text for s in item.sources] == ["Pro includes SSO."]

    mapped = tmp_path / "m.csv"
    mapped.write_text("key,prompt,output,ctx1,ctx2,team\nk1,P?,O.,c1,c2,blue\n")
    import_rows(
        store,
        mapped,
        "m",
        mapping={"id": "key", "question": "prompt", "answer": "output", "sources": "ctx1,ctx2"},
    )
    item = store.item("m", "k1")
    assert (item.question, item.answer) == ("P?", "O.")
    assert [s.text for s in item.sources] == ["c1", "c2"]
    assert item.metadata == {"team": "blue"}


def test_parquet_pairwise_and_source_ids(store: LabelStore, tmp_path: Path) -> None:
    import pandas as pd

    path = tmp_path / "pairs.parquet"
    pd.DataFrame(
        {
            "id": ["p1"],
            "question": ["Which is better?"],
            "answer_a": ["A"],
            "answer_b": ["B"],
            "sources": [[{"text": "src", "id": "doc-9"}]],
            "document_id": ["doc-9"],
        }
    ).to_parquet(path)
    import_rows(store, path, "pw")
    item = store.item("pw", "p1")
    assert item.kind == "pairwise"
    assert item.sources[0].source_id == "doc-9"
    assert store.dataset("pw").kind == "pairwise"


def test_label_history_is_append_only(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"id": "1", "question": "q", "answer": "a"}) + "\n")
    import_rows(store, path, "d")
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    store.add_label("d", "1", "ann", "pass", labelled_at=t0, seconds_spent=3.5)
    store.add_label(
        "d", "1", "ann", "fail", note="missed a condition", labelled_at=t0 + timedelta(minutes=1)
    )
    store.add_label("d", "1", "bob", "unsure", labelled_at=t0)
    history = store.history("d", "1", annotator="ann")
    assert [label.verdict for label in history] == ["pass", "fail"]
    assert history[0].seconds_spent == 3.5
    assert history[0].labelled_at.utcoffset() == timedelta(0)
    current = store.current_labels("d")
    assert sorted(zip(current["annotator"], current["verdict"], strict=True)) == [
        ("ann", "fail"),
        ("bob", "unsure"),
    ]
    assert store.dataset("d").labels == 2
    with pytest.raises(CalibrateError, match="not one of pass, fail, unsure"):
        store.add_label("d", "1", "ann", "a")
    with pytest.raises(NotFoundError, match="no item 'nope'"):
        store.add_label("d", "nope", "ann", "pass")
    with pytest.raises(CalibrateError, match="timezone-aware"):
        store.add_label("d", "1", "ann", "pass", labelled_at=datetime(2026, 1, 1))  # noqa: DTZ001
    assert len(store.history("d", "1")) == 3, "failed writes leave nothing"


def test_eight_threads_lose_no_label(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": str(i), "question": f"q{i}", "answer": "a"}) + "\n" for i in range(50)
        )
    )
    import_rows(store, path, "d")
    errors: list[BaseException] = []

    def annotate(who: str) -> None:
        try:
            for i in range(50):
                store.add_label("d", str(i), who, "pass" if i % 2 else "fail", seconds_spent=0.1)
                store.current_labels("d", annotator=who)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=annotate, args=(f"a{k}",)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with store.db.cursor() as cur:
        total, distinct = cur.execute(
            "SELECT count(*), count(DISTINCT (item_id, annotator)) FROM labels"
        ).fetchall()[0]
    assert (total, distinct) == (400, 400)
    assert store.label_counts("d", "faithfulness") == {str(i): 8 for i in range(50)}


HOLDER = """
import sys, time
from labels import open_store
s = open_store(sys.argv[1])
print("ready", flush=True)
time.sleep(60)
"""


def test_file_held_by_another_process_is_explained(db_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        started = time.monotonic()
        with pytest.raises(DatabaseLockedError) as caught:
            Database(db_path, lock_timeout=0.3)
        assert time.monotonic() - started >= 0.3, "it retried for the lock timeout"
        message = str(caught.value)
        assert f"process {proc.pid}" in message
        assert "python" in message
        assert "only one process" in message and "--db" in message

        from click.testing import CliRunner

        from calibrate_app.cli import cli

        result = CliRunner().invoke(
            cli, ["--db", str(db_path), "datasets"], env={"CALIBRATE_LOCK_TIMEOUT": "0"}
        )
        assert result.exit_code == 1
        assert f"process {proc.pid}" in result.output
        assert "Traceback" not in result.output and "IOException" not in result.output
    finally:
        proc.kill()
        proc.wait()
    Database(db_path).close()  # the OS released the lock with the process


def test_skips_are_stored_in_order_and_open_work_follows_the_overlap(
    store: LabelStore, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(
        json.dumps({"id": f"r{i}", "question": f"Q{i}", "answer": "A", "sources": ["S"]}) + "\n"
        for i in range(3)
    ))
    import_rows(store, rows, "d")
    store.skip("d", "faithfulness", "kim", "r1")
    store.skip("d", "faithfulness", "kim", "r0")
    store.skip("d", "faithfulness", "kim", "r1")  # skipped again: to the end again
    assert store.skipped("d", "faithfulness", "kim") == ["r0", "r1"]
    assert store.skipped("d", "faithfulness", "eve") == []
    assert store.open_work("kim") == [("d", "faithfulness", 3), ("d", "correctness", 3)]
    for item_id in ("r0", "r1"):
        store.add_label("d", item_id, "eve", "pass", criterion="faithfulness")
    assert store.open_work("kim") == [("d", "faithfulness", 1), ("d", "correctness", 3)]
    store.add_label("d", "r2", "kim", "fail", criterion="faithfulness")
    assert store.open_work("kim") == [("d", "correctness", 3)]


def test_a_label_for_a_row_just_read_checks_nothing_again(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Label page reads a row, then labels it: the label's transaction scans no items.

    At 1,000,000 items that existence check scanned the item_id column on every key press
    (DuckDB uses no index for the composite key); an item or annotator seen to exist is
    remembered, which is sound because nothing deletes them.
    """
    import contextlib

    import labels.stores.label_store as store_module

    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "question": "q", "answer": "a"}) + "\n"
                            for i in range(5)))
    import_rows(store, path, "d")
    executed: list[str] = []
    open_cursor = type(store.db).cursor

    class Recording:
        def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
            self._cur = cur

        def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
            executed.append(sql)
            return self._cur.execute(sql, *args)

        def __getattr__(self, name: str) -> object:
            return getattr(self._cur, name)

    @contextlib.contextmanager
    def recording(db: object) -> object:
        with open_cursor(db) as cur:  # type: ignore[arg-type]
            yield Recording(cur)

    monkeypatch.setattr(type(store.db), "cursor", recording)
    # Not read before, a new annotator: both are checked, in one statement.
    store.add_label("d", "0", "ann", "pass")
    assert sum("FROM items" in sql for sql in executed) == 1
    assert any("INSERT INTO annotators" in sql for sql in executed)
    # Read by item(), as the Label page does before the key press: no items query.
    assert store.item("d", "1").item_id == "1"
    executed.clear()
    store.add_label("d", "1", "ann", "fail", new_only=True)
    assert not any("FROM items" in sql or "annotators" in sql for sql in executed)
    # A key press's save: the insert checks the criterion and an earlier label itself.
    # and goes with the BEGIN: 3 calls.
    assert [sql.split(" (")[0] for sql in executed] == [
        "BEGIN TRANSACTION; INSERT INTO labels", "INSERT INTO label_provenance", "COMMIT"]
    # What those checks refuse is named as before, and nothing of it is stored.
    with pytest.raises(AlreadyLabelledError):
        store.add_label("d", "1", "ann", "pass", new_only=True)
    with pytest.raises(NotFoundError, match="no criterion named 'nope'"):
        store.add_label("d", "1", "ann", "pass", criterion="nope")
    with pytest.raises(CalibrateError, match="verdict 'a' is not one of pass, fail, unsure"):
        store.add_label("d", "1", "ann", "a")
    assert [lab.verdict for lab in store.history("d", "1")] == ["fail"]
    # Labelled before (so seen), another verdict: nothing checked either.
    executed.clear()
    store.add_label("d", "0", "ann", "unsure")
    assert not any("FROM items" in sql for sql in executed)
    # What is not there is still refused, and nothing of it is remembered or stored.
    with pytest.raises(NotFoundError, match="has no item '9'"):
        store.add_label("d", "9", "bob", "pass")
    assert ("d", "9") not in store._known_items and "bob" not in store._known_annotators
    store.create_dataset("other")
    with pytest.raises(NotFoundError, match="has no item '1'"):
        store.add_label("other", "1", "ann", "pass")  # the same id in another dataset
    assert sorted((x.item_id, x.verdict) for x in store.current_labels("d").itertuples()) == [
        ("0", "unsure"), ("1", "fail")]
    assert store.annotators() == ["ann"]
    # A bounded memory: the oldest ids are forgotten first.
    monkeypatch.setattr(store_module, "KNOWN_ITEMS", 2)
    for i in ("2", "3", "4"):
        store.item("d", i)
    assert list(store._known_items) == [("d", "3"), ("d", "4")]


def test_a_statement_sent_with_the_begin_is_rolled_back_with_the_rest(tmp_path: Path) -> None:
    """``Database.transaction(first=...)``: its result is fetched; a failure stores nothing."""
    from labels.stores.db import Database

    with Database(tmp_path / "t.duckdb") as db:
        db.execute("CREATE TABLE t (a INTEGER PRIMARY KEY)")
        with db.transaction(first=("INSERT INTO t VALUES (?) RETURNING a", [1])) as cur:
            assert cur.fetchone() == (1,)
            cur.execute("INSERT INTO t VALUES (2)")
        with pytest.raises(duckdb.ConstraintException), \
                db.transaction(first=("INSERT INTO t VALUES (?), (?)", [3, 1])):
            pass
        with pytest.raises(RuntimeError), \
                db.transaction(first=("INSERT INTO t VALUES (?)", [4])) as cur:
            raise RuntimeError("after the first statement")
        assert db.fetchall("SELECT a FROM t ORDER BY a") == [(1,), (2,)]


def test_a_new_only_label_is_refused_when_the_annotator_labelled_the_row(
        store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"id": i, "question": f"q{i}", "answer": "a"}) + "\n"
                            for i in ("1", "2")))
    import_rows(store, path, "d")
    store.add_label("d", "1", "ann", "pass", new_only=True)
    store.add_label("d", "1", "bob", "fail", new_only=True)  # another annotator: stored
    with pytest.raises(AlreadyLabelledError):
        store.add_label("d", "1", "ann", "fail", new_only=True)
    store.add_label("d", "1", "ann", "fail")  # an edit: a new version
    assert [lab.verdict for lab in store.history("d", "1", annotator="ann")] == ["pass", "fail"]
    item, who = store.item_and_labellers("d", "1", "faithfulness")
    assert item.question == "q1" and who == {"ann", "bob"}
    assert store.item_and_labellers("d", "2", "faithfulness")[1] == frozenset()
    assert store.item_and_labellers("d", "1", "correctness")[1] == frozenset()
