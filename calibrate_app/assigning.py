"""Assigning rows to annotators (team mode): one workflow for ``calibrate assign`` and the app.

The rows are dealt in the queue's own order (see :mod:`labels.assignments` for why that keeps
every label's provenance), from the rows nobody labelled or was assigned yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from calibrate_app.judge_info import build_queue_plan
from labels import LabelStore
from labels.assignments import deal_rows, free_rows
from labels.stores.team_store import TeamStore


@dataclass(frozen=True)
class AssignedBatch:
    """What one call of :func:`assign_batch` dealt.

    Attributes:
        batch_id: The batch's id in the audit trail.
        rows: annotator → the rows dealt to them now.
        order: The queue order the rows were taken in.
        free: How many free rows there were before dealing.
    """

    batch_id: int
    rows: dict[str, list[str]]
    order: str
    free: int

    def describe(self) -> str:
        """One line: the batch, its order, each annotator's rows and how many overlap."""
        each = ", ".join(f"{who} {len(rows):,} rows" for who, rows in self.rows.items())
        distinct = len({row for rows in self.rows.values() for row in rows})
        dealt = sum(len(rows) for rows in self.rows.values())
        shared = f"; {dealt - distinct:,} assignment(s) overlap" if dealt > distinct else ""
        return f"Batch {self.batch_id} ({self.order} order): {each}{shared}."


def assign_batch(store: LabelStore, dataset: str, criterion: str, annotators: Sequence[str],
                 *, batch: int, overlap: int | None, actor: str) -> AssignedBatch:
    """Deal ``batch`` free rows of the queue to each of ``annotators`` and record them.

    Args:
        store: The label store of the database.
        dataset: The dataset.
        criterion: The criterion to label for.
        annotators: Addresses with the annotator or owner role.
        batch: Rows per annotator.
        overlap: Annotators per row; None: every one of ``annotators`` ("everyone").
        actor: Who assigns (audit trail).

    Raises:
        ValueError: a bad batch or overlap (see :func:`labels.assignments.deal_rows`).
        labels.errors.NotFoundError: no such dataset or criterion.
        labels.stores.team_store.TeamError: someone in ``annotators`` does not label.
        labels.errors.CalibrateError: no free rows are left.
    """
    from labels.errors import CalibrateError

    store.dataset(dataset)  # NotFoundError names the datasets there are
    store.criterion(criterion)
    team = TeamStore(store.db, store)
    people = team.check_labellers(annotators)
    overlap = len(people) if overlap is None else overlap
    deal_rows([], people, batch=batch, overlap=overlap)  # a bad request fails before any work
    settings = store.queue_settings(dataset, criterion)
    plan = build_queue_plan(store, dataset, settings.order, settings.seed, criterion)
    _, _, counts = store.queue_snapshot(dataset, "", criterion)
    assigned = {row for rows in team.assignments(dataset, criterion).values() for row in rows}
    candidates = free_rows(plan.item_ids, labelled=counts.keys(), assigned=assigned)
    if not candidates:
        raise CalibrateError(f"no row of {dataset!r} is free to assign for {criterion!r}: "
                             "every row is labelled or already assigned")
    dealt = deal_rows(candidates, people, batch=batch, overlap=overlap)
    batch_id = team.assign(dataset, criterion, dealt, actor=actor)
    return AssignedBatch(batch_id, dealt, plan.order, len(candidates))


__all__ = ["AssignedBatch", "assign_batch"]
