"""Read a file of records (CSV, JSONL, JSON, Parquet) into columns, with row-precise errors.

Nothing here knows what the columns mean; :mod:`labels.importing` maps and validates them.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labels.errors import ImportFileError
from labels.limits import ReadLimits

FILE_FORMATS = ("csv", "jsonl", "json", "parquet")
MAX_CELL_CHARS = 2_000_000
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}

# Our own per-cell check (in importing) names the row and column; the csv module's does not.
csv.field_size_limit(1 << 28)


@dataclass
class Table:
    """Records read from a file: column names in file order and one value list per column.

    ``data[column][i]`` is record ``i``'s value (``None`` where a JSON record lacks the key);
    ``lines[i]`` is where record ``i`` starts in the file when that is known (text formats read
    by the careful reader), used in error messages.
    """

    path: str
    columns: list[str]
    data: dict[str, list[Any]]
    n_rows: int
    lines: list[int] | None = None

    @classmethod
    def from_records(
        cls, path: str, records: list[dict[str, Any]], lines: list[int] | None = None
    ) -> Table:
        """Build a table from dict records (JSON, JSONL, Parquet)."""
        names: dict[str, None] = {}
        for record in records:
            names.update(dict.fromkeys(record))
        data = {name: [r.get(name) for r in records] for name in names}
        return cls(path, list(names), data, len(records), lines)

    def record(self, index: int) -> dict[str, Any]:
        """Record ``index`` as a dict."""
        return {name: values[index] for name, values in self.data.items()}

    def where(self, index: int) -> str:
        """``row 3 (line 4)``: how a message points at record ``index``."""
        if self.lines is not None and self.lines[index] != index + 1:
            return f"row {index + 1} (line {self.lines[index]})"
        return f"row {index + 1}"


def detect_format(path: str | Path, format: str | None = None) -> str:
    """The file format: ``format`` if given, else from the file extension."""
    if format:
        if format not in FILE_FORMATS:
            raise ImportFileError(
                f"unknown format {format!r} (known: {', '.join(FILE_FORMATS)})", path=str(path)
            )
        return format
    suffix = Path(path).suffix.lower()
    if suffix not in _EXTENSIONS:
        raise ImportFileError(
            f"cannot tell the format from the extension {suffix or '(none)'!r}; "
            f"pass --format ({', '.join(FILE_FORMATS)})",
            path=str(path),
        )
    return _EXTENSIONS[suffix]


def _decode(path: str, data: bytes, encoding: str) -> str:
    if data.startswith(codecs.BOM_UTF8):
        data, encoding = data[len(codecs.BOM_UTF8) :], "utf-8"
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        encoding = "utf-16"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        bad = data[error.start : error.start + 1].hex()
        raise ImportFileError(
            f"the file is not valid {encoding} text (byte 0x{bad} at line {line}); save it as "
            "UTF-8 or pass --encoding",
            path=path,
        ) from None
    except LookupError:
        raise ImportFileError(f"unknown encoding {encoding!r}", path=path) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ImportFileError(
            f"the file contains a NUL character at line {line}: is it a binary file, or "
            "UTF-16 without a byte-order mark?",
            path=path,
        )
    return text


def _check_header(path: str, names: list[str]) -> None:
    for position, name in enumerate(names, start=1):
        if not name:
            raise ImportFileError(f"header column {position} has no name", path=path, row=1)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ImportFileError(f"the header names column {name!r} twice", path=path)
        seen.add(name)


def _read_csv_fast(path: str, data: bytes) -> Table | None:
    """Parse with Arrow's multithreaded reader; ``None`` when the careful reader must decide.

    Arrow's errors do not name rows the way a user needs, so on any doubt the file is read
    again by :func:`_read_csv`, which either explains the problem or returns the table.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    try:
        # pyarrow-stubs types input_file as a path or IO; Arrow also takes a Buffer (zero-copy).
        first = pacsv.open_csv(
            pa.py_buffer(data),  # type: ignore[arg-type]
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        )
        names = [n.strip() for n in first.schema.names]
        first.close()
        _check_header(path, names)
        table = pacsv.read_csv(
            pa.py_buffer(data),  # type: ignore[arg-type]  # a Buffer, as above
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in first.schema.names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except ImportFileError:
        raise
    except (pa.ArrowException, ValueError):
        return None
    columns = {n.strip(): table.column(n).to_pylist() for n in table.column_names}
    return Table(path, names, columns, table.num_rows)


def _read_csv(path: str, text: str) -> Table:
    delimiter = "\t" if path.lower().endswith(".tsv") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise ImportFileError("the file is empty", path=path)
        names = [h.strip() for h in header]
        _check_header(path, names)
        width = len(names)
        rows: list[list[str]] = []
        lines: list[int] = []
        start = reader.line_num + 1
        for record in reader:
            if not record or (len(record) == 1 and record[0] == "" and width > 1):
                start = reader.line_num + 1
                continue
            if len(record) != width:
                raise ImportFileError(
                    f"has {len(record)} fields but the header has {width} (a ragged row: check "
                    "for an unquoted comma or a missing field)",
                    path=path,
                    row=len(rows) + 1,
                )
            rows.append(record)
            lines.append(start)
            start = reader.line_num + 1
    except csv.Error as error:
        raise ImportFileError(
            f"unreadable CSV at line {reader.line_num}: {error}", path=path
        ) from None
    data = (
        {name: list(values) for name, values in zip(names, zip(*rows, strict=True), strict=True)}
        if rows
        else {name: [] for name in names}
    )
    return Table(path, names, data, len(rows), lines)


def _json_kind(value: Any) -> str:
    kinds = {dict: "a JSON object", list: "a JSON list", str: "a JSON string", bool: "true/false"}
    return kinds.get(type(value), "a JSON number" if isinstance(value, (int, float)) else "null")


def _read_jsonl(path: str, text: str) -> Table:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise ImportFileError(
                f"line {number} is not valid JSON ({error.msg} at character {error.colno})",
                path=path,
                row=len(rows) + 1,
            ) from None
        if not isinstance(value, dict):
            raise ImportFileError(
                f"line {number} is {_json_kind(value)}, not an object",
                path=path,
                row=len(rows) + 1,
            )
        rows.append(value)
        lines.append(number)
    return Table.from_records(path, rows, lines)


def _read_json(path: str, text: str) -> Table:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise ImportFileError(
            f"not valid JSON ({error.msg} at line {error.lineno}, character {error.colno})",
            path=path,
        ) from None
    if isinstance(value, dict) and isinstance(value.get("data"), list):
        value = value["data"]
    if not isinstance(value, list):
        raise ImportFileError(
            f"expected a JSON list of records, got {_json_kind(value)}", path=path
        )
    for index, record in enumerate(value):
        if not isinstance(record, dict):
            raise ImportFileError(
                f"is {_json_kind(record)}, not an object", path=path, row=index + 1
            )
    return Table.from_records(path, value)


def check_parquet_size(path: str, limits: ReadLimits | None = None) -> None:
    """Refuse a Parquet file whose footer promises more rows or bytes than ``limits`` allow.

    Only the footer (the file's metadata) is read, so a file that would inflate to gigabytes
    is refused in milliseconds. The uncompressed size is what Parquet records per row group
    (the column data after decompression, before decoding).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    limits = limits if limits is not None else ReadLimits()
    try:
        with pq.ParquetFile(path) as parquet:
            meta = parquet.metadata
            rows = meta.num_rows
            size = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    except (pa.ArrowException, OSError) as error:
        raise ImportFileError(f"not a readable Parquet file ({error})", path=path) from None
    if rows > limits.max_rows:
        raise ImportFileError(
            f"holds {rows:,} rows, more than the limit of {limits.max_rows:,} "
            "(CALIBRATE_MAX_ROWS); nothing was read", path=path,
        )
    if size > limits.max_uncompressed_mb * 1024 * 1024:
        raise ImportFileError(
            f"its column data takes {size / 1024 / 1024:,.1f} MB uncompressed, more than the "
            f"limit of {limits.max_uncompressed_mb:,.0f} MB (CALIBRATE_MAX_UNCOMPRESSED_MB); "
            "nothing was read", path=path,
        )


def _read_parquet(path: str) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_parquet_size(path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as error:
        raise ImportFileError(f"not a readable Parquet file ({error})", path=path) from None
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    return Table(path, table.column_names, columns, table.num_rows)


def read_table(path: str | Path, *, format: str | None = None, encoding: str = "utf-8") -> Table:
    """Read ``path`` into a :class:`Table`; any problem raises :class:`ImportFileError`."""
    name = str(path)
    fmt = detect_format(name, format)
    try:
        if fmt == "parquet":
            table = _read_parquet(name)
        else:
            data = Path(name).read_bytes()
            text = _decode(name, data, encoding)
            if not text.strip():
                raise ImportFileError("the file is empty", path=name)
            fast = None
            if fmt == "csv" and encoding.lower().replace("-", "") == "utf8":
                fast = _read_csv_fast(name, data[3:] if data.startswith(codecs.BOM_UTF8) else data)
            if fast is not None:
                table = fast
            else:
                reader = {"csv": _read_csv, "jsonl": _read_jsonl, "json": _read_json}[fmt]
                table = reader(name, text)
    except FileNotFoundError:
        raise ImportFileError("no such file", path=name) from None
    except IsADirectoryError:
        raise ImportFileError("is a directory, not a file", path=name) from None
    except PermissionError:
        raise ImportFileError("permission denied", path=name) from None
    if not table.n_rows:
        raise ImportFileError("the file has a header but no rows", path=name)
    return table
