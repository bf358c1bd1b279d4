"""The label store's reads of labels for the stores beside it.

The labels (and the items they are about) are the label store's own tables; the split store and
the team store read them through :class:`labels.stores.label_store.LabelStore`, which answers with
the functions here: each current label's verdict with its item's segment (what
:meth:`labels.stores.split_store.SplitStore.ensure` assigns rows from) and every label version as
an entry of the audit trail (:meth:`labels.stores.team_store.TeamStore.audit`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

from labels.stores.db import Database


class LabelEvent(NamedTuple):
    """One label version as an audit entry: who gave which verdict to what, and the one before.

    Attributes:
        at: When the label was given.
        actor: The annotator.
        action: Always ``label``.
        subject: ``dataset/item/criterion``.
        before: The annotator's previous verdict and note on it (JSON text), or None.
        after: This label's verdict, note and origin (JSON text).
        label_id: The label's id (the order of labels given at the same moment).
    """

    at: datetime
    actor: str
    action: str
    subject: str
    before: Any
    after: Any
    label_id: int


def labelled_rows(db: Database, dataset: str, criterion: str) -> list[tuple[str, str, str | None]]:
    """``(item_id, verdict, segment)`` of each current label for ``criterion``, by item id."""
    return db.fetchall(
        "SELECT l.item_id, l.verdict, i.segment FROM current_labels l "
        "JOIN items i ON i.dataset = l.dataset AND i.item_id = l.item_id "
        "WHERE l.dataset = ? AND l.criterion = ? ORDER BY l.item_id",
        [dataset, criterion],
    )


def label_events(db: Database, limit: int | None = None) -> list[LabelEvent]:
    """Every label version as an audit entry, newest first (the newest ``limit`` only)."""
    rows = db.fetchall(
        """
        SELECT labelled_at, annotator, 'label', dataset || '/' || item_id || '/' || criterion,
               lag(json_object('verdict', verdict, 'note', note)) OVER (
                   PARTITION BY dataset, item_id, annotator, criterion
                   ORDER BY labelled_at, label_id),
               json_object('verdict', verdict, 'note', note, 'origin', origin),
               label_id
        FROM labels
        ORDER BY labelled_at DESC, label_id DESC
        LIMIT ?
        """, [limit])
    return [LabelEvent(*row) for row in rows]


__all__ = ["LabelEvent", "label_events", "labelled_rows"]
