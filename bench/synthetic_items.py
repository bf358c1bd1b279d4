"""A dataset of synthetic RAG rows for the benches, written by DuckDB in one statement."""

from __future__ import annotations

import time
from pathlib import Path

from labels import open_store
from labels.stores.item_store import fill_item_hashes


def seed_items(db_path: Path, dataset: str, n_items: int) -> float:
    """Create ``dataset`` with ``n_items`` rows (three sources each); returns the seconds taken.

    One ``INSERT … SELECT`` straight into the items table: the benches measure what happens to
    a large dataset, not the importer (``bench/import_speed.py`` measures that). Sources are
    written as the importer writes them (canonical JSON, keys sorted).
    """
    store = open_store(str(db_path))
    try:
        store.create_dataset(dataset, source_file="bench (generated)")
        started = time.perf_counter()
        with store.db.transaction() as cur:
            cur.execute(
                """
                INSERT INTO items (dataset, item_id, position, question, answer, sources,
                                   reference, metadata, content_hash)
                SELECT ?, 'b' || i, i + 1,
                       'Bench question #' || i || ': does the answer follow from the sources?',
                       'The answer to question ' || i || ' says: ' || repeat('claim ', 40),
                       to_json([{'source_id': 'doc-' || k, 'text': 'Passage ' || i || '.' || k
                                 || ' ' || repeat('evidence ', 60)} FOR k IN range(3)]),
                       'Reference ' || i, '{}', md5('bench' || i)
                FROM range(?) t(i)
                """,
                [dataset, n_items],
            )
            fill_item_hashes(cur)  # the judge-cache hash the importer stores with each item
        return time.perf_counter() - started
    finally:
        store.db.close()
