"""The judge facts the Label page reads (calibrate_app.judge_info); absent on a fresh database."""

from __future__ import annotations

from calibrate_app import judge_info
from labels import LabelStore


def test_judge_info_on_a_database_without_judge_tables(store: LabelStore) -> None:
    assert judge_info.judge_run_counts(store) == {}
    assert judge_info.latest_verdicts(store, "d") == {}
    assert judge_info.flips(store, "d") is None
    assert judge_info.fingerprint(store, "d") == "none"


def test_judge_info_reads_runs_verdicts_and_flips(store: LabelStore) -> None:
    with store.db.cursor() as cur:
        cur.execute("CREATE TABLE judge_runs (run_id VARCHAR, dataset VARCHAR)")
        cur.execute("CREATE TABLE judge_calls (call_id INTEGER, run_id VARCHAR, "
                    "item_id VARCHAR, verdict VARCHAR)")
        cur.execute("INSERT INTO judge_runs VALUES ('r1', 'd'), ('r2', 'd'), ('r3', 'other')")
        cur.execute("""INSERT INTO judge_calls VALUES
            (1, 'r1', 'a', 'pass'), (2, 'r1', 'b', 'fail'), (3, 'r1', 'c', NULL),
            (4, 'r2', 'a', 'fail'), (5, 'r2', 'b', 'fail'), (6, 'r3', 'a', 'pass')""")
    assert judge_info.judge_run_counts(store) == {"d": 2, "other": 1}
    assert judge_info.latest_verdicts(store, "d") == {"a": "fail", "b": "fail"}
    assert judge_info.flips(store, "d") == frozenset({"a"})
    before = judge_info.fingerprint(store, "d")
    with store.db.cursor() as cur:
        cur.execute("INSERT INTO judge_calls VALUES (7, 'r2', 'c', 'pass')")
    assert judge_info.fingerprint(store, "d") != before
