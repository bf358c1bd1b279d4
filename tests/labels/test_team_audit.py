"""The audit trail merges the team's entries with the label store's label versions.

The labels are the label store's tables, the audit entries the team store's: each store reads
its own, newest first, and :meth:`TeamStore.audit` merges them. The merge must give what one
query over both tables gave (the reference below, the query before the stores owned their
tables): newest first by time, a label before an entry of the same moment, then by id.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from labels import LabelStore, NewLabel, import_rows
from labels.stores.team_store import TeamStore

REFERENCE = """
SELECT t, actor, action, subject, before_value, after_value FROM (
    SELECT recorded_at AS t, actor, action, subject, before_value, after_value,
           audit_id AS k, 0 AS src
    FROM audit
    UNION ALL
    SELECT labelled_at, annotator, 'label', dataset || '/' || item_id || '/' || criterion,
           lag(json_object('verdict', verdict, 'note', note)) OVER (
               PARTITION BY dataset, item_id, annotator, criterion
               ORDER BY labelled_at, label_id),
           json_object('verdict', verdict, 'note', note, 'origin', origin),
           label_id, 1
    FROM labels)
ORDER BY t DESC, src DESC, k DESC
LIMIT ?
"""


def _reference(store: LabelStore, limit: int | None) -> list[tuple[Any, ...]]:
    rows = store.db.fetchall(REFERENCE, [limit])
    return [(r[0], r[1], r[2], r[3], _parsed(r[4]), _parsed(r[5])) for r in reversed(rows)]


def _parsed(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def test_the_merged_trail_is_the_one_query_over_both_tables(store: LabelStore,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps({"id": f"r{i}", "question": "Q?", "answer": "A.",
                                        "sources": ["S."]}) + "\n" for i in range(3)),
                    encoding="utf-8")
    import_rows(store, path, "d")
    team = TeamStore(store.db, store)
    team.set_role("own@example.org", "owner", actor="cli:test")
    team.record("cli:test", "export", "d.csv")
    first = team.audit()[0].at
    # Labels at the very moments of the audit entries (ties), before, between and after them.
    at = [first, first, first - timedelta(seconds=1), first + timedelta(microseconds=1)]
    store.add_labels("d", [
        NewLabel("r0", "ann", "pass", labelled_at=at[0]),
        NewLabel("r1", "ann", "fail", note="n", labelled_at=at[1]),
        NewLabel("r0", "ann", "fail", labelled_at=at[3]),  # an edit: has a "before"
        NewLabel("r2", "bob", "unsure", labelled_at=at[2]),
    ])
    team.record("cli:test", "export", "d2.csv")
    for limit in (None, 1, 2, 3, 4, 5, 6, 7, 8, 50):
        trail = [(e.at, e.actor, e.action, e.subject, e.before, e.after)
                 for e in team.audit(limit=limit)]
        assert trail == _reference(store, limit), limit
    assert team.audit(limit=0) == []
