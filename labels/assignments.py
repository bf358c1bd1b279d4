"""Assignments: which rows of a queue an owner gave to which annotator (team mode).

An owner deals rows out in batches: each annotator gets ``batch`` rows and each row goes to
``overlap`` annotators (every one of them for "everyone"), so the human-human agreement has
rows labelled by more than one person by design rather than by accident.

The rows dealt are the first free rows *of the queue's own order* (random, stratified, active,
…): the union of everybody's assignments is then a prefix of the queue, which is what the queue
would have served anyway, so each label keeps the provenance the queue gives it (its stratum,
its inclusion probability at its rank) and the report's correction stays valid. Assigning
reorders who labels a row, never which rows get labelled.

Pure functions; :class:`labels.stores.team_store.TeamStore` keeps the assignments.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from itertools import combinations

from labels.sampling import Progress


def deal_rows(
    candidates: Sequence[str], annotators: Sequence[str], *, batch: int, overlap: int,
) -> dict[str, list[str]]:
    """Deal the head of ``candidates`` so each annotator gets ``batch`` rows.

    Args:
        candidates: the free rows, in queue order.
        annotators: who to deal to (distinct).
        batch: rows per annotator.
        overlap: annotators per row (at most ``len(annotators)``).

    Returns:
        annotator → their rows in queue order. Fewer candidates than needed give everyone
        what there is.

        Each row goes to the least loaded annotators, preferring those who share the fewest
        rows so far, so every pair of annotators shares about as many rows as any other
        (pairwise kappas with comparable n); the last row may have fewer than ``overlap``
        annotators when ``batch * len(annotators)`` is not a multiple of it.

    Raises:
        ValueError: no annotators, repeated annotators, ``batch`` < 1 or ``overlap`` outside
            1..len(annotators).
    """
    n = len(annotators)
    if n == 0:
        raise ValueError("assign to at least one annotator")
    if len(set(annotators)) != n:
        raise ValueError("each annotator once")
    if batch < 1:
        raise ValueError(f"the batch must be at least 1 row, got {batch}")
    if not 1 <= overlap <= n:
        raise ValueError(f"overlap must be between 1 and the {n} annotator(s), got {overlap}")
    dealt: dict[str, list[str]] = {a: [] for a in annotators}
    shared: Counter[frozenset[str]] = Counter()
    slots, slot = batch * n, 0
    for row in candidates:
        if slot >= slots:
            break
        chosen: list[str] = []
        for _ in range(min(overlap, slots - slot)):
            # The least loaded first (everyone ends with ``batch``), then whoever shares the
            # fewest rows with the others on this row (pairs even out), then their position.
            free = [a for a in annotators if a not in chosen and len(dealt[a]) < batch]
            if not free:
                break
            best = min(free, key=lambda a: (len(dealt[a]),
                                            sum(shared[frozenset((a, c))] for c in chosen),
                                            annotators.index(a)))
            chosen.append(best)
        for a in chosen:
            dealt[a].append(row)
        shared.update(frozenset(p) for p in combinations(chosen, 2))
        slot += len(chosen)
    return dealt


def free_rows(
    queue: Sequence[str], *, labelled: Collection[str], assigned: Collection[str],
) -> list[str]:
    """The rows of ``queue`` (in its order) that nobody labelled and nobody is assigned."""
    taken = set(labelled) | set(assigned)
    return [row for row in queue if row not in taken]


def assignment_progress(rows: Sequence[str], *, mine: Collection[str],
                        skipped: Sequence[str] = ()) -> Progress:
    """Progress through an assignment: labelled / assigned, and skipped ones still open.

    The denominator is the assignment's size: it does not shrink while others label, since
    an assigned row waits for its annotator whatever the others do.
    """
    assigned = set(rows)
    done = sum(1 for row in assigned if row in mine)
    still_skipped = sum(1 for row in set(skipped) if row in assigned and row not in mine)
    return Progress(labelled=done, remaining=len(assigned) - done, skipped=still_skipped,
                    of="assigned")


def open_elsewhere(assignments: Mapping[str, Sequence[str]], annotator: str,
                   labelled_by: Mapping[str, Collection[str]]) -> frozenset[str]:
    """Rows assigned to someone other than ``annotator`` and not yet labelled by them.

    The shared queue keeps those out of everyone else's way: an assigned row is wanted from
    its annotator, and another person labelling it first would spend a label the design did
    not ask for.
    """
    held: set[str] = set()
    for who, rows in assignments.items():
        if who == annotator:
            continue
        done = labelled_by.get(who, ())
        held.update(row for row in rows if row not in done)
    return frozenset(held)


__all__ = ["assignment_progress", "deal_rows", "free_rows",
           "open_elsewhere"]
