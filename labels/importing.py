"""Import rows and existing human labels from files, all or nothing.

``import_rows`` maps the file's columns onto the item fields, validates every row, and writes the
whole file in one transaction: a bad file changes nothing. Re-importing the same file is a no-op;
a row whose content changed under the same id is reported, never silently overwritten.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from json.encoder import encode_basestring as _encode
from pathlib import Path
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from labels.cells import is_missing as _is_missing
from labels.cells import text_cell as _text
from labels.cells import type_name as _type_name
from labels.errors import ImportFileError, StorageFullError

# Re-exported: label import lived here before it moved to its own module.
from labels.label_import import LabelImportSummary as LabelImportSummary
from labels.label_import import import_labels as import_labels
from labels.models import Kind
from labels.names import ROW_FORMATS as ROW_FORMATS  # re-exported: callers name it from here
from labels.reading import MAX_CELL_CHARS, FileImportSummary, Table, read_table
from labels.record_paths import is_path, parse_pairs, split_column
from labels.store import LabelStore
from labels.store_items import OnChanged as OnChanged  # re-exported: callers name it from here
from labels.store_items import generated_id, write_items
from labels.strict_json import JsonValueError, strict_json_loads
from labels.text_columns import plain_string_lists
from labels.tool_formats import TOOL_FORMATS, detect
from labels.validation import (
    PLAIN_ID_PATTERN,
    LookalikeIdError,
    LookalikeIds,
    all_plain,
    check_name,
)

ITEM_FIELDS = (
    "id",
    "question",
    "answer",
    "answer_a",
    "answer_b",
    "sources",
    "source_ids",
    "reference",
    "segment",
    "document_id",
    "metadata",
)

# Column names recognised without a --map, in order of preference.
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "item_id", "row_id"),
    "question": ("question", "query", "user_input"),
    "answer": ("answer", "response"),
    "answer_a": ("answer_a", "response_a"),
    "answer_b": ("answer_b", "response_b"),
    "sources": ("sources", "contexts", "retrieved_contexts", "context", "passages"),
    "source_ids": ("source_ids",),
    "reference": ("reference", "reference_answer", "ground_truth"),
    "segment": ("segment",),
    "document_id": ("document_id", "doc_id"),
    "metadata": ("metadata",),
}
RAGAS_MAPPING = {
    "question": "user_input",
    "sources": "retrieved_contexts",
    "answer": "response",
    "reference": "reference",
}
_NUMBERED_SOURCE = re.compile(r"^(sources?|contexts?|passages?)[_ ]?(\d+)$", re.IGNORECASE)


@dataclass(frozen=True)
class ImportSummary(FileImportSummary):
    """What an import of rows did."""

    changed: int = 0
    changed_ids: tuple[str, ...] = ()
    generated_ids: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)
    tool: str | None = None
    """The tool whose file this was (``promptfoo``, ``inspect``, ``deepeval``, ``ragas``)."""
    metrics: tuple[str, ...] = ()
    """The tool's judge metrics the file also holds (``calibrate verdicts import`` reads them)."""


def parse_mapping(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Turn ``["question=prompt", "sources=ctx1,ctx2"]`` into a field → column mapping."""
    return parse_pairs(list(pairs), ITEM_FIELDS)


def with_mapped_paths(table: Table, mapping: Mapping[str, str]) -> Table:
    """``table`` plus a column for each mapped path (``response.output.text``) it lacks.

    See :meth:`labels.reading.Table.with_paths`; a ``sources`` mapping may list several,
    comma-separated.
    """
    for fld, value in mapping.items():
        paths = [
            column.strip()
            for column in (value.split(",") if fld == "sources" else [value])
            if is_path(column.strip()) and column.strip() not in table.columns
        ]
        if paths:
            table = table.with_paths(paths, option=f"--map {fld}=")
    return table


def _closest(table: Table, fld: str) -> str:
    """`` (did you mean --map answer=answr?)`` when a column's name is close to ``fld``."""
    close = table.closest(fld)
    return "" if close is None else f" (did you mean --map {fld}={close}?)"


def _resolve_columns(table: Table, mapping: Mapping[str, str]) -> dict[str, list[str]]:
    """Field → the file column(s) that feed it."""
    present = set(table.columns)
    resolved: dict[str, list[str]] = {}
    for fld in ITEM_FIELDS:
        if fld in mapping:
            columns = (
                [c.strip() for c in mapping[fld].split(",")] if fld == "sources" else [mapping[fld]]
            )
            for column in columns:
                if column not in present:
                    raise ImportFileError(
                        f"--map {fld}={mapping[fld]}: the file has no column {column!r}"
                        f"{table.did_you_mean(column)} (columns: {table.shown_paths()})",
                        path=table.path,
                    )
            resolved[fld] = columns
            continue
        for alias in ALIASES[fld]:
            if alias in present and alias not in mapping.values():
                resolved[fld] = [alias]
                break
    if "sources" not in resolved:
        numbered = sorted(
            (int(m.group(2)), c) for c in table.columns if (m := _NUMBERED_SOURCE.match(c))
        )
        if numbered:
            resolved["sources"] = [c for _, c in numbered]
    return resolved


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


class _InfiniteNumber(ValueError):
    """A metadata value JSON cannot hold (an infinite float from Parquet)."""


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        raise _InfiniteNumber(str(value))
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if hasattr(value, "tolist"):
        return _json_safe(value.tolist())
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _metadata(
    table: Table, index: int, column: str | None, record: Mapping[str, Any], extra: list[str]
) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if column is not None:
        value = record.get(column)
        if isinstance(value, str) and value.strip():
            try:
                value = strict_json_loads(value)
            except json.JSONDecodeError:
                raise table.error("must be a JSON object", index, column) from None
            except JsonValueError as error:
                raise table.error(
                    f"must be a JSON object we can import: it {error}",
                    index, column,
                ) from None
        if not _is_missing(value):
            if not isinstance(value, dict):
                raise table.error(f"must be a JSON object, got {_type_name(value)}", index, column)
            meta.update(value)
    for name in extra:
        if name in record and not _is_missing(record[name]):
            meta[name] = record[name]
    safe: dict[str, Any] = {}
    for key, value in meta.items():
        try:
            safe[str(key)] = _json_safe(value)
        except _InfiniteNumber as number:
            raise table.error(
                f"holds the number {number}, which metadata (stored as JSON) cannot hold",
                index, key if key in extra else column,
            ) from None
    return safe


def normalise(
    table: Table, mapping: Mapping[str, str] | None = None, *,
    warnings: list[str] | None = None,
) -> tuple[pa.Table, Kind]:
    """Map and validate every record; returns one row per item with canonical columns.

    Args:
        table: the file as read by :func:`labels.reading.read_table`.
        mapping: item field → file column(s), as for :func:`import_rows`.
        warnings: if given, what was imported but deserves a word is appended here (e.g.
            sources that start with ``[`` but are not JSON, kept as plain text).

    Raises:
        ImportFileError: naming the file, row and column of the first problem.
    """
    table = with_mapped_paths(table, mapping or {})
    columns = _resolve_columns(table, mapping or {})
    if "question" not in columns:
        raise ImportFileError(
            "missing required column 'question' (columns: "
            f"{table.shown_paths()}); map one with --map question=COLUMN"
            f"{_closest(table, 'question')}",
            path=table.path,
        )
    pairwise = "answer_a" in columns or "answer_b" in columns
    if pairwise and not ("answer_a" in columns and "answer_b" in columns):
        missing = "answer_b" if "answer_a" in columns else "answer_a"
        raise ImportFileError(
            f"a pairwise file needs both answer_a and answer_b; column {missing!r} is missing",
            path=table.path,
        )
    if not pairwise and "answer" not in columns:
        raise ImportFileError(
            "missing required column 'answer' (columns: "
            f"{table.shown_paths()}); map one with --map answer=COLUMN"
            f"{_closest(table, 'answer')}",
            path=table.path,
        )
    used = {c for cols in columns.values() for c in cols}
    # The object a path reads from is not copied into metadata as well: a promptfoo result's
    # whole ``response`` (token counts, raw provider output) is not the row's metadata.
    used |= {table.derived[c] for c in used if c in table.derived}
    extra = [c for c in table.columns if c not in used]

    def col(fld: str) -> str | None:
        return columns[fld][0] if fld in columns else None

    id_col, q_col, ref_col = col("id"), col("question"), col("reference")
    seg_col, doc_col, meta_col, sid_col = (
        col("segment"),
        col("document_id"),
        col("metadata"),
        col("source_ids"),
    )
    answer_cols = ["answer_a", "answer_b"] if pairwise else ["answer"]
    n = table.n_rows
    out: dict[str, Any] = {
        "id": _id_column(table, id_col) if id_col else [None] * n,
        "question": _text_column(table, q_col, required=True),  # type: ignore[arg-type]
    }
    for fld in ("answer", "answer_a", "answer_b"):
        out[fld] = (
            _answer_column(table, columns[fld][0], warnings)
            if fld in answer_cols
            else [None] * n
        )
    plain_text_rows: list[int] = []
    out["sources"] = _sources_column(table, columns.get("sources"), sid_col, plain_text_rows)
    if plain_text_rows and warnings is not None:
        warnings.append(
            f"{table.path}, column {columns['sources'][0]!r}: rows {_rows_text(plain_text_rows)} "
            "start with '[' but are not a JSON list; each was kept as plain text (one passage)"
        )
    out["reference"] = _text_column(table, ref_col, required=False) if ref_col else [None] * n
    out["segment"] = _text_column(table, seg_col, required=False) if seg_col else [None] * n
    out["document_id"] = _text_column(table, doc_col, required=False) if doc_col else [None] * n
    if meta_col is None and not extra:
        out["metadata"] = ["{}"] * n
    else:
        wanted = [c for c in (meta_col, *extra) if c is not None]
        out["metadata"] = [
            _canonical_json(
                _metadata(table, i, meta_col, {c: table.data[c][i] for c in wanted}, extra)
            )
            for i in range(n)
        ]
    arrays: dict[str, pa.ChunkedArray[Any]] = {
        name: values if isinstance(values, pa.ChunkedArray)
        else pa.chunked_array([pa.array(values, type=pa.string())])
        for name, values in out.items()
    }
    rows = pa.Table.from_arrays(list(arrays.values()), names=list(arrays))
    # No hashes here: :func:`labels.store_items.write_items` adds them while DuckDB writes, and
    # the Data page's preview shows exactly these columns.
    numbers = table.numbers if table.numbers is not None else range(1, n + 1)
    rows = rows.append_column("row", pa.array(numbers, type=pa.int64()))
    return rows, ("pairwise" if pairwise else "pointwise")


def _kept_columns(table: Table, mapping: Mapping[str, str], keep: tuple[str, ...]) -> Table:
    """``table`` with only the columns ``mapping``'s paths start from, and ``keep``."""
    mapped = {part.strip() for value in mapping.values() for part in value.split(",")}
    roots = {path.split(".")[0].split("[")[0] for path in mapped} | {
        split[0] for path in mapped if (split := split_column(path, table.columns))}
    names = [c for c in table.columns if c in roots or c in keep or c in mapped]
    return Table(table.path, names, {c: table.data[c] for c in names}, table.n_rows,
                 table.lines, tool=table.tool, numbers=table.numbers)


def row_ids(table: Table, mapping: Mapping[str, str] | None = None) -> list[str]:
    """The item id each record of ``table`` is stored under by :func:`import_rows`.

    Its id when it has one, else the id its content gives it
    (:func:`labels.store_items.generated_id`): how a file of scores about rows that had no
    id (a ragas results CSV) finds its items.

    Raises:
        ImportFileError: a record that could not be imported as a row, naming row and column.
    """
    frame, _ = normalise(table, mapping)
    columns = {name: frame.column(name).to_pylist() for name in (
        "id", "question", "answer", "answer_a", "answer_b", "sources", "reference")}
    return [
        given if given is not None else generated_id(
            str(columns["question"][i]), columns["answer"][i], columns["answer_a"][i],
            columns["answer_b"][i], str(columns["sources"][i]), columns["reference"][i])
        for i, given in enumerate(columns["id"])
    ]


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


def import_rows(
    store: LabelStore,
    path: str | Path,
    dataset: str,
    *,
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    encoding: str = "utf-8",
    on_changed: OnChanged = "error",
    display_name: str | None = None,
    records: str | None = None,
) -> ImportSummary:
    """Import the rows of ``path`` into ``dataset`` (created if needed), all or nothing.

    Args:
        store: the label store to write to.
        path: a CSV, JSONL, JSON (list of records) or Parquet file.
        dataset: dataset name.
        format: one of ``csv``, ``jsonl``, ``json``, ``parquet``; or a tool whose files are
            otherwise recognised by their shape (``promptfoo``, ``inspect``, ``deepeval``,
            ``ragas``, ``langfuse``, ``langsmith``, ``phoenix``: see
            :mod:`labels.tool_formats`), to insist on it. Default: the
            extension, and the tool the file's shape shows.
        mapping: item field → file column (``{"question": "prompt"}``) or a path into nested
            records (``{"answer": "response.output", "sources": "contexts[*].text"}``, see
            :mod:`labels.record_paths`); for ``sources`` a comma-separated list of columns,
            one passage each.
        encoding: text encoding of CSV/JSON files (a UTF-8 or UTF-16 byte-order mark wins).
        on_changed: what to do when a row's content differs from the stored row with the same
            id: ``"error"`` (default; nothing is written) or ``"skip"`` (keep the stored row).
        display_name: how messages and the dataset's ``source_file`` name the file (default
            ``path``): an upload's own name, never the server's temporary path.
        records: for a JSON file whose top level is an object, the path of its list of
            records (``data.items``).

    Returns:
        What was done; ``warnings`` lists what was imported but deserves a look.

    Raises:
        ImportFileError: a problem in the file, naming the file, row and column.
        ConflictError: changed rows with ``on_changed="error"``.
        InvalidNameError: ``dataset`` breaks :data:`labels.validation.NAME_RULE`.
    """
    dataset = check_name(dataset, "dataset")
    name = display_name or str(path)
    tool_name = format if format in TOOL_FORMATS else None
    table = read_table(path, format=None if tool_name else format, encoding=encoding,
                       display_name=name, records=records)
    # A tool's file is recognised by its shape; a --map of the user's wins over the tool's.
    tool = detect(table, tool_name) if tool_name or not records else None
    if tool is not None and tool.kind == "scores":
        held = ", ".join(dict.fromkeys(m.name for m in (*tool.metrics, *tool.feedback)))
        raise ImportFileError(
            f"this {tool.tool} file holds scores and feedback ({held or 'none'}), not rows: "
            "import the traces, runs or spans they are about first, then this file with "
            "'calibrate verdicts import' (a judge's) or 'calibrate labels import' (a "
            "person's)", path=name)
    if tool is not None and tool.gather is not None:
        table = table.gathered(*tool.gather)
    if tool is not None and tool.where:
        table = table.matching(tool.where)
        if not table.n_rows:
            raise ImportFileError(f"this {tool.tool} file has no root records (none with an "
                                  f"empty {', '.join(tool.where)})", path=name)
    full_mapping = {**(tool.rows if tool else {}), **(mapping or {})}
    if tool is not None and tool.keep is not None:
        table = _kept_columns(table, full_mapping, tool.keep)
    warnings: list[str] = []
    frame, kind = normalise(table, full_mapping, warnings=warnings)
    try:
        written = write_items(
            store, frame, dataset, kind=kind, source_file=Path(name).name, name=name,
            on_changed=on_changed,
        )
    except StorageFullError as error:
        raise StorageFullError(f"{name}: not imported: {error}") from None
    return ImportSummary(
        dataset=dataset,
        path=name,
        rows_read=table.n_rows,
        added=written.added,
        unchanged=written.unchanged,
        changed=len(written.changed_ids),
        changed_ids=written.changed_ids,
        generated_ids=written.generated_ids,
        warnings=tuple(warnings),
        tool=tool.tool if tool else None,
        metrics=tuple(m.name for m in tool.metrics) if tool else (),
    )
