"""How :class:`labels.stores.label_store.LabelStore` writes new labels and their provenance rows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from labels.models import DEFAULT_CRITERION, PAIRWISE_VERDICTS, POINTWISE_VERDICTS
from labels.provenance import Provenance
from labels.stores.db import Database
from labels.validation import normalise_id

NEW_LABEL_COLUMNS = ("label_id", "dataset", "item_id", "annotator", "criterion", "verdict", "note",
                     "failure_tags", "labelled_at", "seconds_spent", "origin")
PROVENANCE_COLUMNS = ("label_id", "selection", "stratum", "inclusion_probability",
                      "selection_share", "judge")
INLINE_ROWS = 64
"""Up to this many labels are inserted as statement parameters, more through a frame."""


@dataclass(frozen=True)
class NewLabel:
    """A label to append (see :meth:`labels.stores.label_store.LabelStore.add_labels`)."""

    item_id: str
    annotator: str
    verdict: str
    criterion: str = DEFAULT_CRITERION
    note: str = ""
    failure_tags: tuple[str, ...] = ()
    seconds_spent: float | None = None
    labelled_at: datetime | None = None
    origin: str = "app"
    provenance: Provenance = field(default_factory=Provenance)


_INTO_LABELS = f"INSERT INTO labels ({', '.join(NEW_LABEL_COLUMNS)}) "
_INTO_PROVENANCE = f"INSERT INTO label_provenance ({', '.join(PROVENANCE_COLUMNS)}) "


def label_values(dataset: str, new: NewLabel, annotator: str, at: datetime) -> list[Any]:
    """``new`` as the values of :data:`NEW_LABEL_COLUMNS` after the id.

    ``annotator`` and ``at`` as the caller checked them (the name stripped, the time aware).
    """
    return [dataset, normalise_id(new.item_id), annotator, new.criterion, new.verdict, new.note,
            json.dumps(list(new.failure_tags)), at, new.seconds_spent, new.origin]


def provenance_values(label_id: int, provenance: Provenance) -> list[Any]:
    """A row of :data:`PROVENANCE_COLUMNS`: how the label ``label_id`` was chosen."""
    return [label_id, provenance.selection, provenance.stratum,
            provenance.inclusion_probability, provenance.selection_share, provenance.judge]


def insert_labels(cur: Any, labels: list[list[Any]], provenance: list[list[Any]], *,
                  returning: str) -> list[Any]:
    """Insert rows of :data:`NEW_LABEL_COLUMNS` and :data:`PROVENANCE_COLUMNS`.

    Returns the stored label rows, with the columns ``returning`` names. A few labels (an
    annotator's first on the Label page, a small import) go in as plain ``VALUES``, without
    building and registering pandas frames (tens of milliseconds); an import of thousands goes
    through one registered frame per table. (Most key presses take
    :func:`add_checked_label`.)
    """
    into_labels, into_provenance = _INTO_LABELS, _INTO_PROVENANCE
    returned = f" RETURNING {returning}"
    if len(labels) <= INLINE_ROWS:
        def values(rows: list[list[Any]]) -> str:
            return "VALUES " + ", ".join(["(" + ", ".join("?" * len(rows[0])) + ")"] * len(rows))

        out = cur.execute(into_labels + values(labels) + returned,
                          [v for r in labels for v in r]).fetchall()
        cur.execute(into_provenance + values(provenance), [v for r in provenance for v in r])
        return list(out)
    import pandas as pd  # lazily: `calibrate --help` and `datasets` load no pandas

    cur.register("new_labels", pd.DataFrame(labels, columns=NEW_LABEL_COLUMNS).astype(object))
    cur.register("new_provenance",
                 pd.DataFrame(provenance, columns=PROVENANCE_COLUMNS).astype(object))
    try:
        out = cur.execute(into_labels + "SELECT * FROM new_labels" + returned).fetchall()
        cur.execute(into_provenance + "SELECT * FROM new_provenance")
        return list(out)
    finally:
        cur.unregister("new_labels")
        cur.unregister("new_provenance")


def add_checked_label(db: Database, dataset: str, new: NewLabel, *, new_only: bool,
                      returning: str) -> Any | None:
    """Store one label and its provenance if the insert's own checks pass; else nothing.

    The checks, in the statement that inserts: a criterion of the label's name and of its
    verdict's kind exists and, with ``new_only``, the annotator has no label for the item and
    criterion yet. The Label page saves one label per key press; checking in a statement of
    its own cost one statement more (3 ms of the ~50 ms from key press to the next row at
    1,000,000 items), and the insert goes with the ``BEGIN`` (:meth:`Database.transaction`).
    The caller vouches for the item and the annotator. Returns the stored row (the columns
    ``returning`` names), or None when a check failed or the label is one only the general
    path takes (an unknown verdict, a naive time): the caller then finds out what is wrong,
    and says so.
    """
    kind = ("pointwise" if new.verdict in POINTWISE_VERDICTS
            else "pairwise" if new.verdict in PAIRWISE_VERDICTS else None)
    at = new.labelled_at or datetime.now(UTC)
    if kind is None or at.tzinfo is None:
        return None
    label = label_values(dataset, new, new.annotator.strip(), at)
    item_id, annotator, criterion = label[1:4]
    checks = "EXISTS (SELECT 1 FROM criteria WHERE name = ? AND kind = ?)"
    params = [*label, criterion, kind]
    if new_only:
        checks += (" AND NOT EXISTS (SELECT 1 FROM labels WHERE dataset = ? AND item_id = ? "
                   "AND annotator = ? AND criterion = ?)")
        params += [dataset, item_id, annotator, criterion]
    insert = (f"{_INTO_LABELS}SELECT nextval('label_ids'), {', '.join('?' * len(label))} "
              f"WHERE {checks} RETURNING {returning}")
    with db.transaction(first=(insert, params)) as cur:
        stored = cur.fetchone()
        if stored is not None:
            cur.execute(f"{_INTO_PROVENANCE}VALUES ({', '.join('?' * len(PROVENANCE_COLUMNS))})",
                        provenance_values(stored[0], new.provenance))
    return stored
