"""The escalated queue order: rows an acceptance rule abstained on, stored, served, provenance."""

from __future__ import annotations

from pathlib import Path

import pytest
from stores import release_file as _old_file

from labels import CalibrateError, NotFoundError, Provenance, import_labels, open_store
from labels.sampling import QueueSettings, plan_queue


def test_an_escalation_is_stored_per_rule_and_the_newest_is_served(tmp_path: Path) -> None:
    store = open_store(str(_old_file(tmp_path)))  # a file of the previous release: migrated
    assert store.escalation("old", "faithfulness") is None
    first = store.save_escalation("old", "faithfulness", "s-one", ["r4", "r1"], judge="cfg")
    assert first.item_ids == ("r4", "r1")
    got = store.escalation("old", "faithfulness")
    assert got is not None and got.item_ids == ("r1", "r4")  # file order
    assert (got.rule, got.judge) == ("s-one", "cfg")
    store.save_escalation("old", "faithfulness", "s-two", ["r5"])
    assert store.escalation("old", "faithfulness").rule == "s-two"  # type: ignore[union-attr]
    assert store.escalation("old", "faithfulness", rule="s-one").item_ids == ("r1", "r4")  # type: ignore[union-attr]
    assert store.escalation_stamp("old", "faithfulness")[0] == "s-two"  # type: ignore[index]
    with pytest.raises(NotFoundError, match="not rows of"):
        store.save_escalation("old", "faithfulness", "s-three", ["nope"])
    # The queue order and the selection are accepted by the migrated tables; the old settings
    # survive the rebuild.
    assert store.queue_settings("old", "faithfulness") == QueueSettings("stratified", 3, 2)
    store.save_queue_settings("old", "faithfulness", QueueSettings("escalated", 3, 2))
    assert store.queue_settings("old", "faithfulness").order == "escalated"
    label = store.add_label("old", "r5", "ann", "pass", provenance=Provenance(
        "escalated", stratum="s-two", judge="cfg"))
    row = store.provenance_frame("old").set_index("label_id").loc[label.label_id]
    assert (row["selection"], row["stratum"]) == ("escalated", "s-two")
    store.db.close()


def test_the_escalated_order_serves_only_the_escalated_rows() -> None:
    ids = [f"i{k}" for k in range(50)]
    esc = {"i3", "i7", "i40"}
    plan = plan_queue(ids, order="escalated", seed=2, escalated=esc, judge="cfg", rule="s-1")
    assert plan.order == "escalated" and sorted(plan.item_ids) == sorted(esc)
    assert plan.provenance("i7") == {"selection": "escalated", "judge": "cfg", "stratum": "s-1"}
    again = plan_queue(ids, order="escalated", seed=2, escalated=esc, judge="cfg", rule="s-1")
    assert again.item_ids == plan.item_ids  # seeded
    none = plan_queue(ids, order="escalated", seed=2)
    assert none.order == "random" and none.note and "escalated" in none.note


def test_labels_import_as_escalated_needs_the_rows_to_be_escalated(tmp_path: Path) -> None:
    store = open_store(str(_old_file(tmp_path)))
    f = tmp_path / "labels.csv"
    f.write_text("id,label\nr3,pass\n")
    with pytest.raises(CalibrateError, match="no rows of 'old' have been escalated"):
        import_labels(store, f, "old", annotator="exp", selection="escalated")
    store.save_escalation("old", "faithfulness", "s-9", ["r2", "r4"], judge="cfg")
    with pytest.raises(CalibrateError, match="not one of the rows escalated by rule s-9"):
        import_labels(store, f, "old", annotator="exp", selection="escalated")
    f.write_text("id,label\nr4,fail\n")
    import_labels(store, f, "old", annotator="exp", selection="escalated")
    frame = store.provenance_frame("old")
    row = frame[frame["annotator"] == "exp"].iloc[0]
    assert (row["selection"], row["stratum"], row["judge"]) == ("escalated", "s-9", "cfg")
    store.db.close()
