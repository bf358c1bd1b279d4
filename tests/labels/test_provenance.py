"""Label provenance: the migration from the previous release's file, the store, the queue orders."""

from __future__ import annotations

from pathlib import Path

import pytest
from stores import release_file

from labels import CalibrateError, NewLabel, Provenance, import_labels, open_store
from labels.models import DEFAULT_CRITERION
from labels.sampling import QueueSettings, plan_queue


def _old_file(tmp_path: Path) -> Path:
    return release_file(tmp_path)


def test_a_file_from_the_previous_release_is_migrated_and_its_labels_marked_unknown(
    tmp_path: Path,
) -> None:
    store = open_store(str(_old_file(tmp_path)))
    with store.db.cursor() as cur:
        applied = cur.execute(
            "SELECT migration_set, name FROM _migrations ORDER BY migration_set, name"
        ).fetchall()
        every_label = cur.execute(
            "SELECT l.label_id, p.selection FROM labels l "
            "LEFT JOIN label_provenance p USING (label_id) ORDER BY l.label_id"
        ).fetchall()
    assert ("labels", "m002_label_provenance") in applied
    assert every_label == [(1, "unknown"), (2, "unknown"), (3, "unknown")]  # history included
    frame = store.provenance_frame("old")
    assert frame["item_id"].tolist() == ["r0", "r1"]
    assert frame["verdict"].tolist() == ["pass", "unsure"]
    assert set(frame["selection"]) == {"unknown"}
    # The old queue settings survive the rebuild of their table, and the new order is accepted.
    assert store.queue_settings("old", "faithfulness") == QueueSettings("stratified", 3, 2)
    store.save_queue_settings("old", "faithfulness", QueueSettings("active", 3, 2))
    assert store.queue_settings("old", "faithfulness").order == "active"
    why = Provenance("by_verdict", stratum="fail", judge="cfg1")
    new = store.add_label("old", "r2", "ann", "fail", provenance=why)
    row = store.provenance_frame("old").set_index("label_id").loc[new.label_id]
    assert (row["selection"], row["stratum"], row["judge"]) == ("by_verdict", "fail", "cfg1")
    store.db.close()
    again = open_store(str(tmp_path / "release.duckdb"))  # reopening applies nothing twice
    assert len(again.provenance_frame("old")) == 3
    again.db.close()


def test_provenance_is_validated_and_written_in_the_same_transaction(tmp_path: Path) -> None:
    store = open_store(str(_old_file(tmp_path)))
    with pytest.raises(CalibrateError, match="unknown selection"):
        Provenance("guessed")
    with pytest.raises(CalibrateError, match="inclusion_probability"):
        Provenance("active", inclusion_probability=0.0)
    with pytest.raises(CalibrateError):  # second label names a missing item: nothing is stored
        store.add_labels("old", [
            NewLabel("r3", "ann", "pass", provenance=Provenance("random")),
            NewLabel("nope", "ann", "pass", provenance=Provenance("random")),
        ])  # fmt: skip
    with store.db.cursor() as cur:
        assert cur.execute("SELECT count(*) FROM label_provenance").fetchone() == (3,)
    store.db.close()


def test_the_current_label_says_how_its_row_was_chosen(tmp_path: Path) -> None:
    store = open_store(str(_old_file(tmp_path)))
    # Labelled by the previous release, whose labels the migration marked unknown.
    assert store.current_provenance("old", "r1", "ann", DEFAULT_CRITERION) == Provenance()
    served = Provenance("active", stratum="fail", inclusion_probability=0.4,
                        selection_share=0.2, judge="cfg")
    store.add_labels("old", [NewLabel("r3", "ann", "pass", provenance=served),
                             NewLabel("r4", "ann", "pass")])
    assert store.current_provenance("old", "r3", "ann", DEFAULT_CRITERION) == served
    assert store.current_provenance("old", "r4", "ann", DEFAULT_CRITERION) == Provenance()
    assert store.current_provenance("old", "r3", "bob", DEFAULT_CRITERION) == Provenance()
    store.db.close()


def test_labels_import_records_the_selection(tmp_path: Path) -> None:
    store = open_store(str(_old_file(tmp_path)))
    f = tmp_path / "labels.csv"
    f.write_text("id,label\nr3,pass\nr4,fail\n")
    import_labels(store, f, "old", annotator="imp", selection="by_verdict")
    frame = store.provenance_frame("old")
    assert frame[frame["annotator"] == "imp"]["selection"].tolist() == ["by_verdict", "by_verdict"]
    with pytest.raises(CalibrateError, match="unknown selection"):
        import_labels(store, f, "old", annotator="imp2", selection="cherry-picked")
    store.db.close()


def test_queue_orders_say_how_each_row_was_chosen() -> None:
    ids = [f"i{k}" for k in range(400)]
    verdicts = {i: ("pass" if k % 4 else "fail") for k, i in enumerate(ids)}
    strat = plan_queue(ids, order="stratified", seed=1, verdicts=verdicts, judge="cfg")
    assert strat.provenance("i0") == {
        "selection": "by_verdict", "judge": "cfg", "stratum": "fail"
    }  # fmt: skip
    assert plan_queue(ids, order="random", seed=1).provenance("i0") == {
        "selection": "random", "judge": None
    }  # fmt: skip
    unsure = {i: (1.0 if k < 40 else 0.0) for k, i in enumerate(ids)}
    active = plan_queue(ids, order="active", seed=1, verdicts=verdicts, uncertainty=unsure)
    assert active.order == "active" and sorted(active.item_ids) == sorted(ids)
    first = active.item_ids[:100]
    # Uncertain rows weigh 1 and certain ones 0.15: among the first 100 served, the 40
    # uncertain rows (10 % of the data) are heavily over-represented, but certain rows appear.
    n_uncertain = sum(1 for i in first if unsure[i] == 1.0)
    assert 25 <= n_uncertain <= 40 and n_uncertain < 100
    p = active.provenance(first[0])
    assert p["selection"] == "active" and p["stratum"] == verdicts[first[0]]
    share = p["selection_share"]
    assert isinstance(share, float) and share == pytest.approx(
        (1.0 if unsure[first[0]] else 0.15) / (40 * 1.0 + 360 * 0.15)
    )
    assert p["inclusion_probability"] == pytest.approx(min(1.0, share))
    # The rank comes from a table built with the plan, equal to the row's queue position.
    assert "ranks" in vars(active)  # built by plan_queue, not by the first label saved
    assert all(active.ranks[i] == k for k, i in enumerate(active.item_ids, start=1))
    last = active.item_ids[-1]
    assert active.provenance(last)["inclusion_probability"] == pytest.approx(
        min(1.0, 400 * active.shares[last]))
    assert plan_queue(ids, order="active", seed=1).order == "random"  # no judge yet: fallback
