"""Dealing rows to annotators: batch sizes, overlap, queue order, and the progress of one."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from labels.assignments import assignment_progress, deal_rows, free_rows, open_elsewhere

ROWS = [f"r{k}" for k in range(100)]


@pytest.mark.parametrize(("people", "batch", "overlap"), [(3, 10, 1), (3, 10, 2), (4, 9, 2),
                                                           (4, 6, 4), (5, 7, 3)])
def test_each_annotator_gets_the_batch_and_each_row_its_overlap(people: int, batch: int,
                                                                  overlap: int) -> None:
    names = [f"a{k}@example.org" for k in range(people)]
    dealt = deal_rows(ROWS, names, batch=batch, overlap=overlap)
    assert [len(dealt[n]) for n in names] == [batch] * people
    per_row = Counter(row for rows in dealt.values() for row in rows)
    used = [r for r in ROWS if r in per_row]
    # The head of the queue, in its order: rows dealt are a prefix of the candidates.
    assert used == ROWS[:len(used)]
    assert all(per_row[r] == overlap for r in used[:-1]) and 1 <= per_row[used[-1]] <= overlap
    for rows in dealt.values():  # no annotator gets a row twice; each list keeps queue order
        assert len(set(rows)) == len(rows) and rows == sorted(rows, key=ROWS.index)
    if overlap > 1:  # every pair of annotators shares rows, about evenly
        shared = [len(set(dealt[a]) & set(dealt[b])) for a, b in itertools.combinations(names, 2)]
        assert min(shared) > 0 and max(shared) - min(shared) <= batch // 2 + 1


def test_fewer_free_rows_than_asked_give_what_there_is() -> None:
    dealt = deal_rows(ROWS[:5], ["a@x.org", "b@x.org"], batch=10, overlap=2)
    assert dealt == {"a@x.org": ROWS[:5], "b@x.org": ROWS[:5]}


@pytest.mark.parametrize(("names", "batch", "overlap", "message"), [
    ([], 5, 1, "at least one annotator"), (["a", "a"], 5, 1, "each annotator once"),
    (["a"], 0, 1, "at least 1 row"), (["a", "b"], 5, 3, "between 1 and the 2"),
])
def test_bad_requests_say_what_is_wrong(names: list[str], batch: int, overlap: int,
                                        message: str) -> None:
    with pytest.raises(ValueError, match=message):
        deal_rows(ROWS, names, batch=batch, overlap=overlap)


def test_free_rows_leave_out_labelled_and_assigned_rows_and_keep_the_order() -> None:
    assert free_rows(["c", "a", "d", "b"], labelled={"a"}, assigned={"b"}) == ["c", "d"]


def test_progress_through_an_assignment_does_not_shrink_while_others_label() -> None:
    done = assignment_progress(["r1", "r2", "r3", "r4"], mine={"r1", "x"}, skipped=["r2", "r9"])
    assert (done.labelled, done.wanted, done.skipped) == (1, 4, 1)
    assert done.describe() == "1 / 4 assigned rows labelled, 1 skipped"


def test_rows_open_for_someone_else_are_kept_out_of_my_way() -> None:
    assignments = {"me": ("r1",), "you": ("r2", "r3"), "them": ("r4",)}
    held = open_elsewhere(assignments, "me", {"you": frozenset({"r2"})})
    assert held == {"r3", "r4"}
