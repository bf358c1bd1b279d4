"""The SQL that writes a checked file of rows into a dataset's items, in one transaction.

:func:`labels.importing.import_rows` reads, maps and validates a file into an Arrow table of
canonical columns; :func:`write_items` stores it: generated ids are computed in DuckDB,
duplicates within the file, look-alike ids and rows changed under a stored id are refused, and
new rows are appended after the dataset's last position. A refusal leaves the database as it was.
"""

from __future__ import annotations

import binascii
import contextlib
import functools
import hashlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

import duckdb

from labels.errors import ConflictError, ImportFileError
from labels.item_hashes import JUDGED_FIELDS, table_hashes
from labels.models import ID_SEPARATOR, Kind
from labels.validation import PLAIN_ID_PATTERN, lookalike_key, shown, shown_id

if TYPE_CHECKING:
    import pyarrow as pa

    from labels.stores.db import Database

OnChanged = Literal["error", "skip"]


class HasDatabase(Protocol):
    """What writing items needs of a store: its database (a :class:`~.label_store.LabelStore`).

    Named by what it is used for rather than by the store's class, so this module, which the
    schema's migrations use, does not import the store that applies them.
    """

    @property
    def db(self) -> Database:
        """The database the rows are written to."""
        ...


_SEP = f"chr({ord(ID_SEPARATOR)})"
# A row without an id gets one from its content (the same text always gives the same id).
_ID_SQL = (
    f"'h' || left(sha256(concat_ws({_SEP}, question, coalesce(answer, ''), "
    "coalesce(answer_a, ''), coalesce(answer_b, ''), sources, coalesce(reference, ''))), 16)"
)


def generated_id(
    question: str, answer: str | None, answer_a: str | None, answer_b: str | None,
    sources: str, reference: str | None,
) -> str:
    """The id :data:`_ID_SQL` gives a row without one (``sources``: its stored JSON).

    For a file of verdicts or scores about rows that had no id (a ragas results file): each
    row finds the item its own content was stored as.
    """
    text = ID_SEPARATOR.join(
        [question, answer or "", answer_a or "", answer_b or "", sources, reference or ""])
    return "h" + hashlib.sha256(text.encode()).hexdigest()[:16]


_CONTENT_FIELDS = ("question", "answer", "answer_a", "answer_b", "sources", "reference",
                   "segment", "document_id", "metadata")
# What a row's content hash covers (change detection under the same id): every field, in this
# order, joined by the id separator. :func:`hash_columns` takes its sha256 in Python.
_CONTENT_SQL = (
    f"concat_ws({_SEP}, question, coalesce(answer, ''), coalesce(answer_a, ''), "
    "coalesce(answer_b, ''), sources, coalesce(reference, ''), coalesce(segment, ''), "
    "coalesce(document_id, ''), metadata)"
)
_HASH_SQL = f"sha256({_CONTENT_SQL})"
"""The content hash in SQL: what :func:`hash_columns` computes (kept as the reference)."""


@dataclass(frozen=True)
class ItemsWritten:
    """What :func:`write_items` did.

    Attributes:
        added: Rows appended to the dataset.
        unchanged: Rows already stored with the same id and content.
        changed_ids: Ids whose content differs from the stored row (kept as stored).
        generated_ids: Rows without an id, given one from their content.
    """

    added: int
    unchanged: int
    changed_ids: tuple[str, ...]
    generated_ids: int


def write_items(
    store: HasDatabase,
    rows: pa.Table,
    dataset: str,
    *,
    kind: Kind,
    source_file: str,
    name: str,
    on_changed: OnChanged,
) -> ItemsWritten:
    """Store the rows of one file in ``dataset`` (created if new), all or nothing.

    Args:
        store: The label store to write to.
        rows: One row per item in the columns of :func:`labels.importing.normalise`
            (``id`` may be null; ``row`` is the file's row number, for messages; ``item_hash``
            and ``content_hash`` are :func:`hash_columns` of the rows, computed here if absent).
        dataset: A checked dataset name.
        kind: ``pointwise`` or ``pairwise``; must match the dataset's kind when it exists.
        source_file: Recorded as the dataset's ``source_file`` when it is created.
        name: How messages name the file.
        on_changed: ``"error"``: a row changed under a stored id refuses the whole file;
            ``"skip"``: such rows keep their stored content.

    Raises:
        ImportFileError: a dataset of the other kind, duplicate ids in the file, or an id that
            only looks like a stored one (naming the row).
        ConflictError: changed rows with ``on_changed="error"``.
    """
    try:
        return _write_items(store, rows, dataset, kind, source_file, name, on_changed,
                            optimistic=True)
    except _DuplicateKeys:  # rolled back: the careful path names the rows
        return _write_items(store, rows, dataset, kind, source_file, name, on_changed,
                            optimistic=False)


def with_hashes(rows: pa.Table) -> pa.Table:
    """``rows`` with their ``item_hash`` and ``content_hash`` columns (:func:`hash_columns`)."""
    if "item_hash" in rows.column_names:
        return rows
    item_hashes, content_hashes = hash_columns(rows)
    return rows.append_column("item_hash", item_hashes).append_column(
        "content_hash", content_hashes)


class _DuplicateKeys(Exception):
    """The optimistic insert into an empty dataset met a key twice (nothing was written)."""


def _write_items(
    store: HasDatabase, rows: pa.Table, dataset: str, kind: Kind, source_file: str, name: str,
    on_changed: OnChanged, *, optimistic: bool,
) -> ItemsWritten:
    with store.db.transaction() as cur:
        cur.execute(
            "INSERT INTO datasets (name, kind, source_file) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [dataset, kind, source_file],
        )
        stored_kind = cur.execute("SELECT kind FROM datasets WHERE name = ?", [dataset]).fetchall()
        if stored_kind and stored_kind[0][0] != kind:
            raise ImportFileError(
                f"dataset {dataset!r} holds {stored_kind[0][0]} rows; this file has {kind} rows",
                path=name,
            )
        if optimistic and _is_empty(cur, dataset):
            return _insert_into_empty(cur, dataset, rows)
        rows = with_hashes(rows)
        cur.register("incoming_raw", rows)
        try:
            # The temp table holds the keys only; the text is read once more from the Arrow
            # rows by the INSERT, rather than copied into the temp table first.
            cur.execute(
                "CREATE TEMP TABLE incoming AS SELECT row, coalesce(id, "
                f"{_ID_SQL}) AS item_id, id IS NULL AS generated, content_hash "
                "FROM incoming_raw"
            )
            try:
                return _write_incoming(cur, dataset, name, on_changed)
            finally:
                cur.execute("DROP TABLE IF EXISTS incoming")
        finally:
            # After a failed statement the transaction refuses even this until the rollback;
            # the view then goes with the cursor.
            with contextlib.suppress(duckdb.TransactionException):
                cur.unregister("incoming_raw")


def _is_empty(cur: duckdb.DuckDBPyConnection, dataset: str) -> bool:
    [(count,)] = cur.execute("SELECT count(*) FROM items WHERE dataset = ?", [dataset]).fetchall()
    return not count


def _insert_into_empty(
    cur: duckdb.DuckDBPyConnection, dataset: str, rows: pa.Table
) -> ItemsWritten:
    """All rows into a dataset with no items yet, a slice per statement, in one transaction.

    Nothing stored can have changed or look alike, so the only refusal left is a key met twice
    in the file, which the primary key catches: :class:`_DuplicateKeys` sends the file down the
    careful path, whose message names the rows. Rows without their hashes are hashed a slice
    at a time in a worker thread while DuckDB, which releases the GIL, inserts the slice
    before: the two run on two cores instead of one after the other.
    """
    slices = [rows.slice(start, _SLICE_ROWS) for start in range(0, rows.num_rows, _SLICE_ROWS)]
    if "item_hash" in rows.column_names:
        for part in slices:
            _insert_slice(cur, dataset, part)
    else:
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-hashes")
        try:
            hashed = [pool.submit(with_hashes, part) for part in slices]
            for future in hashed:
                _insert_slice(cur, dataset, future.result())
        finally:
            pool.shutdown(cancel_futures=True)
    generated = rows.column("id").null_count
    return ItemsWritten(added=rows.num_rows, unchanged=0, changed_ids=(), generated_ids=generated)


_SLICE_ROWS = 16_384
"""Rows per INSERT of :func:`_insert_into_empty` (the worker hashes the next slice meanwhile)."""


def _insert_slice(cur: duckdb.DuckDBPyConnection, dataset: str, part: pa.Table) -> None:
    cur.register("incoming_part", part)
    try:
        cur.execute(
            f"""
            INSERT INTO items (dataset, item_id, position, question, answer, answer_a, answer_b,
                               sources, reference, segment, document_id, metadata, content_hash,
                               item_hash)
            SELECT ?, coalesce(id, {_ID_SQL}), row, question, answer, answer_a, answer_b,
                   sources, reference, segment, document_id, metadata, content_hash, item_hash
            FROM incoming_part
            """,
            [dataset],
        ).fetchall()
    except duckdb.ConstraintException:
        raise _DuplicateKeys from None
    finally:
        with contextlib.suppress(duckdb.TransactionException):
            cur.unregister("incoming_part")


def _refuse_stored_lookalikes(cur: duckdb.DuckDBPyConnection, dataset: str, name: str) -> None:
    """Refuse a new id that only looks like one already in the dataset.

    It would be a second item no one can tell from the first; the message names the row and
    both ids.
    """
    # Two plain ids (printable ASCII, single spaces) look alike only if equal: compare only
    # when one side has an id that is not plain.
    odd = cur.execute(
        "SELECT (SELECT count(*) FROM incoming WHERE NOT generated AND NOT "
        "regexp_full_match(item_id, $p)) + (SELECT count(*) FROM items WHERE dataset = $d "
        "AND NOT regexp_full_match(item_id, $p))",
        {"p": PLAIN_ID_PATTERN, "d": dataset},
    ).fetchone()
    if not odd or not odd[0]:
        return
    incoming: dict[str, tuple[str, int]] = {}
    for item_id, row in cur.execute(
        "SELECT item_id, row FROM incoming WHERE NOT generated"
    ).fetchall():
        incoming.setdefault(lookalike_key(item_id), (item_id, row))
    stored = cur.execute("SELECT item_id FROM items WHERE dataset = ?", [dataset]).fetchall()
    for (stored_id,) in stored:
        match = incoming.get(lookalike_key(stored_id))
        if match is not None and match[0] != stored_id:
            raise ImportFileError(
                f"the id {shown_id(match[0])} looks the same as the stored item "
                f"{shown_id(stored_id)} of dataset {dataset!r} but is written differently "
                "(spaces, Unicode normalisation, an invisible character or a letter of "
                "another script)",
                path=name, row=match[1], column="id",
            )


def _write_incoming(
    cur: duckdb.DuckDBPyConnection, dataset: str, name: str, on_changed: OnChanged
) -> ItemsWritten:
    duplicate = cur.execute(
        "SELECT item_id, list(row ORDER BY row), bool_or(generated) FROM incoming "
        "GROUP BY item_id HAVING count(*) > 1 ORDER BY min(row) LIMIT 1"
    ).fetchone()
    if duplicate:
        item_id, rows, generated = duplicate
        what = (
            "are identical rows (same question, answer and sources)"
            if generated
            else f"share the id {shown(item_id, 24)}"
        )
        raise ImportFileError(
            f"rows {', '.join(str(r) for r in rows[:5])} {what}; ids must be unique in a file",
            path=name,
            row=rows[1],
            column=None if generated else "id",
        )
    _refuse_stored_lookalikes(cur, dataset, name)
    changed = cur.execute(
        "SELECT n.item_id, n.row FROM incoming n JOIN items i ON i.dataset = ? "
        "AND i.item_id = n.item_id WHERE i.content_hash <> n.content_hash ORDER BY n.row",
        [dataset],
    ).fetchall()
    if changed and on_changed == "error":
        listed = ", ".join(f"{shown(r[0], 24)} (row {r[1]})" for r in changed[:5])
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        raise ConflictError(
            f"{name}: {len(changed)} row(s) differ from the stored rows with the same id: "
            f"{listed}{more}. Nothing was imported. Give changed rows new ids, import them into "
            "a new dataset, or pass --on-changed skip to keep the stored rows."
        )
    unchanged_row = cur.execute(
        "SELECT count(*) FROM incoming n JOIN items i ON i.dataset = ? "
        "AND i.item_id = n.item_id AND i.content_hash = n.content_hash",
        [dataset],
    ).fetchone()
    start_row = cur.execute(
        "SELECT coalesce(max(position), 0) FROM items WHERE dataset = ?", [dataset]
    ).fetchone()
    added_row = cur.execute(
        """
        INSERT INTO items (dataset, item_id, position, question, answer, answer_a, answer_b,
                           sources, reference, segment, document_id, metadata, content_hash,
                           item_hash)
        SELECT ?, n.item_id, ? + n.row, r.question, r.answer, r.answer_a, r.answer_b, r.sources,
               r.reference, r.segment, r.document_id, r.metadata, n.content_hash, r.item_hash
        FROM incoming n JOIN incoming_raw r ON r.row = n.row
             ANTI JOIN (SELECT item_id FROM items WHERE dataset = ?) i ON i.item_id = n.item_id
        """,
        [dataset, start_row[0] if start_row else 0, dataset],
    ).fetchone()
    generated_row = cur.execute("SELECT count(*) FROM incoming WHERE generated").fetchone()
    return ItemsWritten(
        added=int(added_row[0]) if added_row else 0,
        unchanged=int(unchanged_row[0]) if unchanged_row else 0,
        changed_ids=tuple(r[0] for r in changed),
        generated_ids=int(generated_row[0]) if generated_row else 0,
    )


def fill_item_hashes(cur: duckdb.DuckDBPyConnection, *, page_rows: int = 20_000) -> int:
    """Compute and store ``item_hash`` for every item that lacks one; returns how many.

    Works a page at a time (one page of item text in memory), inside the caller's transaction
    on ``cur`` (a DuckDB cursor).
    """
    [(missing,)] = cur.execute("SELECT count(*) FROM items WHERE item_hash IS NULL").fetchall()
    if not missing:
        return 0  # a new or up-to-date file: opening it must not load Arrow (CLI start-up)
    import pyarrow as pa

    filled = 0
    while True:
        page = cur.sql(
            f"SELECT dataset, item_id, {', '.join(JUDGED_FIELDS)} FROM items "
            "WHERE item_hash IS NULL LIMIT $n", params={"n": page_rows},
        ).to_arrow_table()
        if page.num_rows == 0:
            return filled
        hashed = pa.table({
            "dataset": page.column("dataset"), "item_id": page.column("item_id"),
            "item_hash": pa.array(table_hashes(page), type=pa.string()),
        })
        cur.register("filled_hashes", hashed)
        try:
            cur.execute(
                "UPDATE items SET item_hash = f.item_hash FROM filled_hashes f "
                "WHERE items.dataset = f.dataset AND items.item_id = f.item_id"
            )
        finally:
            cur.unregister("filled_hashes")
        filled += page.num_rows


def hash_columns(rows: pa.Table) -> tuple[pa.Array[Any], pa.Array[Any]]:
    """``(item_hash, content_hash)`` of each row of :func:`labels.importing.normalise`'s table.

    Arrow writes, over whole columns, the canonical JSON of what a judge sees and the text the
    content hash covers (:data:`_CONTENT_SQL`); Python hashes both straight from their bytes:
    blake2b as :func:`labels.item_hashes.judged_hashes` and sha256 as DuckDB's ``sha256`` of
    that text would. Every row takes this path, multi-line text included: the JSON escapes
    are written by Arrow too (:func:`_json_string`).
    """
    texts = sorted(name for name in JUDGED_FIELDS if name != "sources")
    judged_texts, content_texts = _judged_and_content_texts(rows, texts)
    judged = _digests(judged_texts, functools.partial(hashlib.blake2b, digest_size=12))
    content = _digests(content_texts, hashlib.sha256)
    return _hash_strings(judged, "i"), _hash_strings(content, "")


_SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}
r"""The control characters ``json.dumps`` writes as a short escape; the rest as ``\u00xx``."""


def _json_string(column: pa.ChunkedArray[Any]) -> pa.ChunkedArray[Any]:
    r"""Each string's body as ``json.dumps(..., ensure_ascii=False)`` writes it, quotes excluded.

    Only what the column holds is replaced, one whole-column replacement each: backslashes
    first (the escapes written after them hold one), then quotes, then each control character
    (most columns hold none of these; multi-line text ``\n`` and perhaps ``\r`` or ``\t``).
    Nothing else is escaped with ``ensure_ascii=False`` (not DEL, not U+2028).
    """
    import pyarrow.compute as pc

    from labels.text_columns import json_escaped_bytes

    held = json_escaped_bytes(column)
    escaped = column
    if ord("\\") in held:
        escaped = pc.replace_substring(escaped, "\\", "\\\\")
    if ord('"') in held:
        escaped = pc.replace_substring(escaped, '"', '\\"')
    for byte in (b for b in held if b < 0x20):
        escaped = pc.replace_substring(escaped, chr(byte),
                                       _SHORT_ESCAPES.get(byte, f"\\u{byte:04x}"))
    return escaped


def _judged_and_content_texts(
    rows: pa.Table, texts: list[str]
) -> tuple[pa.ChunkedArray[Any], pa.ChunkedArray[Any]]:
    """The judged JSON and the content text of every row, by whole-column Arrow concatenation."""
    import pyarrow as pa
    import pyarrow.compute as pc

    join: Any = pc.binary_join_element_wise  # the stubs refuse plain strings as constants
    # Sorted keys, compact separators: {"answer":…,"answer_a":…,…,"sources":[…]}; the sources
    # are the importer's canonical JSON already.
    pieces: list[Any] = []
    for position, name in enumerate(texts):
        column = rows.column(name)
        key = ("{" if position == 0 else ",") + f'"{name}":'
        if column.null_count == len(column):  # answer_a/_b of a pointwise file, say
            pieces.append(key + "null")
        elif column.null_count == 0:  # the quotes join the constant pieces around the text
            pieces += [key + '"', _json_string(column), '"']
        else:
            quoted = join('"', _json_string(column), '"', "")
            pieces += [key, pc.if_else(pc.is_null(column), "null", quoted)]
    pieces += [',"sources":', rows.column("sources"), "}"]
    judged = join(*_merge_constants(pieces), "")
    # concat_ws of the coalesced fields: a null is an empty field.
    content = join(
        *(rows.column(name) for name in _CONTENT_FIELDS), pa.scalar(ID_SEPARATOR),
        null_handling="replace", null_replacement="",
    )
    return judged, content


def _merge_constants(pieces: list[Any]) -> list[Any]:
    """``pieces`` with each run of constant strings joined into one (one fewer copy per row)."""
    merged: list[Any] = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        else:
            merged.append(piece)
    return merged


def _digests(column: pa.ChunkedArray[Any], new: Callable[[memoryview], Any]) -> list[bytes]:
    """The digest (hash object ``new``) of each row's UTF-8 bytes, read from the Arrow buffers."""
    from labels.text_columns import utf8_bytes  # NumPy: not at CLI start-up (labels.stores.schema)

    out: list[bytes] = []
    for chunk in column.chunks:
        offsets, data = utf8_bytes(chunk)
        view = data.data
        out += [new(view[a:b]).digest() for a, b in itertools.pairwise(offsets.tolist())]
    return out


def _hash_strings(digests: list[bytes], prefix: str) -> pa.Array[Any]:
    """``prefix`` + the hex of each digest, as one Arrow string array built from bytes."""
    import numpy as np
    import pyarrow as pa

    n = len(digests)
    hex_chars = 2 * (len(digests[0]) if digests else 0)
    width = len(prefix) + hex_chars
    hexes = np.frombuffer(binascii.hexlify(b"".join(digests)), dtype=np.uint8)
    text = np.empty((n, width), dtype=np.uint8)
    text[:, :len(prefix)] = np.frombuffer(prefix.encode(), dtype=np.uint8)
    text[:, len(prefix):] = hexes.reshape(n, hex_chars)
    offsets = np.arange(0, width * (n + 1), width, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()),
                                       pa.py_buffer(text.tobytes()))
