"""Per-item aggregates of a judge's stored calls, counted in DuckDB (the SQL of a report).

:func:`item_aggregates` is what :meth:`judges.stores.judge_store.JudgeStore.item_aggregates` runs:
the SQL
twin of :func:`judges.calibration.self_consistency`, so a report on 10 M calls never loads them.
It has two paths that give the same counts:

* **bit planes** (one ``GROUP BY item_hash`` over integer bit masks): when an item has at most
  one stored call per ``(repeat, order)`` and small repeat numbers (every call counts, nothing
  to pick), each call sets one bit — plane = its verdict's category, bit = its repeat — and
  every count, flip and agreeing pair of the item is a popcount of those masks;
* **exact** (the general rule): per ``(item, repeat, order)`` the call that counts (replies
  before failures, then the newest call id, as :meth:`JudgeStore.latest_calls`), then per item
  the counts and the first reasoning / unscored reason. It runs for the items the bit planes
  cannot count (retried keys, repeat numbers beyond a plane, a verdict word of another kind)
  and for the items whose texts are wanted.

``tests/judges/test_aggregation_sql.py`` compares both paths with the Python reference on random
call tables (retried keys, uneven repeats, missing orders, shared hashes).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pandas as pd
import pyarrow as pa

from labels.stores.db import Database

_BITS = 64


def _category(side: str, words: Sequence[str]) -> str:
    """SQL: the category index of the call ``side`` (a struct of the exact path).

    ``NULL`` when that order has no call, -1 for no verdict (``unscored`` or empty), else the
    0-based position of the lower-cased, trimmed word in ``words``; any other word is an error.
    The exact words are matched first (literals: a CASE on constants is several times faster
    than ``list_position`` over 5 M pairs); only other spellings are lower-cased and trimmed.
    """
    exact = " ".join(f"WHEN '{w}' THEN {i}" for i, w in enumerate(words))
    word = f"lower(trim(coalesce({side}.word, '')))"
    return (f"CASE WHEN {side} IS NULL THEN NULL ELSE CASE {side}.word {exact} "
            f"WHEN 'unscored' THEN -1 ELSE CASE WHEN {word} IN ('unscored', '') THEN -1 "
            f"WHEN list_position($words, {word}) IS NULL "
            f"THEN error('unknown verdict ' || {side}.word) "
            f"ELSE list_position($words, {word}) - 1 END END END")


def _is_word(side: str, words: Sequence[str]) -> str:
    """SQL: the call ``side`` gave one of ``words`` exactly (its reasoning counts)."""
    listed = ", ".join(f"'{w}'" for w in words)
    return f"coalesce({side}.word IN ({listed}), false)"


def _plane_sql(words: Sequence[str]) -> tuple[str, int]:
    """SQL of one call's bit (UBIGINT, 0 when the bit planes cannot hold it) and the plane width.

    Plane 0 holds the calls without a verdict, plane ``i + 1`` those that gave ``words[i]``;
    within a plane, bit ``r`` is repeat ``r``. A call of another repeat number or word sets no
    bit, so its item fails the "one bit per call" check and takes the exact path.
    """
    width = _BITS // (len(words) + 1)
    planes = " ".join(f"WHEN '{w}' THEN {i + 1}" for i, w in enumerate(words))
    plane = (f"CASE WHEN status <> 'scored' OR verdict IS NULL THEN 0 "
             f"ELSE CASE verdict {planes} ELSE -1 END END")
    return (f"CASE WHEN repeat >= 0 AND repeat < {width} AND ({plane}) >= 0 "
            f"THEN 1::UBIGINT << (({plane}) * {width} + repeat)::UBIGINT ELSE 0::UBIGINT END",
            width)


def _bit_plane_columns(words: Sequence[str], width: int) -> str:
    """SQL: the exact path's per-hash columns (texts ``NULL``) and ``counted``.

    From ``n`` (calls of the item) and the bit masks ``vo`` / ``vs`` of the two orders;
    ``counted`` is false unless every call set its own bit.
    """
    full = (1 << width) - 1

    def plane(mask: str, k: int) -> str:
        return f"(({mask} >> {k * width}::UBIGINT) & {full}::UBIGINT)"

    def union(mask: str, first: int) -> str:
        return "(" + " | ".join(plane(mask, k) for k in range(first, len(words) + 1)) + ")"

    def popcount(bits: str) -> str:
        return f"bit_count({bits})::BIGINT"

    scored_o, scored_s = union("vo", 1), union("vs", 1)
    agree = " + ".join(popcount(f"{plane('vo', k)} & {plane('vs', k)}")
                       for k in range(1, len(words) + 1))
    counts = [f"{popcount(plane('vo', i + 1))} + {popcount(plane('vs', i + 1))}"
              if i < len(words) else "0::BIGINT" for i in range(4)]
    masks = {side: " | ".join(f"(({plane(side, i + 1)} <> 0)::INT << {i})"
                              for i in range(len(words))) for side in ("vo", "vs")}
    return f"""
        n AS n_calls,
        {popcount(f"{scored_o} & {scored_s}")} AS n_pairs,
        {popcount(f"{scored_o} & {scored_s}")} - ({agree}) AS n_pairs_flipped,
        {popcount(scored_o)} AS scored_o, {popcount(scored_s)} AS scored_s,
        {masks["vo"]} AS mask_o, {masks["vs"]} AS mask_s,
        {counts[0]} AS c0, {counts[1]} AS c1, {counts[2]} AS c2, {counts[3]} AS c3,
        NULL::VARCHAR AS reasoning, NULL::VARCHAR AS unscored_reason,
        n = {popcount(union("vo", 0))} + {popcount(union("vs", 0))} AS counted"""


def item_aggregates(
    db: Database, config_id: str, items: pd.DataFrame | pa.Table, *, categories: Sequence[str],
    inconsistent: str, rule: str, texts_for: Collection[str] | None = None,
) -> pa.Table:
    """Per item: the calls of :meth:`JudgeStore.latest_calls` combined (see the module doc).

    Args:
        db: The database holding ``judge_calls``.
        config_id: The judge config whose calls count.
        items: The dataset's rows: ``item_id``, ``item_hash``, ``position``.
        categories: The verdict words in category order (``fail, pass, unsure`` or ``a, b,
            tie, unsure``); ``unscored`` and an empty verdict are no verdict, any other word
            is an error.
        inconsistent: The verdict of an item whose calls do not settle (``unsure``, ``tie``).
        rule: ``all_agree`` (one distinct scored verdict) or ``majority`` (a unique most
            frequent verdict).
        texts_for: The item ids whose ``reasoning`` and ``unscored_reason`` are wanted
            (``None``: every item); the others get ``None`` (their counts are the same).

    Returns:
        An Arrow table (1 M items convert to pandas in a fraction of the time ``.df()``
        takes), one row per judged item in ``items``' order: ``item_id``, ``verdict``,
        ``n_calls``, ``n_scored``,
        ``order_flipped``, ``order_comparable``, ``repeat_flipped``,
        ``repeat_comparable``, ``any_flipped``, ``n_pairs``, ``n_pairs_flipped``,
        ``reasoning`` (first non-null of a call whose verdict is one of ``categories``),
        ``unscored_reason`` (first non-null of the other calls).
    """
    if rule not in ("all_agree", "majority"):
        raise ValueError(f"rule must be 'all_agree' or 'majority', got {rule!r}")
    words = list(categories)
    if not 1 <= len(words) <= 4:
        raise ValueError("between 1 and 4 verdict categories")
    if not all(w.isascii() and w.isalpha() and w.islower() for w in words):
        raise ValueError(f"verdict categories are lower-case words, got {words}")
    text_ids = pa.table({"item_id": pa.array(sorted(set(texts_for or ())), pa.string())})
    bit, width = _plane_sql(words)
    # a count per category in use (pass/fail has three): each one is two aggregates
    counts = [f"count(*) FILTER (o = {i}) + count(*) FILTER (s = {i})" if i < len(words)
              else "0" for i in range(4)]
    top = "greatest(c0, c1, c2, c3)"
    argmax = "CASE WHEN c0 = top THEN 1 WHEN c1 = top THEN 2 WHEN c2 = top THEN 3 ELSE 4 END"
    consistent = ("bit_count(coalesce(mask_o, 0) | coalesce(mask_s, 0)) = 1"
                  if rule == "all_agree" else
                  "(c0 = top)::INT + (c1 = top)::INT + (c2 = top)::INT + (c3 = top)::INT = 1")
    per_hash_columns = ("item_hash, n_calls, n_pairs, n_pairs_flipped, scored_o, scored_s, "
                        "mask_o, mask_s, c0, c1, c2, c3, reasoning, unscored_reason")
    if texts_for is None:
        # Every item's texts are wanted, so every hash takes the exact path: the bit planes
        # (a second full GROUP BY of the config's calls) would count for nothing.
        with_planes, from_planes = "", ""
        exact_hashes = "SELECT item_hash FROM dataset_items"
    else:
        with_planes = f"""planes AS MATERIALIZED (
                -- grouped by the hash string itself: cheaper than joining 10 M calls to the
                -- items first; a hash of another dataset is dropped by the join below
                SELECT item_hash, {_bit_plane_columns(words, width)}
                FROM (SELECT item_hash, count(*) AS n,
                             bit_or(CASE WHEN ordering = 'swapped' THEN 0::UBIGINT ELSE b END)
                                 AS vo,
                             bit_or(CASE WHEN ordering = 'swapped' THEN b ELSE 0::UBIGINT END)
                                 AS vs
                      FROM (SELECT item_hash, ordering, {bit} AS b FROM judge_calls
                            WHERE config_id = $config)
                      GROUP BY item_hash)
            ), """
        exact_hashes = """
                SELECT item_hash FROM planes WHERE NOT counted
                UNION SELECT item_hash FROM dataset_items
                WHERE item_id IN (SELECT item_id FROM text_ids)"""
        from_planes = f"""
                UNION ALL
                SELECT {per_hash_columns} FROM planes
                WHERE counted AND item_hash NOT IN (SELECT item_hash FROM exact)"""
    with db.cursor() as cur:
        cur.register("dataset_items", items)
        cur.register("text_ids", text_ids)
        table: pa.Table = cur.sql(
            f"""
            WITH {with_planes}exact_hashes AS ({exact_hashes}
            ), calls AS (
                SELECT item_hash, repeat, ordering = 'swapped' AS swapped,
                       -- replies before failures, then the newest: one BIGINT compares
                       -- faster than a struct
                       (status <> 'failed')::BIGINT * 4611686018427387904 + call_id AS latest,
                       {{'word': CASE WHEN status = 'scored' THEN verdict ELSE 'unscored' END,
                        'reasoning': CASE WHEN status = 'scored' THEN reasoning END,
                        'reason': CASE WHEN status = 'unscored' THEN unscored_reason
                                       WHEN status = 'failed'
                                       THEN 'failed:' || coalesce(error_kind, 'error')
                                  END}} AS call
                FROM judge_calls
                WHERE config_id = $config AND item_hash IN (SELECT item_hash FROM exact_hashes)
            ), pairs AS (
                -- per (item, repeat) the call that counts in each order: the latest
                -- reply, or the latest failure where no reply exists
                SELECT item_hash, repeat,
                       arg_max(call, latest) FILTER (NOT swapped) AS o,
                       arg_max(call, latest) FILTER (swapped) AS s
                FROM calls GROUP BY item_hash, repeat
            ), coded AS (
                SELECT item_hash, repeat, (o IS NOT NULL)::INT + (s IS NOT NULL)::INT AS n,
                       {_category("o", words)} AS o,
                       {_category("s", words)} AS s,
                       coalesce(CASE WHEN {_is_word("o", words)} THEN o.reasoning END,
                                CASE WHEN {_is_word("s", words)} THEN s.reasoning END)
                           AS reasoning,
                       coalesce(CASE WHEN NOT {_is_word("o", words)} THEN o.reason END,
                                CASE WHEN NOT {_is_word("s", words)} THEN s.reason END)
                           AS unscored_reason
                FROM pairs
            ), exact AS (
                SELECT item_hash, sum(n)::BIGINT AS n_calls,
                       count(*) FILTER (o >= 0 AND s >= 0) AS n_pairs,
                       count(*) FILTER (o >= 0 AND s >= 0 AND o <> s) AS n_pairs_flipped,
                       count(*) FILTER (o >= 0) AS scored_o,
                       count(*) FILTER (s >= 0) AS scored_s,
                       coalesce(bit_or(1 << greatest(o, 0)) FILTER (o >= 0), 0) AS mask_o,
                       coalesce(bit_or(1 << greatest(s, 0)) FILTER (s >= 0), 0) AS mask_s,
                       {counts[0]} AS c0, {counts[1]} AS c1,
                       {counts[2]} AS c2, ({counts[3]})::BIGINT AS c3,
                       arg_min(reasoning, repeat) FILTER (reasoning IS NOT NULL)
                           AS reasoning,
                       arg_min(unscored_reason, repeat) FILTER (unscored_reason IS NOT NULL)
                           AS unscored_reason
                FROM coded GROUP BY item_hash
            ), per_hash AS (
                SELECT {per_hash_columns} FROM exact{from_planes}
            ), decided AS (
                -- items with the same content share their calls (the cache key is the hash)
                SELECT d.item_id, d.position,
                       $all_texts OR d.item_id IN (SELECT item_id FROM text_ids) AS texts,
                       h.*, {top} AS top, c0 + c1 + c2 + c3 AS n_scored
                FROM dataset_items d JOIN per_hash h ON h.item_hash = d.item_hash
            )
            SELECT item_id,
                   CASE WHEN n_scored = 0 THEN 'unscored'
                        WHEN {consistent} THEN $words[{argmax}]
                        ELSE $inconsistent END AS verdict,
                   n_calls, n_scored,
                   n_pairs_flipped > 0 AS order_flipped, n_pairs > 0 AS order_comparable,
                   bit_count(mask_o) >= 2 OR bit_count(mask_s) >= 2 AS repeat_flipped,
                   scored_o >= 2 OR scored_s >= 2 AS repeat_comparable,
                   bit_count(mask_o | mask_s) >= 2 AS any_flipped,
                   n_pairs, n_pairs_flipped,
                   CASE WHEN texts THEN reasoning END AS reasoning,
                   CASE WHEN texts THEN unscored_reason END AS unscored_reason
            FROM decided ORDER BY position
            """,
            params={"config": config_id, "words": words, "inconsistent": inconsistent,
                    "all_texts": texts_for is None},
        ).to_arrow_table()
        cur.unregister("dataset_items")
        cur.unregister("text_ids")
    return table


__all__ = ["item_aggregates"]
