"""Import rows and existing human labels from files, all or nothing.

``import_rows`` maps the file's columns onto the item fields, validates every row, and writes the
whole file in one transaction: a bad file changes nothing. Re-importing the same file is a no-op;
a row whose content changed under the same id is reported, never silently overwritten.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from labels.cells import is_missing as _is_missing
from labels.cells import type_name as _type_name
from labels.errors import ImportFileError, StorageFullError
from labels.item_columns import (
    _answer_column,
    _canonical_json,
    _id_column,
    _rows_text,
    _sources_column,
    _text_column,
)

# Re-exported: label import lived here before it moved to its own module.
from labels.label_import import LabelImportSummary as LabelImportSummary
from labels.label_import import import_labels as import_labels
from labels.models import Kind
from labels.names import ROW_FORMATS as ROW_FORMATS  # re-exported: callers name it from here
from labels.reading import FileImportSummary, Table, read_table
from labels.record_paths import is_path, parse_pairs, split_column
from labels.stores.item_store import (
    OnChanged as OnChanged,  # re-exported: callers name it from here
)
from labels.stores.item_store import generated_id, write_items
from labels.stores.label_store import LabelStore
from labels.strict_json import JsonValueError, strict_json_loads
from labels.tool_formats import TOOL_FORMATS, detect
from labels.validation import (
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
    # No hashes here: :func:`labels.stores.item_store.write_items` adds them while DuckDB writes,
    # and
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
    (:func:`labels.stores.item_store.generated_id`): how a file of scores about rows that had no
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
