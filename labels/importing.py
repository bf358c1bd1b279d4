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
from json.encoder import encode_basestring as _encode
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from labels.errors import ConflictError, ImportFileError
from labels.models import DEFAULT_CRITERION, ID_SEPARATOR, PAIRWISE_VERDICTS, Kind
from labels.reading import MAX_CELL_CHARS, Table, read_table
from labels.store import LabelStore, NewLabel

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
ROW_FORMATS = ("csv", "jsonl", "json", "parquet", "ragas")

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
OnChanged = Literal["error", "skip"]


@dataclass(frozen=True)
class ImportSummary:
    """What an import did."""

    dataset: str
    path: str
    rows_read: int
    added: int
    unchanged: int
    changed: int = 0
    changed_ids: tuple[str, ...] = ()
    generated_ids: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)


def parse_mapping(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """Turn ``["question=prompt", "sources=ctx1,ctx2"]`` into a field → column mapping."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        target, sep, column = pair.partition("=")
        target, column = target.strip(), column.strip()
        if not sep or not target or not column:
            raise ImportFileError(f"--map {pair!r} is not of the form field=column")
        if target not in ITEM_FIELDS:
            raise ImportFileError(
                f"--map {pair!r}: unknown field {target!r} (fields: {', '.join(ITEM_FIELDS)})"
            )
        mapping[target] = column
    return mapping


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
                        f"--map {fld}={mapping[fld]}: the file has no column {column!r} "
                        f"(columns: {', '.join(table.columns)})",
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


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def _text(table: Table, index: int, column: str, value: Any, *, required: bool) -> str | None:
    if _is_missing(value):
        if required:
            raise ImportFileError(
                "is empty but is required", path=table.path, row=index + 1, column=column
            )
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ImportFileError(
            f"must be text, got {_type_name(value)}", path=table.path, row=index + 1, column=column
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise ImportFileError(
            f"must be text, got the number {value}", path=table.path, row=index + 1, column=column
        )
    text = value if isinstance(value, str) else _number_text(value)
    if len(text) > MAX_CELL_CHARS:
        raise ImportFileError(
            f"holds {len(text):,} characters; the limit is {MAX_CELL_CHARS:,} per cell",
            path=table.path,
            row=index + 1,
            column=column,
        )
    return text


def _number_text(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", bool: "true/false", str: "text"}.get(
        type(value), f"a {type(value).__name__}"
    )


def _passage(table: Table, index: int, column: str, element: Any, k: int) -> dict[str, Any]:
    if isinstance(element, str):
        return {"text": element, "source_id": None}
    if isinstance(element, dict):
        text = element.get("text", element.get("content", element.get("page_content")))
        if not isinstance(text, str):
            raise ImportFileError(
                f"passage {k + 1} is an object without a 'text' string",
                path=table.path,
                row=index + 1,
                column=column,
            )
        sid = element.get("source_id", element.get("id", element.get("document_id")))
        return {"text": text, "source_id": None if sid is None else str(sid)}
    raise ImportFileError(
        f"passage {k + 1} must be text or an object with 'text', got {_type_name(element)}",
        path=table.path,
        row=index + 1,
        column=column,
    )


def _sources(
    table: Table, index: int, columns: list[str], record: Mapping[str, Any]
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
            value = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise ImportFileError(
                f"looks like a JSON list but is not valid JSON ({error.msg} at character "
                f"{error.colno}); write sources as a JSON list of strings",
                path=table.path,
                row=index + 1,
                column=column,
            ) from None
    if not isinstance(value, list):
        raise ImportFileError(
            f"must be a list of passages, got {_type_name(value)}",
            path=table.path,
            row=index + 1,
            column=column,
        )
    out = [_passage(table, index, column, element, k) for k, element in enumerate(value)]
    total = sum(len(p["text"]) for p in out)
    if total > MAX_CELL_CHARS:
        raise ImportFileError(
            f"holds {total:,} characters of sources; the limit is {MAX_CELL_CHARS:,} per cell",
            path=table.path,
            row=index + 1,
            column=column,
        )
    return out


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
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
                value = json.loads(value)
            except json.JSONDecodeError:
                raise ImportFileError(
                    "must be a JSON object", path=table.path, row=index + 1, column=column
                ) from None
        if not _is_missing(value):
            if not isinstance(value, dict):
                raise ImportFileError(
                    f"must be a JSON object, got {_type_name(value)}",
                    path=table.path,
                    row=index + 1,
                    column=column,
                )
            meta.update(value)
    for name in extra:
        if name in record and not _is_missing(record[name]):
            meta[name] = record[name]
    return {str(key): _json_safe(value) for key, value in meta.items()}


def normalise(table: Table, mapping: Mapping[str, str] | None = None) -> tuple[pa.Table, Kind]:
    """Map and validate every record; returns one row per item with canonical columns."""
    columns = _resolve_columns(table, mapping or {})
    if "question" not in columns:
        raise ImportFileError(
            "missing required column 'question' (columns: "
            f"{', '.join(table.columns)}); map one with --map question=COLUMN",
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
            f"{', '.join(table.columns)}); map one with --map answer=COLUMN",
            path=table.path,
        )
    used = {c for cols in columns.values() for c in cols}
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
    out: dict[str, list[Any]] = {
        "id": _text_column(table, id_col, required=False) if id_col else [None] * n,
        "question": _text_column(table, q_col, required=True),  # type: ignore[arg-type]
    }
    for fld in ("answer", "answer_a", "answer_b"):
        out[fld] = (
            _text_column(table, columns[fld][0], required=True)
            if fld in answer_cols
            else [None] * n
        )
    out["sources"] = _sources_column(table, columns.get("sources"), sid_col)
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
    arrays: dict[str, pa.Array[Any]] = {
        name: pa.array(values, type=pa.string()) for name, values in out.items()
    }
    arrays["row"] = pa.array(range(1, n + 1), type=pa.int64())
    return pa.table(arrays), ("pairwise" if pairwise else "pointwise")


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _text_column(table: Table, column: str, *, required: bool) -> list[str | None]:
    """Validate one text column; a fast path for the common all-strings case (CSV)."""
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


def _passages_json(texts: list[str]) -> str:
    # Same text as _canonical_json([{"source_id": None, "text": t}, ...]), without building dicts.
    return "[" + ",".join('{"source_id":null,"text":' + _encode(t) + "}" for t in texts) + "]"


def _sources_column(table: Table, columns: list[str] | None, sid_col: str | None) -> list[str]:
    """Canonical JSON of each row's passages."""
    if columns is None:
        return ["[]"] * table.n_rows
    out: list[str] = []
    simple = len(columns) == 1 and sid_col is None
    values = table.data[columns[0]]
    for index in range(table.n_rows):
        if simple:
            value = values[index]
            if type(value) is str and value.startswith("["):
                try:
                    parsed = json.loads(value)
                except json.JSONDecodeError:
                    parsed = None
                if (
                    type(parsed) is list
                    and all(type(t) is str for t in parsed)
                    and sum(map(len, parsed)) <= MAX_CELL_CHARS
                ):
                    out.append(_passages_json(parsed))
                    continue
        record = {c: table.data[c][index] for c in columns}
        passages = _sources(table, index, columns, record)
        if sid_col is not None:
            _attach_source_ids(table, index, sid_col, passages)
        out.append(_canonical_json(passages))
    return out


def _attach_source_ids(
    table: Table, index: int, sid_col: str, passages: list[dict[str, Any]]
) -> None:
    ids = table.data[sid_col][index]
    if hasattr(ids, "tolist"):
        ids = ids.tolist()
    if isinstance(ids, str) and ids.strip().startswith("["):
        try:
            ids = json.loads(ids)
        except json.JSONDecodeError:
            ids = None
    if not isinstance(ids, list) or len(ids) != len(passages):
        raise ImportFileError(
            f"must be a list with one id per passage ({len(passages)})",
            path=table.path,
            row=index + 1,
            column=sid_col,
        )
    for passage, sid in zip(passages, ids, strict=True):
        passage["source_id"] = None if sid is None else str(sid)


_SEP = f"chr({ord(ID_SEPARATOR)})"
_ID_SQL = (
    f"'h' || left(sha256(concat_ws({_SEP}, question, coalesce(answer, ''), "
    "coalesce(answer_a, ''), coalesce(answer_b, ''), sources, coalesce(reference, ''))), 16)"
)
_HASH_SQL = (
    f"sha256(concat_ws({_SEP}, question, coalesce(answer, ''), coalesce(answer_a, ''), "
    "coalesce(answer_b, ''), sources, coalesce(reference, ''), coalesce(segment, ''), "
    "coalesce(document_id, ''), metadata))"
)


def import_rows(
    store: LabelStore,
    path: str | Path,
    dataset: str,
    *,
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    encoding: str = "utf-8",
    on_changed: OnChanged = "error",
) -> ImportSummary:
    """Import the rows of ``path`` into ``dataset`` (created if needed), all or nothing.

    Args:
        store: the label store to write to.
        path: a CSV, JSONL, JSON (list of records) or Parquet file.
        dataset: dataset name.
        format: one of ``csv``, ``jsonl``, ``json``, ``parquet``, or ``ragas`` (ragas column
            names: ``user_input``, ``retrieved_contexts``, ``response``, ``reference``);
            default from the extension.
        mapping: item field → file column (``{"question": "prompt"}``); for ``sources`` a
            comma-separated list of columns, one passage each.
        encoding: text encoding of CSV/JSON files (a UTF-8 or UTF-16 byte-order mark wins).
        on_changed: what to do when a row's content differs from the stored row with the same
            id: ``"error"`` (default; nothing is written) or ``"skip"`` (keep the stored row).

    Raises:
        ImportFileError: a problem in the file, naming the file, row and column.
        ConflictError: changed rows with ``on_changed="error"``.
    """
    name = str(path)
    file_format = format
    full_mapping = dict(mapping or {})
    if format == "ragas":
        file_format = None
        full_mapping = {**RAGAS_MAPPING, **full_mapping}
    table = read_table(name, format=file_format, encoding=encoding)
    if format == "ragas":
        full_mapping = {
            k: v for k, v in full_mapping.items() if v in table.columns or k in (mapping or {})
        }
    frame, kind = normalise(table, full_mapping)
    if not dataset.strip():
        raise ImportFileError("a dataset needs a non-empty name", path=name)
    with store.db.transaction() as cur:
        cur.execute(
            "INSERT INTO datasets (name, kind, source_file) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [dataset, kind, Path(name).name],
        )
        stored_kind = cur.execute("SELECT kind FROM datasets WHERE name = ?", [dataset]).fetchall()
        if stored_kind and stored_kind[0][0] != kind:
            raise ImportFileError(
                f"dataset {dataset!r} holds {stored_kind[0][0]} rows; this file has {kind} rows",
                path=name,
            )
        cur.register("incoming_raw", frame)
        cur.execute(
            "CREATE TEMP TABLE incoming AS SELECT coalesce(id, "
            f"{_ID_SQL}) AS item_id, id IS NULL AS generated, {_HASH_SQL} AS content_hash, * "
            "EXCLUDE (id) FROM incoming_raw"
        )
        cur.unregister("incoming_raw")
        try:
            return _write_incoming(cur, table, dataset, name, on_changed)
        finally:
            cur.execute("DROP TABLE IF EXISTS incoming")


def _write_incoming(
    cur: Any, table: Table, dataset: str, name: str, on_changed: OnChanged
) -> ImportSummary:
    duplicate = cur.execute(
        "SELECT item_id, list(row ORDER BY row), bool_or(generated) FROM incoming "
        "GROUP BY item_id HAVING count(*) > 1 ORDER BY min(row) LIMIT 1"
    ).fetchone()
    if duplicate:
        item_id, rows, generated = duplicate
        what = (
            "are identical rows (same question, answer and sources)"
            if generated
            else f"share the id {item_id!r}"
        )
        raise ImportFileError(
            f"rows {', '.join(str(r) for r in rows[:5])} {what}; ids must be unique in a file",
            path=name,
            row=rows[1],
            column=None if generated else "id",
        )
    changed = cur.execute(
        "SELECT n.item_id, n.row FROM incoming n JOIN items i ON i.dataset = ? "
        "AND i.item_id = n.item_id WHERE i.content_hash <> n.content_hash ORDER BY n.row",
        [dataset],
    ).fetchall()
    if changed and on_changed == "error":
        shown = ", ".join(f"{r[0]!r} (row {r[1]})" for r in changed[:5])
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        raise ConflictError(
            f"{name}: {len(changed)} row(s) differ from the stored rows with the same id: "
            f"{shown}{more}. Nothing was imported. Give changed rows new ids, import them into "
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
                           sources, reference, segment, document_id, metadata, content_hash)
        SELECT ?, n.item_id, ? + n.row, n.question, n.answer, n.answer_a, n.answer_b, n.sources,
               n.reference, n.segment, n.document_id, n.metadata, n.content_hash
        FROM incoming n ANTI JOIN (SELECT item_id FROM items WHERE dataset = ?) i
             ON i.item_id = n.item_id
        """,
        [dataset, start_row[0] if start_row else 0, dataset],
    ).fetchone()
    generated_row = cur.execute("SELECT count(*) FROM incoming WHERE generated").fetchone()
    return ImportSummary(
        dataset=dataset,
        path=name,
        rows_read=table.n_rows,
        added=int(added_row[0]) if added_row else 0,
        unchanged=int(unchanged_row[0]) if unchanged_row else 0,
        changed=len(changed),
        changed_ids=tuple(r[0] for r in changed),
        generated_ids=int(generated_row[0]) if generated_row else 0,
    )


# -- human labels from a spreadsheet ---------------------------------------------------------

_LABEL_WORDS = {
    "pass": "pass",
    "fail": "fail",
    "unsure": "unsure",
    "1": "pass",
    "0": "fail",
    "true": "pass",
    "false": "fail",
    "a": "a",
    "b": "b",
    "tie": "tie",
}


@dataclass(frozen=True)
class LabelImportSummary:
    """What a label import did."""

    dataset: str
    path: str
    rows_read: int
    added: int
    unchanged: int
    annotators: tuple[str, ...]


def _label_word(table: Table, index: int, column: str, value: Any, pairwise: bool) -> str:
    if isinstance(value, bool):
        key = "true" if value else "false"
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value in (0, 1):
        key = str(int(value))
    elif isinstance(value, str):
        key = value.strip().lower()
    else:
        key = ""
    verdict = _LABEL_WORDS.get(key)
    allowed = PAIRWISE_VERDICTS if pairwise else ("pass", "fail", "unsure")
    if verdict not in allowed:
        words = "a, b, tie" if pairwise else "pass, fail, unsure, 1, 0, true, false"
        raise ImportFileError(
            f"{value!r} is not a label (use {words})",
            path=table.path,
            row=index + 1,
            column=column,
        )
    return verdict


def import_labels(
    store: LabelStore,
    path: str | Path,
    dataset: str,
    *,
    annotator: str | None = None,
    criterion: str = DEFAULT_CRITERION,
    format: str | None = None,
    encoding: str = "utf-8",
    id_column: str = "id",
    label_column: str = "label",
) -> LabelImportSummary:
    """Import existing human labels (``id``, ``label``, optional ``note`` and ``annotator``).

    Labels equal to the annotator's current label for the item are skipped, so re-importing
    the same file adds nothing. All labels are written in one transaction.
    """
    name = str(path)
    table = read_table(name, format=format, encoding=encoding)
    id_col = (
        id_column
        if id_column in table.columns
        else ("item_id" if "item_id" in table.columns else None)
    )
    label_col = (
        label_column
        if label_column in table.columns
        else ("verdict" if "verdict" in table.columns else None)
    )
    if id_col is None or label_col is None:
        missing = "id" if id_col is None else "label"
        raise ImportFileError(
            f"missing required column {missing!r} (columns: {', '.join(table.columns)})",
            path=name,
        )
    has_annotator = "annotator" in table.columns
    if annotator is None and not has_annotator:
        raise ImportFileError(
            "no annotator: pass --annotator NAME or add an 'annotator' column", path=name
        )
    pairwise = store.criterion(criterion).kind == "pairwise"
    current = store.current_labels(dataset, criterion=criterion)
    latest = {
        (r.item_id, r.annotator): (r.verdict, r.note) for r in current.itertuples(index=False)
    }
    known_ids = set(store.items_frame(dataset)["item_id"]) if store.count_items(dataset) else set()
    store.dataset(dataset)
    new: list[NewLabel] = []
    skipped = 0
    seen: dict[tuple[str, str], int] = {}
    for index in range(table.n_rows):
        record = table.record(index)
        item_id = _text(table, index, id_col, record.get(id_col), required=True)
        assert item_id is not None  # required=True never returns None
        if item_id not in known_ids:
            raise ImportFileError(
                f"dataset {dataset!r} has no item {item_id!r}",
                path=name,
                row=index + 1,
                column=id_col,
            )
        verdict = _label_word(table, index, label_col, record.get(label_col), pairwise)
        who = annotator
        if has_annotator:
            who = _text(table, index, "annotator", record.get("annotator"), required=False) or who
        if not who:
            raise ImportFileError(
                "is empty and no --annotator was given",
                path=name,
                row=index + 1,
                column="annotator",
            )
        key = (item_id, who)
        if key in seen:
            raise ImportFileError(
                f"labels item {item_id!r} for {who!r} again (first at row {seen[key]})",
                path=name,
                row=index + 1,
                column=id_col,
            )
        seen[key] = index + 1
        note = ""
        if "note" in table.columns:
            note = _text(table, index, "note", record.get("note"), required=False) or ""
        if latest.get(key) == (verdict, note):
            skipped += 1
            continue
        new.append(
            NewLabel(
                item_id=item_id,
                annotator=who,
                verdict=verdict,
                criterion=criterion,
                note=note,
                origin="import",
            )
        )
    store.add_labels(dataset, new)
    return LabelImportSummary(
        dataset=dataset,
        path=name,
        rows_read=table.n_rows,
        added=len(new),
        unchanged=skipped,
        annotators=tuple(sorted({n.annotator for n in new})),
    )
