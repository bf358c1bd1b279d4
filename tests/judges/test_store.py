"""The judges migration set and the call log."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import pytest

from judges.config import load_builtin
from judges.stores.judge_store import CallRecord, JudgeStore, item_hash
from labels import open_store
from labels.models import Item, Source

EXPECTED_CALL_COLUMNS = {
    "call_id", "run_id", "config_id", "item_id", "item_hash", "repeat", "ordering", "status",
    "request", "reply", "raw_response", "finish_reason", "verdict", "reply_label", "reasoning",
    "unscored_reason", "detail", "input_tokens", "output_tokens", "cost", "latency_ms", "error",
    "error_kind", "retries", "attempts", "created_at",
}


def test_blank_database_gets_the_judges_tables(db_path: Path) -> None:
    store = open_store(str(db_path))
    JudgeStore(store.db)
    with store.db.cursor() as cur:
        tables = {r[0] for r in cur.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        columns = {r[0] for r in cur.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'judge_calls'"
        ).fetchall()}
        applied = cur.execute(
            "SELECT name FROM _migrations WHERE migration_set = 'judges'").fetchall()
    assert set(JudgeStore.TABLES) <= tables
    assert columns == EXPECTED_CALL_COLUMNS
    assert applied == [("m001_core",), ("m002_bound_imports",)]
    store.db.close()
    # Reopening applies nothing twice.
    again = open_store(str(db_path))
    JudgeStore(again.db)
    again.db.close()


def test_item_hash_covers_what_a_judge_sees_only() -> None:
    base = Item(item_id="a", question="q", answer="x", sources=(Source(text="s"),))
    assert item_hash(base) == item_hash(base.model_copy(update={
        "item_id": "b", "metadata": {"k": 1}, "segment": "x"}))
    assert item_hash(base) != item_hash(base.model_copy(update={"answer": "y"}))
    assert item_hash(base) != item_hash(base.model_copy(update={
        "sources": (Source(text="s", source_id="doc-1"),)}))


def test_batches_are_all_or_nothing(db_path: Path) -> None:
    store = open_store(str(db_path))
    judges = JudgeStore(store.db)
    good = CallRecord("r", "c", "i", "h", 0, "original", "scored", verdict="pass")
    bad = CallRecord("r", "c", "i", "h", 1, "sideways", "scored", verdict="pass")
    with pytest.raises(duckdb.ConstraintException):  # 'sideways' breaks the CHECK
        judges.write_calls([good, bad])
    assert judges.calls_frame().empty
    many = [CallRecord("r", "c", "i", "h", n, "original", "scored", verdict="pass")
            for n in range(10)]
    with pytest.raises(duckdb.ConstraintException):  # the bulk path is one transaction too
        judges.write_calls([*many, bad])
    assert judges.calls_frame().empty
    judges.write_calls(many)
    assert len(judges.calls_frame()) == 10 and judges.calls_frame()["cost"].isna().all()
    judges.write_calls([good])
    assert ("h", 0, "original") in judges.completed_keys("c")
    store.db.close()


def test_failed_calls_are_not_cache_hits(db_path: Path) -> None:
    store = open_store(str(db_path))
    judges = JudgeStore(store.db)
    judges.write_calls([CallRecord("r", "c", "i", "h", 0, "original", "failed", error="x")])
    assert judges.completed_keys("c") == set()
    judges.write_calls([CallRecord("r", "c", "i", "h", 0, "original", "unscored",
                                   unscored_reason="empty_reply")])
    assert judges.completed_keys("c") == {("h", 0, "original")}
    assert judges.stored_outcomes("c") == {("h", 0, "original"): ("unscored", None)}
    store.db.close()


def test_a_run_of_a_dead_process_reads_interrupted(db_path: Path) -> None:
    store = open_store(str(db_path))
    judges = JudgeStore(store.db)
    config = load_builtin("refusal")
    judges.save_config(config)
    judges.create_run(config.config_id, "d", options={}, planned=3)
    assert judges.runs()[0].status == "running"
    with store.db.cursor() as cur:  # as a killed CLI process leaves it
        cur.execute("INSERT INTO judge_runs (run_id, config_id, dataset, origin, status, "
                    "options, pid) VALUES ('r0', ?, 'd', 'run', 'running', '{}', 2147483646)",
                    [config.config_id])
    assert {r.run_id: r.status for r in judges.runs()}["r0"] == "interrupted"
    assert judges.configs(name="refusal")[0].config == config
    store.db.close()


@pytest.mark.parametrize("event", ["starts", "finishes"])
def test_a_run_starting_or_finishing_while_runs_are_read_never_reads_interrupted(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, event: str,
) -> None:
    # The windows a page's poll can hit: a run of this process starts just before the rows are
    # read (active first, then its row), or finishes just after (status committed, then it
    # leaves the active set), while the reader takes its view of the active runs.
    store = open_store(str(db_path))
    judges = JudgeStore(store.db)
    config = load_builtin("refusal")
    judges.save_config(config)
    run_id = "r1"
    if event == "finishes":
        judges.create_run(config.config_id, "d", options={}, planned=3, run_id=run_id)
    read_rows = store.db.fetchall

    def read_while_the_run_moves(sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        if "FROM judge_runs" not in sql:
            return read_rows(sql, params)
        if event == "starts":
            judges.create_run(config.config_id, "d", options={}, planned=3, run_id=run_id)
            return read_rows(sql, params)
        rows = read_rows(sql, params)
        judges.finish_run(run_id, "completed", {})
        return rows

    monkeypatch.setattr(store.db, "fetchall", read_while_the_run_moves)
    assert judges.runs()[0].status == "running"  # as it was when read; never 'interrupted'
    monkeypatch.undo()
    assert judges.runs()[0].status == ("running" if event == "starts" else "completed")
    store.db.close()


def test_a_run_whose_final_update_fails_reads_interrupted(
    db_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = open_store(str(db_path))
    judges = JudgeStore(store.db)
    config = load_builtin("refusal")
    judges.save_config(config)
    run_id = judges.create_run(config.config_id, "d", options={}, planned=3)

    def fail(sql: str, params: Sequence[object] = ()) -> None:
        raise duckdb.IOException("disk full")

    monkeypatch.setattr(store.db, "execute", fail)
    with pytest.raises(duckdb.IOException):
        judges.finish_run(run_id, "completed", {})
    monkeypatch.undo()
    assert judges.runs()[0].status == "interrupted"
    store.db.close()
