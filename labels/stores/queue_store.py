"""The labelling queue's SQL: what a queue counts of the labels, and its own tables.

The counts a Label page needs (:func:`queue_snapshot`, :func:`labelled_in_order`, the rows
still waiting per (dataset, criterion): :func:`open_work`), and the tables of migration set
``queue``: what an annotator skipped (``queue_skips``), the order, seed and overlap the eval
owner set for a (dataset, criterion) (``queue_settings``), and the rows an acceptance rule
escalated to experts (``queue_escalations``); a function on those tables applies the ``queue``
migrations first. :class:`labels.stores.label_store.LabelStore` answers for all of these through the
functions here, as it does for "My labels" through :mod:`labels.stores.history_store`. Which row a
queue serves next is decided in :mod:`labels.sampling`, not here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from labels.models import DEFAULT_CRITERION, Criterion, Kind
from labels.sampling import QueueSettings, progress
from labels.stores.db import Database
from labels.stores.schema import QUEUE_MIGRATIONS


@dataclass(frozen=True)
class Escalation:
    """The rows an acceptance rule abstained on, for experts to label (the escalated order).

    Attributes:
        dataset: Dataset of the rows.
        criterion: Criterion the experts label.
        rule: The acceptance rule's id (recorded with every label drawn from it).
        judge: The judge config the rule abstained on.
        item_ids: The escalated rows.
        escalated_at: When the escalation was recorded (UTC).
    """

    dataset: str
    criterion: str
    rule: str
    judge: str | None
    item_ids: tuple[str, ...]
    escalated_at: datetime


def labelled_in_order(db: Database, dataset: str, annotator: str, criterion: str) -> list[str]:
    """Items ``annotator`` labelled for ``criterion``, in the order of their first label.

    Editing a label adds a newer version but does not move the item in this list, so an
    annotator stepping back through their work sees a stable sequence.
    """
    rows = db.fetchall(
        "SELECT item_id FROM labels WHERE dataset = ? AND annotator = ? AND criterion = ? "
        "GROUP BY item_id ORDER BY min(labelled_at), min(label_id)",
        [dataset, annotator, criterion],
    )
    return [r[0] for r in rows]


def queue_snapshot(
    db: Database, dataset: str, annotator: str, criterion: str
) -> tuple[int, set[str], dict[str, int]]:
    """Count what a labelling page needs, in one query.

    Returns:
        (items in the dataset, items ``annotator`` labelled, item id → number of
        annotators with a label for ``criterion``).
    """
    rows = db.fetchall(
        """
        SELECT NULL, (SELECT count(*) FROM items WHERE dataset = ?), false
        UNION ALL
        SELECT item_id, count(DISTINCT annotator), bool_or(annotator = ?)
        FROM labels WHERE dataset = ? AND criterion = ? GROUP BY item_id
        """,
        [dataset, annotator, dataset, criterion],
    )
    total = next(int(r[1]) for r in rows if r[0] is None)
    mine = {r[0] for r in rows if r[0] is not None and r[2]}
    counts = {r[0]: int(r[1]) for r in rows if r[0] is not None}
    return total, mine, counts


def open_work(
    db: Database, annotator: str, criteria: Sequence[Criterion], kinds: Mapping[str, Kind]
) -> list[tuple[str, str, int]]:
    """(dataset, criterion, rows still waiting for ``annotator``) wherever that is above 0.

    Every dataset of ``kinds`` (name → kind, in dataset order) against every criterion of its
    kind, the default criterion first; the count follows each (dataset, criterion)'s overlap
    setting, as the labelling queue does.
    """
    ordered = sorted(criteria, key=lambda c: c.name != DEFAULT_CRITERION)
    work = []
    for dataset, kind in kinds.items():
        for criterion in (c.name for c in ordered if c.kind == kind):
            total, mine, counts = queue_snapshot(db, dataset, annotator, criterion)
            overlap = queue_settings(db, dataset, criterion).overlap
            remaining = progress(total, mine=mine, counts=counts, overlap=overlap).remaining
            if remaining > 0:
                work.append((dataset, criterion, remaining))
    return work


def skip(db: Database, dataset: str, criterion: str, annotator: str, item_id: str) -> None:
    """Record that ``annotator`` skipped ``item_id``: it moves to the end of their queue.

    Skipping the same row again moves it to the end again.
    """
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    db.execute(
        """
        INSERT INTO queue_skips (dataset, criterion, annotator, item_id, skipped_at)
        VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (dataset, criterion, annotator, item_id)
        DO UPDATE SET skipped_at = excluded.skipped_at
        """,
        [dataset, criterion, annotator, item_id, datetime.now(UTC)],
    )


def skipped(db: Database, dataset: str, criterion: str, annotator: str) -> list[str]:
    """Items ``annotator`` skipped for (dataset, criterion), oldest skip first."""
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    rows = db.fetchall(
        "SELECT item_id FROM queue_skips WHERE dataset = ? AND criterion = ? "
        "AND annotator = ? ORDER BY skipped_at, item_id",
        [dataset, criterion, annotator],
    )
    return [r[0] for r in rows]


SETTINGS_SUBQUERY = ("(SELECT [queue_order, seed::VARCHAR, overlap::VARCHAR] FROM queue_settings "
                     "WHERE dataset = $1 AND criterion = $2)")
"""The settings of ($1, $2) as one value, for a statement that reads more (None: never set)."""


def settings_from_value(value: Sequence[str] | None) -> QueueSettings:
    """The :data:`SETTINGS_SUBQUERY` value as settings (the defaults when never set)."""
    if value is None:
        return QueueSettings()
    order, seed, overlap = value
    return QueueSettings(order=order, seed=int(seed), overlap=int(overlap))  # type: ignore[arg-type]


def queue_settings(db: Database, dataset: str, criterion: str) -> QueueSettings:
    """The eval owner's queue settings for (dataset, criterion); defaults when never set."""
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    row = db.fetchone(f"SELECT {SETTINGS_SUBQUERY}", [dataset, criterion])
    return settings_from_value(row[0] if row is not None else None)


def save_queue_settings(
    db: Database, dataset: str, criterion: str, settings: QueueSettings
) -> None:
    """Store the queue settings every annotator of (dataset, criterion) will get."""
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    db.execute(
        """
        INSERT INTO queue_settings (dataset, criterion, queue_order, seed, overlap)
        VALUES (?, ?, ?, ?, ?)
        ON CONFLICT (dataset, criterion) DO UPDATE SET
            queue_order = excluded.queue_order, seed = excluded.seed,
            overlap = excluded.overlap, updated_at = now()
        """,
        [dataset, criterion, settings.order, settings.seed, settings.overlap],
    )


def save_escalation(
    db: Database, dataset: str, criterion: str, rule: str, ids: Sequence[str], *,
    judge: str | None = None,
) -> Escalation:
    """Replace rule ``rule``'s escalated rows with ``ids``, in one transaction.

    The caller has checked that the dataset, the criterion and every id exist
    (:meth:`labels.stores.label_store.LabelStore.save_escalation`); other rules' rows are kept.
    """
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    now = datetime.now(UTC)
    with db.transaction() as cur:
        cur.execute("DELETE FROM queue_escalations WHERE dataset = ? AND criterion = ? "
                    "AND rule = ?", [dataset, criterion, rule])
        cur.execute(
            "INSERT INTO queue_escalations (dataset, criterion, rule, judge, item_id, "
            "escalated_at) SELECT ?, ?, ?, ?, unnest(?::VARCHAR[]), ?",
            [dataset, criterion, rule, judge, list(ids), now],
        )
    return Escalation(dataset, criterion, rule, judge, tuple(ids), now)


def escalation(db: Database, dataset: str, criterion: str, *,
               rule: str | None = None) -> Escalation | None:
    """The newest escalation of (dataset, criterion), or rule ``rule``'s; None without one.

    ``item_ids`` are in file order.
    """
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    where, params = ["e.dataset = ?", "e.criterion = ?"], [dataset, criterion]
    if rule is not None:
        where.append("e.rule = ?")
        params.append(rule)
    head = db.fetchall(
        f"SELECT e.rule, any_value(e.judge), max(e.escalated_at) FROM queue_escalations e "
        f"WHERE {' AND '.join(where)} GROUP BY e.rule ORDER BY 3 DESC, 1 LIMIT 1", params)
    if not head:
        return None
    name, judge, at = head[0]
    ids = db.fetchall(
        "SELECT e.item_id FROM queue_escalations e JOIN items i ON i.dataset = e.dataset "
        "AND i.item_id = e.item_id WHERE e.dataset = ? AND e.criterion = ? AND e.rule = ? "
        "ORDER BY i.position", [dataset, criterion, name])
    return Escalation(dataset, criterion, str(name), judge, tuple(r[0] for r in ids), at)


def escalation_stamp(db: Database, dataset: str, criterion: str) -> tuple[str, datetime] | None:
    """``(rule, escalated_at)`` of the newest escalation (one cheap query), or None."""
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    rows = db.fetchall(
        "SELECT rule, max(escalated_at) FROM queue_escalations WHERE dataset = ? AND "
        "criterion = ? GROUP BY rule ORDER BY 2 DESC, 1 LIMIT 1", [dataset, criterion])
    return (str(rows[0][0]), rows[0][1]) if rows else None


__all__ = ["Escalation", "escalation", "escalation_stamp", "labelled_in_order", "open_work",
           "queue_settings", "queue_snapshot", "save_escalation", "save_queue_settings", "skip",
           "skipped"]
