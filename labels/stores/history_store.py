"""One annotator's own work on a (dataset, criterion): their labels and the rows they skipped.

The "My labels" list of the Label page reads this. Every query names the annotator: there is no
way to ask it for someone else's labels or for everyone's, so in team mode, where the annotator
is the signed-in address, the list is blind to other annotators by construction (the filter is
in the SQL, not in the page).
"""

from __future__ import annotations

import json

from labels.models import SKIPPED, OwnHistory, OwnRow, Status
from labels.stores.db import Database

# ``mine``: every label of the annotator, numbered newest first per row; ``own``: the current
# label of each labelled row, plus each skipped row without one. ``$4`` is the lower-cased
# search text ('' matches everything), ``$5`` the verdict filter (NULL: any; 'skipped').
_OWN_ROWS = """
WITH mine AS (
    SELECT item_id, verdict, failure_tags, note, labelled_at,
           count(*) OVER (PARTITION BY item_id) AS versions,
           row_number() OVER (PARTITION BY item_id ORDER BY labelled_at DESC, label_id DESC)
               AS newest
    FROM labels WHERE dataset = $1 AND criterion = $2 AND annotator = $3
), own AS (
    SELECT item_id, 'labelled' AS status, verdict, failure_tags::VARCHAR AS failure_tags, note,
           labelled_at AS happened, versions
    FROM mine WHERE newest = 1
    UNION ALL
    SELECT item_id, 'skipped', NULL, '[]', '', skipped_at, 0
    FROM queue_skips s
    WHERE s.dataset = $1 AND s.criterion = $2 AND s.annotator = $3
      AND NOT EXISTS (SELECT 1 FROM mine m WHERE m.item_id = s.item_id)
), found AS (
    SELECT o.*, i.question FROM own o JOIN items i ON i.dataset = $1 AND i.item_id = o.item_id
    WHERE ($5 IS NULL OR ($5 = 'skipped' AND o.status = 'skipped') OR o.verdict = $5)
      AND ($4 = '' OR contains(lower(o.note), $4) OR contains(lower(o.failure_tags), $4)
           OR contains(lower(o.item_id), $4) OR contains(lower(i.question), $4))
)
SELECT item_id, status, verdict, failure_tags, note, happened, versions, question,
       (SELECT count(*) FROM found) AS matching,
       (SELECT count(*) FROM own WHERE status = 'labelled') AS labelled,
       (SELECT count(*) FROM own WHERE status = 'skipped') AS skipped
FROM (SELECT 1) AS one LEFT JOIN (
    SELECT * FROM found ORDER BY happened DESC, item_id LIMIT $6 OFFSET $7
) AS page ON true
ORDER BY happened DESC, item_id
"""


def own_history(db: Database, dataset: str, criterion: str, annotator: str, *,
                search: str = "", verdict: str | None = None, limit: int = 10,
                offset: int = 0) -> OwnHistory:
    """``annotator``'s labelled and skipped rows of (dataset, criterion), newest first.

    Args:
        db: The database (its ``labels`` and ``queue`` migrations applied).
        dataset: Dataset of the rows.
        criterion: Criterion of the labels.
        annotator: Whose rows; only theirs are ever read.
        search: Text to find, case-insensitively, in the note, the failure tags, the row id or
            the question ('' or spaces: every row).
        verdict: Only rows whose current verdict is this, or :data:`SKIPPED` for the skipped
            rows; None for all.
        limit: Rows per page.
        offset: Rows to leave out before the page.
    """
    rows = db.fetchall(_OWN_ROWS, [dataset, criterion, annotator, search.strip().lower(),
                                   verdict, max(int(limit), 0), max(int(offset), 0)])
    head = rows[0]  # the aggregate row is there even when no row matches
    page = tuple(
        OwnRow(item_id=r[0], status=r[1], verdict=r[2], failure_tags=tuple(json.loads(r[3])),
               note=r[4], at=r[5], versions=int(r[6]), question=r[7])
        for r in rows if r[0] is not None
    )
    return OwnHistory(rows=page, matching=int(head[8]), labelled=int(head[9]),
                      skipped=int(head[10]))


__all__ = ["SKIPPED", "OwnHistory", "OwnRow", "Status", "own_history"]
