"""The label store's reads of labels for the stores beside it.

The labels (and the items they are about) are the label store's own tables; the split store and
the team store read them through :class:`labels.stores.label_store.LabelStore`, which answers with
the functions here: each current label's verdict with its item's segment (what
:meth:`labels.stores.split_store.SplitStore.ensure` assigns rows from) and every label version as
an entry of the audit trail (:meth:`labels.stores.team_store.TeamStore.audit`). And what the
Label page's queue reads on every key press, in one statement (:func:`labels_since`).
"""

from __future__ import annotations

from typing import NamedTuple

from labels.audit import AuditEntry
from labels.sampling import QueueSettings
from labels.stores import queue_store
from labels.stores.db import Database
from labels.stores.schema import QUEUE_MIGRATIONS


class LabelsSince(NamedTuple):
    """What :func:`labels_since` read, all from one snapshot of the file.

    Attributes:
        total: items in the dataset.
        labels: labels for the criterion.
        new: those with an id above the one asked for, as (id, item, annotator).
        settings: the queue settings of (dataset, criterion).
    """

    total: int
    labels: int
    new: list[tuple[int, str, str]]
    settings: QueueSettings


def labels_since(db: Database, dataset: str, criterion: str, after_id: int) -> LabelsSince:
    """The counts, new labels and queue settings of (dataset, criterion), in one statement.

    :class:`labels.queue_counts.LabelTally` reads only the labels it has not seen; the Label
    page reads this on every key press.
    """
    db.ensure_migrated("queue", QUEUE_MIGRATIONS)
    # The new labels in a subquery of their own: as a FILTER of the count's scan, DuckDB built
    # the list element of every label before filtering (2.3 ms a key press at 19,000 labels,
    # 1.6 ms this way).
    row = db.fetchone(
        "SELECT (SELECT count(*) FROM items WHERE dataset = $1), count(*), "
        "(SELECT coalesce(list([label_id::VARCHAR, item_id, annotator]), []) FROM labels "
        "WHERE label_id > $3 AND dataset = $1 AND criterion = $2), "
        f"{queue_store.SETTINGS_SUBQUERY} FROM labels WHERE dataset = $1 AND criterion = $2",
        [dataset, criterion, after_id],
    )
    assert row is not None  # an aggregate without GROUP BY always has its one row
    return LabelsSince(int(row[0]), int(row[1]),
                       [(int(i), item, who) for i, item, who in row[2]],
                       queue_store.settings_from_value(row[3]))


def labelled_rows(db: Database, dataset: str, criterion: str) -> list[tuple[str, str, str | None]]:
    """``(item_id, verdict, segment)`` of each current label for ``criterion``, by item id."""
    return db.fetchall(
        "SELECT l.item_id, l.verdict, i.segment FROM current_labels l "
        "JOIN items i ON i.dataset = l.dataset AND i.item_id = l.item_id "
        "WHERE l.dataset = ? AND l.criterion = ? ORDER BY l.item_id",
        [dataset, criterion],
    )


def label_events(db: Database, limit: int | None = None) -> list[AuditEntry]:
    """Every label version as an audit entry, newest first (of one moment: the newest id first).

    Only the newest ``limit`` are read. An entry's ``before`` is the annotator's previous
    verdict and note on the row (None for the first), ``after`` this label's verdict, note and
    origin.
    """
    rows = db.fetchall(
        """
        SELECT labelled_at, annotator, 'label', dataset || '/' || item_id || '/' || criterion,
               lag(json_object('verdict', verdict, 'note', note)) OVER (
                   PARTITION BY dataset, item_id, annotator, criterion
                   ORDER BY labelled_at, label_id),
               json_object('verdict', verdict, 'note', note, 'origin', origin)
        FROM labels
        ORDER BY labelled_at DESC, label_id DESC
        LIMIT ?
        """, [limit])
    return [AuditEntry.from_row(row) for row in rows]


__all__ = ["label_events", "labelled_rows"]
