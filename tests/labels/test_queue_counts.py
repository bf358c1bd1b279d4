"""The label tally of the Label page (labels.queue_counts) against LabelStore.queue_snapshot."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from labels import LabelStore
from labels.importing import import_rows
from labels.queue_counts import LabelTally


def _same(tally: LabelTally, store: LabelStore, annotator: str, criterion: str) -> None:
    total, mine, counts = tally.snapshot(store, "d", annotator, criterion)
    assert (total, set(mine), counts) == store.queue_snapshot("d", annotator, criterion)


def test_the_tally_reads_only_new_labels_and_always_equals_a_full_read(
    store: LabelStore, tmp_path: Path,
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(f'{{"id": "r{k}", "question": "q{k}", "answer": "a"}}\n'
                            for k in range(6)))
    import_rows(store, path, "d")
    tally = LabelTally()
    _same(tally, store, "ann", "faithfulness")  # no labels yet
    steps = [("r0", "ann", "faithfulness"), ("r0", "bob", "faithfulness"),
             ("r0", "ann", "faithfulness"),  # an edit: still two annotators on r0
             ("r1", "bob", "correctness"), ("r2", "bob", "faithfulness")]
    for item_id, annotator, criterion in steps:
        store.add_label("d", item_id, annotator, "pass", criterion=criterion)
        for who in ("ann", "bob", "carol"):
            _same(tally, store, who, "faithfulness")
            _same(tally, store, who, "correctness")
    assert tally.snapshot(store, "d", "ann", "faithfulness")[2] == {"r0": 2, "r2": 1}
    # A transaction that took a lower id commits after a higher one: the count of labels
    # disagrees with what was read since, and the tally reads everything again.
    store.db.execute(
        "INSERT INTO labels (label_id, dataset, item_id, annotator, criterion, verdict, "
        "labelled_at) VALUES (0, 'd', 'r3', 'carol', 'faithfulness', 'fail', ?)",
        [datetime.now(UTC)],
    )
    _same(tally, store, "carol", "faithfulness")
    assert set(tally.snapshot(store, "d", "carol", "faithfulness")[1]) == {"r3"}
    path.write_text("".join(f'{{"id": "r{k}", "question": "q{k}", "answer": "a"}}\n'
                            for k in range(6, 9)))
    import_rows(store, path, "d")  # more rows: the item count follows
    _same(tally, store, "ann", "faithfulness")
