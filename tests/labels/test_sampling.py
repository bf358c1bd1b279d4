"""The labelling queue: orders, overlap, holds, progress (labels.sampling)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from labels import LabelStore
from labels.importing import import_rows
from labels.sampling import (
    NO_VERDICT,
    Holds,
    QueueSettings,
    next_item,
    plan_queue,
    progress,
    settled_prefix,
    shuffle_key,
)

IDS = [f"i{k}" for k in range(20)]


def test_random_order_is_seeded_and_stable_when_rows_are_added() -> None:
    first = plan_queue(IDS, order="random", seed=3)
    assert first.order == "random" and first.note is None
    assert first.item_ids == plan_queue(IDS, order="random", seed=3).item_ids
    assert first.item_ids != plan_queue(IDS, order="random", seed=4).item_ids
    assert sorted(first.item_ids) == sorted(IDS)
    more = plan_queue([*IDS, "new1", "new2"], order="random", seed=3).item_ids
    assert [i for i in more if i in IDS] == list(first.item_ids)
    # The order is that of the documented key (the queue sorts with numpy for speed).
    assert list(first.item_ids) == sorted(IDS, key=lambda i: shuffle_key(3, i))


def test_file_order_keeps_the_file_order() -> None:
    assert plan_queue(IDS, order="file").item_ids == tuple(IDS)


def test_stratified_order_alternates_the_judge_verdicts() -> None:
    verdicts = {i: ("fail" if k < 4 else "pass") for k, i in enumerate(IDS[:18])}
    plan = plan_queue(IDS, order="stratified", seed=1, verdicts=verdicts)
    assert plan.order == "stratified"
    strata = [verdicts.get(i, NO_VERDICT) for i in plan.item_ids]
    # Every prefix holds the classes as evenly as the data allow: the 4 fails and the 2
    # unjudged rows all come within the first 12.
    assert set(strata[:3]) == {"fail", "pass", NO_VERDICT}
    assert strata[:12].count("fail") == 4 and strata[:12].count(NO_VERDICT) == 2
    assert sorted(plan.item_ids) == sorted(IDS)


def test_flips_first_puts_flipped_rows_first() -> None:
    plan = plan_queue(IDS, order="flips_first", seed=0, flips={"i7", "i3"})
    assert set(plan.item_ids[:2]) == {"i3", "i7"} and plan.note is None
    no_flips = plan_queue(IDS, order="flips_first", seed=0, flips=set())
    assert no_flips.note is not None and "flipped" in no_flips.note


@pytest.mark.parametrize("order", ["stratified", "flips_first"])
def test_judge_orders_fall_back_to_random_without_judge_runs(order: str) -> None:
    plan = plan_queue(IDS, order=order, seed=5)  # type: ignore[arg-type]
    assert plan.order == "random"
    assert plan.note is not None and "random order" in plan.note
    assert plan.item_ids == plan_queue(IDS, order="random", seed=5).item_ids


def test_queue_settings_validate() -> None:
    with pytest.raises(ValueError, match="unknown queue order"):
        QueueSettings(order="alphabetical")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="overlap must be at least 1"):
        QueueSettings(overlap=0)


def test_next_item_skips_own_full_and_held_rows() -> None:
    plan = ["a", "b", "c", "d"]
    assert next_item(plan, mine={"a"}, counts={}) == "b"
    assert next_item(plan, mine=set(), counts={"a": 1, "b": 1}) == "c"
    assert next_item(plan, mine=set(), counts={"a": 1}, overlap=2) == "a"
    assert next_item(plan, mine=set(), counts={}, held={"a": 1, "b": 1}) == "c"
    assert next_item(plan, mine=set(), counts={"a": 1}, overlap=2, held={"a": 1}) == "b"


def test_next_item_offers_skipped_rows_last_and_never_held_rows() -> None:
    plan = ["a", "b", "c"]
    assert next_item(plan, mine=set(), counts={}, skipped=["a"]) == "b"
    assert next_item(plan, mine={"b", "c"}, counts={}, skipped=["a"]) == "a"
    assert next_item(plan, mine={"b"}, counts={}, skipped=["a"], held={"c": 1}) == "a"
    # Only a row someone else is looking at is left: nothing is free now...
    assert next_item(plan, mine={"a", "b"}, counts={}, held={"c": 1}) is None
    # ...but it still counts as remaining.
    assert progress(3, mine={"a", "b"}, counts={}).remaining == 1
    assert next_item(plan, mine={"a", "b", "c"}, counts={}) is None


@given(
    mine=st.sets(st.sampled_from(IDS)),
    counts=st.dictionaries(st.sampled_from(IDS), st.integers(0, 3)),
    held=st.dictionaries(st.sampled_from(IDS), st.integers(0, 2)),
    skipped=st.lists(st.sampled_from(IDS), unique=True),
    overlap=st.integers(1, 3),
)
def test_next_item_never_offers_a_done_or_held_row(
    mine: set[str], counts: dict[str, int], held: dict[str, int], skipped: list[str],
    overlap: int,
) -> None:
    chosen = next_item(IDS, mine=mine, counts=counts, overlap=overlap, held=held,
                       skipped=skipped)
    wanted = [i for i in IDS if i not in mine and counts.get(i, 0) < overlap]
    free = [i for i in wanted if counts.get(i, 0) + held.get(i, 0) < overlap]
    if chosen is None:
        assert free == []
    else:
        assert chosen in free
        unskipped = [i for i in free if i not in skipped]
        assert chosen == (unskipped[0] if unskipped else
                          next(i for i in skipped if i in free))
    done = progress(len(IDS), mine=mine, counts=counts, overlap=overlap, skipped=skipped)
    assert done.remaining == len(wanted)
    assert done.labelled == len(mine)


@given(
    before=st.tuples(st.sets(st.sampled_from(IDS)),
                     st.dictionaries(st.sampled_from(IDS), st.integers(0, 3)),
                     st.lists(st.sampled_from(IDS), unique=True)),
    added=st.tuples(st.sets(st.sampled_from(IDS)),
                    st.dictionaries(st.sampled_from(IDS), st.integers(0, 2)),
                    st.lists(st.sampled_from(IDS), unique=True)),
    held=st.dictionaries(st.sampled_from(IDS), st.integers(0, 2)),
    overlap=st.integers(1, 3),
)
def test_a_kept_settled_prefix_gives_the_row_a_search_from_the_top_gives(
    before: tuple[set[str], dict[str, int], list[str]],
    added: tuple[set[str], dict[str, int], list[str]],
    held: dict[str, int], overlap: int,
) -> None:
    # A tab keeps the prefix from an earlier key press; since then labels and skips were only
    # added (its own labels count for the other annotators too).
    mine, counts, skipped = before
    kept = settled_prefix(IDS, mine=mine, counts=counts, overlap=overlap, skipped=skipped)
    assert all(i in mine or i in skipped or counts.get(i, 0) >= overlap for i in IDS[:kept])
    mine = mine | added[0]
    counts = {i: counts.get(i, 0) + added[1].get(i, 0) + (i in added[0])
              for i in set(counts) | set(added[1]) | added[0]}
    skipped = skipped + [i for i in added[2] if i not in skipped]
    start = settled_prefix(IDS, mine=mine, counts=counts, overlap=overlap, skipped=skipped,
                           start=kept)
    assert start == settled_prefix(IDS, mine=mine, counts=counts, overlap=overlap,
                                   skipped=skipped)
    args = {"mine": mine, "counts": counts, "overlap": overlap, "held": held,
            "skipped": skipped}
    assert next_item(IDS, **args, start=start) == next_item(IDS, **args)


def test_progress_text() -> None:
    done = progress(120, mine={f"i{k}" for k in range(37)}, counts={}, skipped=["a", "b"])
    assert done.describe() == "37 / 120 labelled, 2 skipped"


def test_holds_expire_and_exclude_the_holder() -> None:
    now = [0.0]
    holds = Holds(ttl=10, clock=lambda: now[0])
    holds.hold("s", "alice", "a")
    holds.hold("s", "bob", "a")
    assert holds.held_by_others("s", "alice") == {"a": 1}
    assert holds.held_by_others("s", "carol") == {"a": 2}
    holds.hold("s", "alice", "b")  # one hold per annotator: moving on releases "a"
    assert holds.held_by_others("s", "carol") == {"a": 1, "b": 1}
    assert holds.held_by_others("other scope", "carol") == {}
    now[0] = 11
    assert holds.held_by_others("s", "carol") == {}
    holds.hold("s", "alice", "c")
    holds.release("s", "alice")
    assert holds.held_by_others("s", "bob") == {}
    holds.hold("s", "alice", "d")
    holds.hold("t", "alice", "e")
    holds.release_elsewhere("t", "alice")
    assert holds.held_by_others("s", "bob") == {}
    assert holds.held_by_others("t", "bob") == {"e": 1}


def test_claim_picks_and_holds_in_one_step() -> None:
    import threading

    holds = Holds()
    plan = [f"r{k}" for k in range(50)]
    got: dict[str, str | None] = {}
    start = threading.Barrier(8)

    def annotator(name: str) -> None:
        start.wait()
        got[name] = holds.claim("s", name, lambda held: next_item(plan, mine=set(), counts={},
                                                                   held=held))

    threads = [threading.Thread(target=annotator, args=(f"a{k}",)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got.values())) == 8  # eight annotators, eight different rows
    assert holds.claim("s", "a0", lambda held: None) is None
    assert len(holds.held_by_others("s", "nobody")) == 7


def test_shuffle_key_depends_on_seed_and_id() -> None:
    assert shuffle_key(1, "a") == shuffle_key(1, "a")
    assert shuffle_key(1, "a") != shuffle_key(2, "a") != shuffle_key(1, "b")


def test_queue_settings_round_trip(store: LabelStore) -> None:
    store.create_dataset("d")
    assert store.queue_settings("d", "faithfulness") == QueueSettings()
    store.save_queue_settings("d", "faithfulness", QueueSettings("stratified", 9, 2))
    store.save_queue_settings("d", "faithfulness", QueueSettings("file", 1, 3))
    assert store.queue_settings("d", "faithfulness") == QueueSettings("file", 1, 3)
    assert store.queue_settings("d", "correctness") == QueueSettings()


def test_labelled_in_order_is_stable_under_edits(store: LabelStore, tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(
        f'{{"id": "r{k}", "question": "q{k}", "answer": "a{k}"}}\n' for k in range(3)
    ))
    import_rows(store, path, "d")
    assert store.item_ids("d") == ["r0", "r1", "r2"]
    for item_id in ("r2", "r0", "r1"):
        store.add_label("d", item_id, "ann", "pass")
    store.add_label("d", "r2", "ann", "fail")  # an edit: a newer version of the first one
    assert store.labelled_in_order("d", "ann", "faithfulness") == ["r2", "r0", "r1"]
    assert store.dataset_kinds() == {"d": "pointwise"}
    store.add_label("d", "r0", "other", "fail")
    store.add_label("d", "r1", "other", "pass", criterion="correctness")
    total, mine, counts = store.queue_snapshot("d", "other", "faithfulness")
    assert total == 3 and mine == {"r0"} and counts == {"r0": 2, "r1": 1, "r2": 1}
    assert store.queue_snapshot("d", "nobody", "correctness") == (3, set(), {"r1": 1})
    assert store.queue_snapshot("empty", "x", "faithfulness") == (0, set(), {})
