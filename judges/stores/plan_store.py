"""PlanStore: the SQL of planning a judge run, over columns rather than one object per call.

A run of 250,000 items × swap × 2 repeats is 1,000,000 calls. Planning reads what a judge sees
of each item in Arrow batches (:meth:`PlanStore.content_batches`), keeps only ids, content
hashes and lengths, and matches the planned keys against the stored replies in one anti-join
(:meth:`PlanStore.uncached`) instead of a Python set of every stored key.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from judges.stores.judge_store import JudgeStore
from labels.item_hashes import JUDGED_FIELDS, table_hashes
from labels.stores.db import Database

JUDGED_COLUMNS = ("item_id", *JUDGED_FIELDS)
"""The item columns a judge sees (``sources`` as stored JSON)."""


def content_hashes(batch: pa.RecordBatch) -> list[str]:
    """:func:`.judge_store.item_hash` of each row of a :meth:`PlanStore.content_batches` batch.

    The digest stored with each item at import (``items.item_hash``); a row stored without one
    (written by another tool) is hashed from its text, without building an
    :class:`~labels.models.Item`.
    """
    stored = batch.column("item_hash")
    if stored.null_count == 0:
        return cast(list[str], stored.to_pylist())
    hashes = stored.to_pylist()
    missing = [i for i, h in enumerate(hashes) if h is None]
    computed = table_hashes(batch.take(pa.array(missing, type=pa.int64())))
    for index, value in zip(missing, computed, strict=True):
        hashes[index] = value
    return cast(list[str], hashes)


def text_lengths(batch: pa.RecordBatch) -> np.ndarray:
    """Characters of judged text per row of a :meth:`PlanStore.content_batches` batch."""
    total = np.zeros(batch.num_rows, dtype=np.int64)
    for name in JUDGED_COLUMNS[1:]:
        lengths = pc.utf8_length(cast(pa.StringArray, batch.column(name)))
        total += np.nan_to_num(lengths.to_numpy(zero_copy_only=False)).astype(np.int64)
    return total


class PlanStore:
    """Queries for planning; every method takes its own cursor.

    Args:
        db: the open label-store database (the ``judges`` migrations are applied).
    """

    def __init__(self, db: Database) -> None:
        """Use ``db`` (through a :class:`~.judge_store.JudgeStore`, which migrates it)."""
        self.db = JudgeStore(db).db

    def content_batches(
        self, dataset: str, *, item_ids: Sequence[str] | None = None,
        labelled_for: str | None = None, limit: int | None = None, batch_rows: int = 4_096,
    ) -> Iterator[pa.RecordBatch]:
        """What a judge sees of the chosen items, in file order, a batch at a time.

        Each batch has the :data:`JUDGED_COLUMNS` and the stored ``item_hash`` (``None`` for a
        row written without one; :func:`content_hashes` hashes those).

        Args:
            dataset: the dataset.
            item_ids: only these items.
            labelled_for: only items with a label for this criterion.
            limit: the first ``limit`` items after the other filters.
            batch_rows: rows per batch (memory is bounded by one batch of item text).
        """
        where = ["i.dataset = $dataset"]
        params: dict[str, Any] = {"dataset": dataset}
        if item_ids is not None:
            where.append("list_contains($ids, i.item_id)")
            params["ids"] = list(item_ids)
        if labelled_for is not None:
            where.append("i.item_id IN (SELECT item_id FROM labels WHERE dataset = $dataset "
                         "AND criterion = $criterion)")
            params["criterion"] = labelled_for
        # Pages of positions, each fetched whole: one page of text in memory at a time (a
        # streaming Arrow reader over the whole result held all of it), and each page a range
        # scan (zone maps on position), so the pages cost the table once in total.
        sql = (f"SELECT {', '.join('i.' + c for c in JUDGED_COLUMNS)}, i.item_hash FROM items i "
               f"WHERE {' AND '.join(where)} AND i.position BETWEEN $low AND $high "
               "ORDER BY i.position")
        with self.db.cursor() as cur:
            bounds = cur.execute("SELECT min(position), max(position) FROM items "
                                 "WHERE dataset = ?", [dataset]).fetchall()[0]
        if bounds[0] is None:
            return
        low, left = int(bounds[0]), limit
        while low <= bounds[1] and (left is None or left > 0):
            with self.db.cursor() as cur:
                page = cur.sql(sql, params={**params, "low": low, "high": low + batch_rows - 1}
                               ).to_arrow_table()
            low += batch_rows
            if left is not None:
                page = page.slice(0, left)
                left -= page.num_rows
            yield from page.to_batches()

    def stored_hashes(self, dataset: str) -> pa.Table:
        """``item_id`` and the stored ``item_hash`` of the dataset's items, in file order."""
        with self.db.cursor() as cur:
            table: pa.Table = cur.sql(
                "SELECT item_id, item_hash FROM items WHERE dataset = $dataset ORDER BY position",
                params={"dataset": dataset},
            ).to_arrow_table()
        return table

    @contextmanager
    def _with_ids(self, item_ids: Iterable[str]) -> Iterator[Any]:
        """A cursor on which ``ids`` is a table of ``item_ids`` (column ``item_id``)."""
        with self.db.cursor() as cur:
            cur.register("ids", pa.table({"item_id": pa.array(list(item_ids), type=pa.string())}))
            try:
                yield cur
            finally:
                cur.unregister("ids")

    def existing_ids(self, dataset: str, item_ids: Sequence[str]) -> set[str]:
        """Which of ``item_ids`` the dataset has."""
        with self._with_ids(item_ids) as cur:
            rows = cur.execute(
                "SELECT item_id FROM items SEMI JOIN ids USING (item_id) WHERE dataset = ?",
                [dataset],
            ).fetchall()
        return {r[0] for r in rows}

    def first_lacking(
        self, dataset: str, item_ids: Iterable[str], columns: Sequence[str]
    ) -> str | None:
        """The first of ``item_ids`` (in file order) with no value in one of ``columns``.

        ``columns`` are item fields a template needs; ``sources`` counts as missing when the
        item has no passage.
        """
        tests = [("sources = '[]'" if c == "sources" else f"{c} IS NULL") for c in columns
                 if c in JUDGED_COLUMNS]
        if not tests:
            return None
        with self._with_ids(item_ids) as cur:
            row = cur.execute(
                "SELECT i.item_id FROM items i SEMI JOIN ids USING (item_id) "
                f"WHERE i.dataset = ? AND ({' OR '.join(tests)}) ORDER BY i.position LIMIT 1",
                [dataset],
            ).fetchall()
        return str(row[0][0]) if row else None

    def uncached(self, config_id: str | None, keys: pa.Table) -> np.ndarray:
        """Indexes of the ``keys`` rows to call: no stored reply, first of equal keys.

        ``keys`` has columns ``idx`` (int64), ``item_hash``, ``repeat``, ``ordering``; a key with
        a stored reply (``scored`` or ``unscored``) for ``config_id`` is cached (``None``: no
        cache), and of two rows with the same content only the first is called (they share
        the reply).
        """
        with self.db.cursor() as cur:
            cur.register("planned_keys", keys)
            try:
                result = cur.sql(
                    """
                    SELECT min(p.idx) AS idx FROM planned_keys p
                    ANTI JOIN (SELECT DISTINCT item_hash, repeat, ordering FROM judge_calls
                               WHERE config_id = $config AND status <> 'failed') d
                         ON d.item_hash = p.item_hash AND d.repeat = p.repeat
                        AND d.ordering = p.ordering
                    GROUP BY p.item_hash, p.repeat, p.ordering ORDER BY idx
                    """,
                    params={"config": config_id or ""},
                ).to_arrow_table()
            finally:
                cur.unregister("planned_keys")
        return np.asarray(result.column("idx").to_numpy(), dtype=np.int64)


__all__ = ["JUDGED_COLUMNS", "PlanStore", "content_hashes"]
