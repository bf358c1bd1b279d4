"""The dev/test split: stratified, seeded, made once, stored by a migration, grown later."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labels import LabelStore, NewLabel
from labels.errors import CalibrateError, ConflictError
from labels.splits import DerivedItem, assign_splits, stratum_of
from labels.stores.db import Database
from labels.stores.split_store import SplitStore


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": f"r{i:03d}", "question": f"Question {i}?", "answer": f"Answer {i}.",
             "sources": [f"Source {i}."], "segment": ("lookup", "multi", "refusal")[i % 3]}
            for i in range(n)]


def _label(store: LabelStore, dataset: str, ids: list[str], *, annotator: str = "dana",
           criterion: str = "faithfulness") -> None:
    store.add_labels(dataset, [
        NewLabel(item_id=i, annotator=annotator, criterion=criterion,
                 verdict="pass" if int(i[1:]) % 4 else "fail")
        for i in ids
    ])


def test_blank_database_gets_the_split_tables(tmp_path: Any) -> None:
    db = Database(tmp_path / "blank.duckdb")
    SplitStore(db, LabelStore(db))
    assert set(SplitStore.TABLES) <= db.table_names()
    with db.cursor() as cur:
        columns = [r[0] for r in cur.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'split_rows' "
            "ORDER BY ordinal_position").fetchall()]
        ledger = cur.execute("SELECT name FROM _migrations WHERE migration_set = 'splits'"
                             ).fetchall()
    assert columns == ["dataset", "criterion", "item_id", "split", "stratum", "assigned_at"]
    assert ledger == [("m001_splits",)]
    db.close()


def test_every_stratum_is_split_within_one_row_of_the_share(
    store: LabelStore, make_dataset: Any
) -> None:
    make_dataset("d", _rows(90))
    _label(store, "d", [f"r{i:03d}" for i in range(90)])
    split = SplitStore(store.db, store).ensure("d", "faithfulness", seed=3, test_share=0.4)
    items = {i.item_id: i for i in store.items("d")}
    per: dict[str, Counter[str]] = {}
    for item_id, side in split.splits.items():
        verdict = "pass" if int(item_id[1:]) % 4 else "fail"
        per.setdefault(stratum_of(verdict, items[item_id].segment), Counter())[side] += 1
    assert len(per) == 6  # 2 labels x 3 segments
    for counts in per.values():
        total = counts["dev"] + counts["test"]
        assert abs(counts["test"] - 0.4 * total) <= 1
    assert len(split.splits) == 90 and split.newly_assigned == 90


def test_the_split_is_seeded_and_stored_once(store: LabelStore, make_dataset: Any) -> None:
    make_dataset("d", _rows(40))
    _label(store, "d", [f"r{i:03d}" for i in range(40)])
    splits = SplitStore(store.db, store)
    first = splits.ensure("d", "faithfulness", seed=5)
    again = splits.ensure("d", "faithfulness")
    assert again.splits == first.splits and again.newly_assigned == 0 and again.seed == 5
    other = assign_splits([(i, "x") for i in sorted(first.splits)], {}, seed=6, test_share=0.5)
    same = assign_splits([(i, "x") for i in sorted(first.splits)], {}, seed=6, test_share=0.5)
    assert other == same and other != assign_splits(
        [(i, "x") for i in sorted(first.splits)], {}, seed=7, test_share=0.5)
    with pytest.raises(ConflictError, match="made once"):
        splits.ensure("d", "faithfulness", seed=6)
    with pytest.raises(ConflictError, match="made once"):
        splits.ensure("d", "faithfulness", test_share=0.3)
    # Another criterion of the same dataset has its own split.
    assert splits.ensure("d", "correctness").splits == {}


def test_new_labels_are_assigned_as_they_arrive_and_old_rows_never_move(
    store: LabelStore, make_dataset: Any
) -> None:
    make_dataset("d", _rows(60))
    _label(store, "d", [f"r{i:03d}" for i in range(30)])
    splits = SplitStore(store.db, store)
    before = splits.ensure("d", "faithfulness").splits
    # Relabel every old row the other way and add 30 new labels: old rows keep their side.
    store.add_labels("d", [NewLabel(item_id=i, annotator="dana", verdict="unsure")
                           for i in before])
    _label(store, "d", [f"r{i:03d}" for i in range(30, 60)], annotator="emeka")
    after = splits.ensure("d", "faithfulness")
    assert after.newly_assigned == 30
    assert {i: after.splits[i] for i in before} == before
    assert abs(Counter(after.splits.values())["test"] - 30) <= 6  # within one per stratum


def test_sessions_reading_the_split_at_once_agree(store: LabelStore, make_dataset: Any) -> None:
    make_dataset("d", _rows(120))
    results: list[dict[str, str]] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            results.append(dict(SplitStore(store.db, store).ensure("d", "faithfulness").splits))
        except BaseException as error:  # collected: the assertion below names it
            errors.append(error)

    for batch in range(3):  # new labels arrive, then 8 sessions read the split at once
        _label(store, "d", [f"r{i:03d}" for i in range(batch * 40, (batch + 1) * 40)])
        threads = [threading.Thread(target=read) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    final = SplitStore(store.db, store).ensure("d", "faithfulness").splits
    assert len(final) == 120
    assert all(r.items() <= final.items() for r in results)


def test_derived_datasets_are_never_split(store: LabelStore, make_dataset: Any) -> None:
    make_dataset("d", _rows(3))
    make_dataset("d.stress", _rows(3))
    splits = SplitStore(store.db, store)
    splits.link_derived([DerivedItem("d.stress", "r000", "d", "r000", "source_order")])
    assert splits.is_derived_dataset("d.stress") and not splits.is_derived_dataset("d")
    with pytest.raises(CalibrateError, match="never split"):
        splits.ensure("d.stress", "faithfulness")


@settings(max_examples=60, deadline=None)
@given(n_old=st.integers(0, 40), n_new=st.integers(0, 40), share=st.floats(0.1, 0.9),
       seed=st.integers(0, 10_000))
def test_assignment_stays_balanced_however_rows_arrive(
    n_old: int, n_new: int, share: float, seed: int
) -> None:
    rows = [(f"i{k}", "pass|-") for k in range(n_old + n_new)]
    first = assign_splits(rows[:n_old], {}, seed=seed, test_share=share)
    existing = {i: (s, "pass|-") for i, s in first.items()}
    later = assign_splits(rows, existing, seed=seed, test_share=share)
    assert set(later) == {i for i, _ in rows[n_old:]}
    total = Counter([*first.values(), *later.values()])
    assert abs(total["test"] - share * (n_old + n_new)) <= 1
