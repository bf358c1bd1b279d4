"""An annotator's own history (the Label page's "My labels"): only theirs, searchable, paged."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from labels import LabelStore, NewLabel, import_rows
from labels.models import SKIPPED

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _store(store: LabelStore, tmp_path: Path) -> LabelStore:
    rows = [{"id": f"r{i}", "question": f"Question {i} about refunds?" if i % 2 else
             f"Question {i} about shipping?", "answer": "A.", "sources": ["S."]}
            for i in range(6)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    import_rows(store, path, "d")
    at = [T0 + timedelta(minutes=m) for m in range(10)]
    store.add_labels("d", [
        NewLabel("r0", "ann", "pass", labelled_at=at[0]),
        NewLabel("r1", "ann", "fail", note="Drops the WEEKEND condition",
                 failure_tags=("missing condition",), labelled_at=at[1]),
        NewLabel("r2", "ann", "unsure", labelled_at=at[2]),
        NewLabel("r0", "ann", "fail", note="second look", labelled_at=at[3]),  # an edit
        # Another annotator's label and note on the same rows: never in ann's history.
        NewLabel("r1", "bob", "pass", note="bob-canary weekend", labelled_at=at[4]),
        NewLabel("r4", "bob", "pass", note="bob-canary", labelled_at=at[5]),
        NewLabel("r2", "ann", "pass", criterion="correctness", note="other criterion",
                 labelled_at=at[6]),
    ])
    store.skip("d", "faithfulness", "ann", "r3")
    store.skip("d", "faithfulness", "ann", "r2")  # skipped while revisiting: labelled, stays so
    store.skip("d", "faithfulness", "bob", "r5")
    return store


def test_only_the_annotators_own_current_labels_and_skips(store: LabelStore,
                                                          tmp_path: Path) -> None:
    _store(store, tmp_path)
    mine = store.own_history("d", "faithfulness", "ann")
    assert (mine.labelled, mine.skipped, mine.matching) == (3, 1, 4)
    by_id = {r.item_id: r for r in mine.rows}
    assert list(by_id) == ["r3", "r0", "r2", "r1"]  # newest first: the skip is the latest
    assert (by_id["r0"].verdict, by_id["r0"].note, by_id["r0"].versions) == (
        "fail", "second look", 2)
    assert by_id["r0"].at == T0 + timedelta(minutes=3)
    assert by_id["r1"].failure_tags == ("missing condition",)
    assert (by_id["r3"].status, by_id["r3"].verdict, by_id["r3"].versions) == (
        "skipped", None, 0)
    assert by_id["r1"].question == "Question 1 about refunds?"
    assert all("bob" not in r.note and r.note != "other criterion" for r in mine.rows)
    bob = store.own_history("d", "faithfulness", "bob")
    assert [r.item_id for r in bob.rows] == ["r5", "r4", "r1"]
    assert store.own_history("d", "faithfulness", "nobody").rows == ()


def test_search_and_verdict_filter(store: LabelStore, tmp_path: Path) -> None:
    _store(store, tmp_path)

    def ids(**options: object) -> list[str]:
        return [r.item_id for r in store.own_history("d", "faithfulness", "ann",
                                                     **options).rows]  # type: ignore[arg-type]

    assert ids(search="weekend") == ["r1"]  # the note, case-insensitively, not bob's
    assert ids(search="  MISSING cond ") == ["r1"]  # the tags
    assert ids(search="r2") == ["r2"]  # the id
    assert ids(search="shipping") == ["r0", "r2"]  # the question
    assert ids(search="bob-canary") == []
    assert ids(verdict="fail") == ["r0", "r1"]
    assert ids(verdict=SKIPPED) == ["r3"]
    assert ids(verdict="pass") == []  # r0 was pass, is fail now
    filtered = store.own_history("d", "faithfulness", "ann", search="nothing like it")
    assert (filtered.rows, filtered.matching, filtered.labelled, filtered.skipped) == (
        (), 0, 3, 1)


def test_pages(store: LabelStore, tmp_path: Path) -> None:
    _store(store, tmp_path)
    first = store.own_history("d", "faithfulness", "ann", limit=3)
    second = store.own_history("d", "faithfulness", "ann", limit=3, offset=3)
    assert [r.item_id for r in first.rows] == ["r3", "r0", "r2"]
    assert [r.item_id for r in second.rows] == ["r1"]
    assert first.matching == second.matching == 4
