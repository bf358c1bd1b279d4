"""The item fields read out of a file's columns: text, ids, answers and source passages.

Each reader validates a whole column with row-precise errors (the file, the row and the
column, never the server's path): a fast path over the Arrow strings of a CSV, whole-column
checks of empty and oversized cells, answers of pairwise rows, ids generated where a file has
none, and the passages of ``sources`` from a list, a JSON or Python list in a cell, numbered
columns or objects with ``text`` and ``source_id``. :func:`labels.importing.import_rows`
decides which columns feed which field, and writes the rows.
"""


from __future__ import annotations

import ast
import json
from collections.abc import Mapping
from json.encoder import encode_basestring as _encode
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from labels.cells import is_missing as _is_missing
from labels.cells import text_cell as _text
from labels.cells import type_name as _type_name
from labels.reading import MAX_CELL_CHARS, Table
from labels.strict_json import JsonValueError, strict_json_loads
from labels.text_columns import plain_string_lists
from labels.validation import (
    PLAIN_ID_PATTERN,
    LookalikeIdError,
    LookalikeIds,
    all_plain,
)

__all__ = ["python_list"]


def _passage(table: Table, index: int, column: str, element: Any, k: int) -> dict[str, Any]:
    if isinstance(element, str):
        return {"text": element, "source_id": None}
    if isinstance(element, dict):
        text = element.get("text", element.get("content", element.get("page_content")))
        if not isinstance(text, str):
            raise table.error(
                f"passage {k + 1} is an object without a 'text' string",
                index, column,
            )
        sid = element.get("source_id", element.get("id", element.get("document_id")))
        return {"text": text, "source_id": None if sid is None else str(sid)}
    raise table.error(
        f"passage {k + 1} must be text or an object with 'text', got {_type_name(element)}",
        index, column,
    )


def _sources(
    table: Table, index: int, columns: list[str], record: Mapping[str, Any],
    plain_text_rows: list[int] | None = None,
) -> list[dict[str, Any]]:
    if len(columns) > 1:  # one passage per column
        out: list[dict[str, Any]] = []
        for column in columns:
            text = _text(table, index, column, record.get(column), required=False)
            if text:
                out.append({"text": text, "source_id": None})
        return out
    column = columns[0]
    value: Any = record.get(column)
    if hasattr(value, "tolist"):  # numpy arrays from Parquet
        value = value.tolist()
    if _is_missing(value):
        return []
    if isinstance(value, str):
        stripped = value.strip()
        if not stripped.startswith("["):
            return [{"text": value, "source_id": None}]
        try:
            value = strict_json_loads(stripped)
        except json.JSONDecodeError:
            literal = python_list(stripped)
            if literal is None:
                # "[1] See the manual": a citation, not a broken list. Keep the text, say so.
                if plain_text_rows is not None:
                    plain_text_rows.append(table.row_number(index))
                return [{"text": value, "source_id": None}]
            value = literal
        except JsonValueError as error:
            raise table.error(
                f"holds a JSON list that cannot be imported: {error}",
                index, column,
            ) from None
    if not isinstance(value, list):
        raise table.error(f"must be a list of passages, got {_type_name(value)}", index, column)
    out = [_passage(table, index, column, element, k) for k, element in enumerate(value)]
    total = sum(len(p["text"]) for p in out)
    if total > MAX_CELL_CHARS:
        raise table.error(
            f"holds {total:,} characters of sources; the limit is {MAX_CELL_CHARS:,} per cell",
            index, column,
        )
    return out


def python_list(text: str) -> list[Any] | None:
    """The list a Python list literal spells (``['a', "b's"]``), or ``None``.

    pandas writes a list cell to CSV as its ``repr``, so a ragas ``EvaluationDataset.to_csv``
    holds ``['…', '…']``, which is not JSON. The text is parsed by :func:`ast.literal_eval`,
    which builds literals only and never runs code; only a list of texts or objects counts
    (what a passages cell holds), so ``[1] See the manual`` stays text.
    """
    if not (text.startswith("[") and text.endswith("]")):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, list) and all(isinstance(v, (str, dict)) for v in value):
        return value
    return None


def _arrow_column(table: Table, column: str) -> pa.ChunkedArray[Any] | None:
    """The column as Arrow strings when the reader kept Arrow columns (CSV)."""
    return None if table.arrow is None else table.arrow.column(column)


def _first(mask: Any) -> int:
    return int(np.flatnonzero(np.asarray(mask, dtype=bool))[0])


def _checked_lengths(
    table: Table, column: str, values: pa.ChunkedArray[Any], *, required: bool
) -> np.ndarray:
    """The byte length of each cell of a column of strings, once it passed the text checks."""
    # Byte lengths come from the offsets, without reading the text: a cell is empty when it
    # has no byte, and holds at most as many characters as bytes, so characters are counted
    # only when some cell has more bytes than the limit allows characters.
    lengths: np.ndarray = pc.binary_length(values).to_numpy(zero_copy_only=False)
    if required and len(lengths) and lengths.min() == 0:
        _text(table, _first(lengths == 0), column, "", required=True)
    if len(lengths) and lengths.max() > MAX_CELL_CHARS:
        characters = pc.utf8_length(values).to_numpy(zero_copy_only=False)
        if characters.max() > MAX_CELL_CHARS:
            index = _first(characters > MAX_CELL_CHARS)
            _text(table, index, column, values[index].as_py(), required=required)
    return lengths


def _arrow_text(
    table: Table, column: str, values: pa.ChunkedArray[Any], *, required: bool
) -> pa.ChunkedArray[Any]:
    """:func:`_text_column` on a column of strings, by whole-column checks."""
    lengths = _checked_lengths(table, column, values, required=required)
    if not (lengths == 0).any():
        return values
    empty = pa.array(lengths == 0)
    return cast("pa.ChunkedArray[Any]", pc.if_else(empty, pa.scalar(None, pa.string()), values))


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _text_column(
    table: Table, column: str, *, required: bool
) -> list[str | None] | pa.ChunkedArray[Any]:
    """Validate one text column; a fast path for the common all-strings case (CSV)."""
    arrow = _arrow_column(table, column)
    if arrow is not None:
        return _arrow_text(table, column, arrow, required=required)
    return _list_text_column(table, column, required=required)


def _list_text_column(table: Table, column: str, *, required: bool) -> list[str | None]:
    values = table.data[column]
    if all(type(v) is str for v in values):
        if required and not all(values):
            index = values.index("")
            _text(table, index, column, "", required=True)
        if values and max(map(len, values)) > MAX_CELL_CHARS:
            index = next(i for i, v in enumerate(values) if len(v) > MAX_CELL_CHARS)
            _text(table, index, column, values[index], required=required)
        return [v or None for v in values]
    return [_text(table, i, column, v, required=required) for i, v in enumerate(values)]


def _rows_text(rows: list[int]) -> str:
    """``1, 2, 3, 4, 5 and 7 more``: the first five row numbers of a warning."""
    more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
    return ", ".join(map(str, rows[:5])) + more


def _answer_column(
    table: Table, column: str, warnings: list[str] | None
) -> list[str | None] | pa.ChunkedArray[Any]:
    """An answer column: an empty answer is kept (as ``""``) with a warning, not refused.

    Real data holds answers a model returned empty; they are exactly what a judge must fail, so
    they are imported and counted rather than dropped.
    """
    arrow = _arrow_column(table, column)
    kept: list[str | None] | pa.ChunkedArray[Any]
    if arrow is not None:
        lengths = _checked_lengths(table, column, arrow, required=False)
        kept = arrow
        empty = (np.flatnonzero(lengths == 0) + 1).tolist()
    else:
        values = _list_text_column(table, column, required=False)
        empty = [i + 1 for i, v in enumerate(values) if not v]
        kept = [v if v else "" for v in values]
    if empty and warnings is not None:
        warnings.append(
            f"{table.path}, column {column!r}: rows {_rows_text(empty)} have an empty answer; "
            "imported as empty (a judge should fail it)"
        )
    return kept


# How a stored passage without a source id starts (its text follows as a JSON string). Both
# writers below build on it: the per-row and whole-column paths must store the same bytes.
_PASSAGE = '{"source_id":null,"text":'


def _passages_json(texts: list[str]) -> str:
    # Same text as _canonical_json([{"source_id": None, "text": t}, ...]), without building dicts.
    return "[" + ",".join(_PASSAGE + _encode(t) + "}" for t in texts) + "]"


def _canonical_plain_lists(
    cells: pa.ChunkedArray[Any], plain: np.ndarray, compact: np.ndarray, careful: pa.Array[Any]
) -> pa.ChunkedArray[Any]:
    """The stored sources JSON of a column, by whole-column Arrow string functions.

    Rows with a ``careful`` value (written by the per-row path, :func:`_row_sources`) keep
    it; the ``plain`` others hold a cell :func:`labels.text_columns.plain_string_lists`
    cleared, ``compact`` saying which separator it uses, and become
    ``[{"source_id":null,"text":…},…]`` by replacing the brackets and separators: the strings
    hold no quote, backslash or control character. A file usually writes every list alike,
    so usually one replacement serves every row.
    """
    join: Any = pc.binary_join_element_wise  # the stubs refuse plain strings as constants
    mid = '"},' + _PASSAGE + '"'
    inner = pc.utf8_slice_codeunits(cells, 2, -2)  # between `["` and `"]`
    separators = compact[plain]
    if separators.all():
        passages = pc.replace_substring(inner, '","', mid)
    elif not separators.any():  # also a column of one-passage lists, which have none
        passages = pc.replace_substring(inner, '", "', mid)
    else:
        passages = pc.if_else(pa.chunked_array([compact]),
                              pc.replace_substring(inner, '","', mid),
                              pc.replace_substring(inner, '", "', mid))
    written = join("[" + _PASSAGE + '"', passages, '"}]', "")
    if pc.any(pc.equal(pc.binary_length(cells), pa.scalar(2))).as_py():  # `[]`: no passage
        written = pc.if_else(pc.equal(cells, pa.scalar("[]")), "[]", written)
    if careful.null_count == len(careful):
        return cast("pa.ChunkedArray[Any]", written)
    sources: pa.ChunkedArray[Any] = pc.if_else(pc.is_null(careful), written, careful)
    return sources


def _id_column(table: Table, column: str) -> list[str | None] | pa.ChunkedArray[Any]:
    """The id column, normalised (:func:`labels.validation.normalise_id`); look-alikes refused."""
    arrow = _arrow_column(table, column)
    if arrow is not None and pc.all(pc.match_substring_regex(
        arrow, f"^{PLAIN_ID_PATTERN}$"
    )).as_py():
        return _arrow_text(table, column, arrow, required=False)  # no two can look alike
    values = _list_text_column(table, column, required=False)
    present = [v for v in values if v is not None]
    if len(present) == len(values) and all_plain(present):
        return values  # already normalised, and no two can look alike
    ids = LookalikeIds()
    out: list[str | None] = []
    for index, value in enumerate(values):
        if value is None or not value.strip():
            out.append(None)  # no id: a content id is generated
            continue
        try:
            out.append(ids.add(value, table.row_number(index)))
        except LookalikeIdError as error:
            raise table.error(str(error), index, column) from None
    return out


def _sources_column(
    table: Table, columns: list[str] | None, sid_col: str | None,
    plain_text_rows: list[int] | None = None,
) -> list[str] | pa.ChunkedArray[Any]:
    """Canonical JSON of each row's passages.

    From Arrow columns, the cells that are plain JSON lists of strings (what ``json.dumps``
    writes) are rewritten by Arrow string functions over the whole column; every other cell
    takes the careful per-row path, which writes the same text or names the row and column of
    the problem.
    """
    if columns is None:
        return ["[]"] * table.n_rows
    simple = len(columns) == 1 and sid_col is None
    arrow = _arrow_column(table, columns[0]) if simple else None
    if arrow is None:
        values = table.data[columns[0]]
        return [_row_sources(table, index, columns, sid_col, values[index], plain_text_rows)
                for index in range(table.n_rows)]
    plain, compact = plain_string_lists(arrow, MAX_CELL_CHARS)
    careful: list[str | None] = [None] * table.n_rows
    odd = np.flatnonzero(~plain)
    # One take of the odd cells, not a ChunkedArray lookup + as_py per row (nor the whole
    # column as a Python list when only a few cells are odd).
    for index, value in zip(odd.tolist(), arrow.take(odd).to_pylist(), strict=True):
        careful[index] = _row_sources(table, index, columns, sid_col, value, plain_text_rows)
    return _canonical_plain_lists(arrow, plain, compact,
                                  pa.array(careful, type=pa.string()))


def _row_sources(
    table: Table, index: int, columns: list[str], sid_col: str | None, value: Any,
    plain_text_rows: list[int] | None,
) -> str:
    """Canonical JSON of row ``index``'s passages (``value``: its cell of ``columns[0]``)."""
    if len(columns) == 1 and sid_col is None and type(value) is str and value.startswith("["):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):  # the careful path below explains it
            parsed = None
        if (
            type(parsed) is list
            and all(type(t) is str for t in parsed)
            and sum(map(len, parsed)) <= MAX_CELL_CHARS
        ):
            return _passages_json(parsed)
    record = {c: table.data[c][index] for c in columns[1:]}
    record[columns[0]] = value
    passages = _sources(table, index, columns, record, plain_text_rows)
    if sid_col is not None:
        _attach_source_ids(table, index, sid_col, passages)
    return _canonical_json(passages)


def _attach_source_ids(
    table: Table, index: int, sid_col: str, passages: list[dict[str, Any]]
) -> None:
    ids = table.data[sid_col][index]
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if isinstance(ids, str) and ids.strip().startswith("["):
        try:
            ids = strict_json_loads(ids)
        except json.JSONDecodeError:
            ids = python_list(ids.strip())
        except JsonValueError:  # not a list of ids we can store
            ids = None
    if not isinstance(ids, list) or len(ids) != len(passages):
        raise table.error(
            f"must be a list with one id per passage ({len(passages)})",
            index, sid_col,
        )
    for passage, sid in zip(passages, ids, strict=True):
        passage["source_id"] = None if sid is None else str(sid)
