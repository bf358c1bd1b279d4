"""The label tally of the Label page (labels.queue_counts) against LabelStore.queue_snapshot."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labels import LabelStore, queue_counts
from labels.importing import import_rows
from labels.queue_counts import LabelTally, QueueCounts
from labels.sampling import progress

IDS = [f"r{k}" for k in range(12)]


def _same(tally: LabelTally, store: LabelStore, annotator: str, criterion: str) -> None:
    got = tally.snapshot(store, "d", annotator, criterion)
    total, mine, counts = store.queue_snapshot("d", annotator, criterion)
    assert (got.total, set(got.mine), got.counts) == (total, mine, counts)
    for overlap in (1, 2, 3):
        for skipped in ([], ["r3", "r0"], ["r5"]):
            assert got.progress(overlap=overlap, skipped=skipped) == progress(
                total, mine=mine, counts=counts, overlap=overlap, skipped=skipped)


@pytest.mark.parametrize("fold_at", [None, 1])
def test_the_tally_reads_only_new_labels_and_always_equals_a_full_read(
    store: LabelStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fold_at: int | None,
) -> None:
    if fold_at is not None:  # the per-row maps fold their new layer in after every label
        monkeypatch.setattr(queue_counts, "_fold_at", lambda base: fold_at)
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
    assert tally.snapshot(store, "d", "ann", "faithfulness").counts == {"r0": 2, "r2": 1}
    # A transaction that took a lower id commits after a higher one: the count of labels
    # disagrees with what was read since, and the tally reads everything again.
    store.db.execute(
        "INSERT INTO labels (label_id, dataset, item_id, annotator, criterion, verdict, "
        "labelled_at) VALUES (0, 'd', 'r3', 'carol', 'faithfulness', 'fail', ?)",
        [datetime.now(UTC)],
    )
    _same(tally, store, "carol", "faithfulness")
    assert set(tally.snapshot(store, "d", "carol", "faithfulness").mine) == {"r3"}
    path.write_text("".join(f'{{"id": "r{k}", "question": "q{k}", "answer": "a"}}\n'
                            for k in range(6, 9)))
    import_rows(store, path, "d")  # more rows: the item count follows
    _same(tally, store, "ann", "faithfulness")


@given(
    labels=st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(["a", "b", "c", "d"]))),
    skipped=st.lists(st.sampled_from(IDS), unique=True),
    overlap=st.integers(1, 4),
    annotator=st.sampled_from(["a", "b", "e"]),
)
def test_progress_from_the_histogram_equals_progress_over_every_row(
    labels: list[tuple[str, str]], skipped: list[str], overlap: int, annotator: str,
) -> None:
    who: dict[str, set[str]] = {}
    for item_id, name in labels:
        who.setdefault(item_id, set()).add(name)
    counts = {i: len(names) for i, names in who.items()}
    mine = frozenset(i for i, names in who.items() if annotator in names)
    histogram: dict[int, int] = {}
    for n in counts.values():
        histogram[n] = histogram.get(n, 0) + 1
    got = QueueCounts(len(IDS), mine, counts, histogram)
    assert got.progress(overlap=overlap, skipped=skipped) == progress(
        len(IDS), mine=mine, counts=counts, overlap=overlap, skipped=skipped)


def test_a_layered_map_reads_as_its_top_over_its_base_and_folds() -> None:
    base = {"a": 1, "b": 1}
    layered = queue_counts._Layered(base).with_top({"b": 2, "c": 1})
    assert layered == {"a": 1, "b": 2, "c": 1} and len(layered) == 3
    assert (layered["b"], layered.get("c"), layered.get("z", 0), "a" in layered) == (2, 1, 0, True)
    assert sorted(layered) == ["a", "b", "c"] and base == {"a": 1, "b": 1}  # shared, unchanged
    assert layered.base is base  # a small top: the base is kept, not copied
    big = {f"r{k}": 1 for k in range(queue_counts._fold_at(2) + 1)}
    folded = layered.with_top(big)
    assert folded.top == {} and folded == {**base, **big} and base == {"a": 1, "b": 1}
