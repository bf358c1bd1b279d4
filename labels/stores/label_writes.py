"""How :class:`labels.stores.label_store.LabelStore` writes new labels and their provenance rows."""

from __future__ import annotations

from typing import Any

NEW_LABEL_COLUMNS = ("label_id", "dataset", "item_id", "annotator", "criterion", "verdict", "note",
                     "failure_tags", "labelled_at", "seconds_spent", "origin")
PROVENANCE_COLUMNS = ("label_id", "selection", "stratum", "inclusion_probability",
                      "selection_share", "judge")
INLINE_ROWS = 64
"""Up to this many labels are inserted as statement parameters, more through a frame."""


def insert_labels(cur: Any, labels: list[list[Any]], provenance: list[list[Any]], *,
                  returning: str) -> list[Any]:
    """Insert rows of :data:`NEW_LABEL_COLUMNS` and :data:`PROVENANCE_COLUMNS`.

    Returns the stored label rows, with the columns ``returning`` names. A key press on the
    Label page stores one label: plain ``VALUES`` then, without building and registering pandas
    frames (tens of milliseconds); an import of thousands goes through one registered frame per
    table.
    """
    into_labels = f"INSERT INTO labels ({', '.join(NEW_LABEL_COLUMNS)}) "
    into_provenance = f"INSERT INTO label_provenance ({', '.join(PROVENANCE_COLUMNS)}) "
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
