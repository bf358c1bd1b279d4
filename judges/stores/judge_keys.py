"""The judge store's SQL over a table of call keys handed in (its ``judge_calls`` are its own).

Run planning and reports read a dataset's rows through the label store and hand their keys in
as an Arrow table, registered on the cursor: :func:`bound_keys` keys each row by its own
imported verdict where it has one, :func:`uncached` finds the planned calls without a stored
reply. :class:`judges.stores.judge_store.JudgeStore` answers for both through the functions
here.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from labels.stores.db import Database

from .judge_schema import _BOUND_KEY_SQL


def bound_keys(db: Database, config_id: str, keys: pa.Table) -> pa.Table:
    """``keys`` with each row's ``item_hash`` its own verdict's key where it has one.

    ``keys`` holds a dataset's rows (``item_id``, content ``item_hash``, any other columns, in
    order); a row with a verdict bound to it under ``config_id`` (imported:
    :func:`judges.stores.judge_store.bound_key`) is keyed by it, every other row keeps its
    content hash.
    """
    names = keys.column_names
    bound = _BOUND_KEY_SQL.format(id="k.item_id", hash="k.item_hash")
    others = ", ".join(f"k.{n}" for n in names if n != "item_hash")
    with db.cursor() as cur:
        cur.register("row_keys", keys.append_column(
            "_row", pa.array(range(keys.num_rows), pa.int64())))
        try:
            table: pa.Table = cur.sql(
                f"""
                SELECT {others + ', ' if others else ''}
                       coalesce(b.item_hash, k.item_hash) AS item_hash
                FROM row_keys k LEFT JOIN (
                    SELECT DISTINCT item_hash FROM judge_calls
                    WHERE config_id = $config AND starts_with(item_hash, 'v')) b
                  ON b.item_hash = {bound}
                ORDER BY k._row
                """, params={"config": config_id}).to_arrow_table()
        finally:
            cur.unregister("row_keys")
    return table.select(names)


def uncached(db: Database, config_id: str | None, keys: pa.Table) -> np.ndarray:
    """Indexes of the ``keys`` rows to call: no stored reply, first of equal keys.

    ``keys`` has columns ``idx`` (int64), ``item_hash``, ``repeat``, ``ordering``; a key with
    a stored reply (``scored`` or ``unscored``) for ``config_id`` is cached (``None``: no
    cache), and of two rows with the same content only the first is called (they share
    the reply).
    """
    with db.cursor() as cur:
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


__all__ = ["bound_keys", "uncached"]
