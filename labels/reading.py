"""Read a file of records (CSV, JSONL, JSON, Parquet) into columns, with row-precise errors.

Nothing here knows what the columns mean; :mod:`labels.importing` maps and validates them.
"""

from __future__ import annotations

import codecs
import csv
import errno
import importlib.util
import io
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from labels.distribution import DISTRIBUTION
from labels.errors import ImportFileError
from labels.limits import ReadLimits
from labels.reading_parquet import _read_parquet, check_parquet_size
from labels.record_paths import (
    PathError,
    parse_path,
    record_lists,
    resolve,
)
from labels.strict_json import JsonValueError, decode_record, locate_column, strict_json_loads
from labels.table import ArrowColumns, Table
from labels.tool_formats import records_path
from labels.validation import shown

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

if TYPE_CHECKING:
    import pyarrow as pa

# Our own per-cell check (in importing) names the row and column; the csv module's does not.
csv.field_size_limit(1 << 28)


@dataclass(frozen=True)
class FileImportSummary:
    """What every import of a file reports (rows, labels and verdicts add their own fields).

    Attributes:
        dataset: the dataset imported into.
        path: the file's name as the user gave it (or the upload's name).
        rows_read: data rows in the file.
        added: rows stored by this import.
        unchanged: rows already stored as they are in the file (re-importing adds nothing).
    """

    dataset: str
    path: str
    rows_read: int
    added: int
    unchanged: int


def detect_format(path: str | Path, format: str | None = None) -> str:
    """The file format: ``format`` if given, else from the file extension."""
    if format:
        if format not in FILE_FORMATS:
            raise ImportFileError(
                f"unknown format {format!r} (known: {', '.join(FILE_FORMATS)})", path=str(path)
            )
        return format
    suffix = Path(path).suffix.lower()
    if suffix == ".eval":
        if importlib.util.find_spec("inspect_ai") is not None:
            return "eval"
        raise ImportFileError(
            "an inspect_ai .eval log is a zip archive; install inspect_ai (pip install "
            f"'{DISTRIBUTION}[inspect]') to read it with inspect's own reader, or write it as JSON "
            "(inspect log convert --to json) and import the .json log", path=str(path),
        )
    if suffix not in _EXTENSIONS:
        raise ImportFileError(
            f"cannot tell the format from the extension {suffix or '(none)'!r}; "
            f"pass --format ({', '.join(FILE_FORMATS)})",
            path=str(path),
        )
    return _EXTENSIONS[suffix]


def _marked_encoding(data: bytes) -> str | None:
    """``utf-8``, ``utf-32`` or ``utf-16`` when ``data`` starts with that byte-order mark."""
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8"
    # The UTF-32-LE mark starts with the UTF-16-LE one (FF FE), so test UTF-32 first.
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return None


def _nul_pattern(data: bytes) -> str | None:
    """``UTF-32`` or ``UTF-16`` when NUL bytes fall where those encodings put them."""
    head = data[: 4096 - 4096 % 4]
    quads = [head[i : i + 4] for i in range(0, len(head) - len(head) % 4, 4)]
    # Every character below U+10000 in UTF-32 has two zero bytes at the same end of its quad.
    if len(quads) >= 2 and (
        all(q[2:] == b"\0\0" for q in quads) or all(q[:2] == b"\0\0" for q in quads)
    ):
        return "UTF-32"
    return "UTF-16" if b"\0" in head else None


def _decode(path: str, data: bytes, encoding: str) -> tuple[str, str]:
    """The file's text and the encoding it was decoded with (a byte-order mark wins)."""
    marked = _marked_encoding(data)
    if marked == "utf-8":
        data = data[len(codecs.BOM_UTF8) :]
    encoding = marked or encoding
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        bad = data[error.start : error.start + 1].hex()
        guess = _nul_pattern(data)
        hint = (
            f"it looks like {guess} without a byte-order mark: pass --encoding "
            f"{guess.lower()}-le (or -be)" if guess else "save it as UTF-8 or pass --encoding"
        )
        raise ImportFileError(
            f"the file is not valid {encoding} text (byte 0x{bad} at line {line}); {hint}",
            path=path,
        ) from None
    except LookupError:
        raise ImportFileError(f"unknown encoding {shown(encoding)}", path=path) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        guess = _nul_pattern(data) or "UTF-16"
        raise ImportFileError(
            f"the file contains a NUL character at line {line}: is it a binary file, or "
            f"{guess} without a byte-order mark? (pass --encoding {guess.lower()}-le or -be)",
            path=path,
        )
    return text, encoding


def _check_header(path: str, names: list[str]) -> None:
    for position, name in enumerate(names, start=1):
        if not name:
            raise ImportFileError(f"header column {position} has no name", path=path, row=1)
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ImportFileError(f"the header names column {shown(name)} twice", path=path)
        seen.add(name)


def _read_csv_fast(path: str, data: pa.Buffer) -> Table | None:
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
            data,  # type: ignore[arg-type]
            parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        )
        names = [n.strip() for n in first.schema.names]
        first.close()
        _check_header(path, names)
        table = pacsv.read_csv(
            data,  # type: ignore[arg-type]  # a Buffer, as above
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
    table = table.rename_columns(names)
    return Table(path, names, ArrowColumns(table, names), table.num_rows, arrow=table)


def _text_of(path: str, real: str, encoding: str) -> str:
    """The file's text; its encoding, a NUL or an empty file refused, naming the file."""
    text, _ = _decode(path, Path(real).read_bytes(), encoding)
    if not text or text.isspace():  # (isspace: no copy of a large file)
        raise ImportFileError("the file is empty", path=path)
    return text


def _is_utf8(encoding: str) -> bool:
    """Whether ``encoding`` names UTF-8 as the careful path's decoder would take it."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        return False  # the careful path names it
    return encoding.lower().replace("-", "") in ("utf8", "utf8sig")


def _read_utf8_csv(path: str, real: str, encoding: str) -> Table | None:
    """A UTF-8 CSV file read by Arrow alone, or ``None``: the careful path then reads it.

    Arrow checks that every cell is valid UTF-8, so a file that parses is not decoded in
    Python too. A file Arrow may not take (a NUL byte, another encoding's byte-order mark, a
    refusal) goes the careful way; a header Arrow refuses, or no rows, is reported only once
    the file has passed the careful path's own checks (encoding, NUL, empty), so each file
    gets the message it got when every file was decoded first.
    """
    import mmap

    import pyarrow as pa

    with open(real, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
            return None
        marked = _marked_encoding(file.read(4))
        bom = marked == "utf-8"  # a UTF-8 mark wins over ``encoding``
        if not bom and (marked is not None or not _is_utf8(encoding)):
            return None
        if info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            # Mapped, not copied. Only a file no one else may write: one truncated under the
            # parse kills the process (SIGBUS), and the app serves every session. The parsed
            # table holds copies; the mapping goes with the last reference to ``data``.
            data = pa.py_buffer(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ))
        else:
            file.seek(0)
            data = pa.py_buffer(file.read())
    if bom:
        data = data.slice(len(codecs.BOM_UTF8))
    if not data.size or _holds_nul(data):
        return None
    try:
        table = _read_csv_fast(path, data)
    except ImportFileError:
        _text_of(path, real, encoding)
        raise
    if table is not None and not table.n_rows:
        _text_of(path, real, encoding)
    return table


def _holds_nul(data: pa.Buffer) -> bool:
    import numpy as np

    return bool(np.frombuffer(memoryview(data), dtype=np.uint8).min() == 0)


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


def _refused(path: str, row: int, error: JsonValueError, text: str, position: int,
             line: int | None = None) -> ImportFileError:
    where = f"line {line} " if line is not None else ""
    return ImportFileError(
        f"{where}{error}", path=path, row=row,
        column=locate_column(text, position) or error.key,
    )


def _read_jsonl(path: str, text: str) -> Table:
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = strict_json_loads(line)
        except json.JSONDecodeError as error:
            raise ImportFileError(
                f"line {number} is not valid JSON ({error.msg} at character {error.colno})",
                path=path,
                row=len(rows) + 1,
            ) from None
        except JsonValueError as error:
            start = len(line) - len(line.lstrip())
            raise _refused(path, len(rows) + 1, error, line, start, number) from None
        if not isinstance(value, dict):
            raise ImportFileError(
                f"line {number} is {_json_kind(value)}, not an object",
                path=path,
                row=len(rows) + 1,
            )
        rows.append(value)
        lines.append(number)
    return Table.from_records(path, rows, lines)


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _json_syntax(path: str, error: json.JSONDecodeError, row: int | None = None) -> ImportFileError:
    return ImportFileError(
        f"not valid JSON ({error.msg} at line {error.lineno}, character {error.colno})",
        path=path,
        row=row,
    )


def _decode_records(path: str, text: str, position: int) -> list[Any]:
    """The elements of the JSON list at ``text[position]``.

    They are decoded one record at a time, so every refusal names its row.
    """
    records: list[Any] = []
    position = _skip_space(text, position + 1)
    if position < len(text) and text[position] == "]":
        return records
    while True:
        row = len(records) + 1
        try:
            value, position = decode_record(text, position)
        except json.JSONDecodeError as error:
            raise _json_syntax(path, error, row) from None
        except JsonValueError as error:
            raise _refused(path, row, error, text, position) from None
        records.append(value)
        position = _skip_space(text, position)
        if position < len(text) and text[position] == ",":
            position = _skip_space(text, position + 1)
            continue
        if position < len(text) and text[position] == "]":
            break
        expected = "Expecting ',' delimiter" if position < len(text) else "Unterminated list"
        raise _json_syntax(path, json.JSONDecodeError(expected, text, position), row)
    rest = _skip_space(text, position + 1)
    if rest < len(text):
        raise _json_syntax(path, json.JSONDecodeError("Extra data", text, rest))
    return records


def _records_at(path: str, value: Any, records: str) -> Any:
    """The list ``--records`` names inside the file's top-level JSON value."""
    steps = parse_path(records)
    try:
        found = resolve(value, steps, strict=True)
    except PathError as error:
        lists = record_lists(value)
        known = ", ".join(f"{p} ({n})" for p, n in lists[:10]) or "none"
        raise ImportFileError(
            f"--records {shown(records)}: {error} (lists of records in the file: {known})",
            path=path,
        ) from None
    if not isinstance(found, list):
        raise ImportFileError(
            f"--records {shown(records)} is {_json_kind(found)}, not a list of records",
            path=path,
        )
    return found


def _read_json(path: str, text: str, records: str | None = None) -> Table:
    start = _skip_space(text, 0)
    if records is None and text.startswith("[", start):
        value: Any = _decode_records(path, text, start)
    else:
        try:
            value = strict_json_loads(text)
        except json.JSONDecodeError as error:
            raise _json_syntax(path, error) from None
        except JsonValueError as error:
            raise ImportFileError(str(error), path=path) from None
    return _json_table(path, value, records)


def _json_table(path: str, value: Any, records: str | None = None) -> Table:
    """The records of a JSON value: a list, the list ``records`` names, or a tool's list."""
    tool = None
    if records is not None:
        value = _records_at(path, value, records)
    elif (found := records_path(value)) is not None:
        tool = found[0]
        value = resolve(value, parse_path(found[1]))
    elif isinstance(value, dict) and isinstance(value.get("data"), list):
        value = value["data"]
    if not isinstance(value, list):
        lists = record_lists(value)
        hint = (
            f"; its lists of records: {', '.join(f'{p} ({n})' for p, n in lists[:10])}: name "
            f"one with --records PATH (e.g. --records {lists[0][0]})" if lists else ""
        )
        raise ImportFileError(
            f"expected a JSON list of records, got {_json_kind(value)}{hint}", path=path
        )
    for index, record in enumerate(value):
        if not isinstance(record, dict):
            raise ImportFileError(
                f"is {_json_kind(record)}, not an object", path=path, row=index + 1
            )
    table = Table.from_records(path, value)
    table.tool = tool
    return table



def read_table(
    path: str | Path, *, format: str | None = None, encoding: str = "utf-8",
    display_name: str | None = None, records: str | None = None,
) -> Table:
    """Read ``path`` into a :class:`Table`; any problem raises :class:`ImportFileError`.

    Args:
        path: the file.
        format: ``csv``, ``jsonl``, ``json`` or ``parquet`` (default from the extension).
        encoding: the text encoding of CSV/JSON files (a byte-order mark wins).
        display_name: how messages (and :attr:`Table.path`) name the file; an upload's own
            name, so a message never shows the server's temporary path. Default: ``path``.
        records: where the records are in a JSON file whose top level is an object, as a path
            (``data.items``, ``results.results``; see :mod:`labels.record_paths`).
    """
    name = display_name or str(path)
    fmt = detect_format(name, format)
    if records is not None and fmt != "json":
        raise ImportFileError(
            f"--records names a list inside a JSON file; this is a {fmt} file", path=name
        )
    try:
        fd = open_regular(path, name)
    except FileNotFoundError:
        raise ImportFileError("no such file", path=name) from None
    except PermissionError:
        raise ImportFileError("permission denied", path=name) from None
    try:
        # The file opened and checked, read again by its descriptor's name: what is read is
        # what was checked, even if the name is swapped for a FIFO in between.
        by_fd = f"/proc/self/fd/{fd}"
        return _read_table(by_fd if os.path.exists(by_fd) else str(path), name, fmt, encoding,
                           records)
    finally:
        os.close(fd)


_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory",
}


def open_regular(path: str | Path, name: str | None = None) -> int:
    """A read-only descriptor of ``path`` once it is known to be a regular file.

    Opened without blocking (a FIFO would wait for a writer forever) and checked with
    ``fstat``: a FIFO, device (``/dev/zero`` never ends), socket or directory is refused
    before a byte is read. The caller closes the descriptor.

    Raises:
        ImportFileError: naming the file (``name``, default ``path``) and what it is.
        OSError: it cannot be opened (``FileNotFoundError``, ``PermissionError`` …).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        if error.errno != errno.ENXIO:  # a socket cannot be opened at all
            raise
        info = os.stat(path)
    else:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            os.set_blocking(fd, True)
            return fd
        os.close(fd)
    if not stat.S_ISREG(info.st_mode):
        kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
        what = "a directory, not a file" if kind == "a directory" else (
            f"{kind}, not a regular file; only regular files are read")
        raise ImportFileError(f"is {what}", path=name or str(path))
    raise ImportFileError("cannot be opened as a file", path=name or str(path))


def read_regular_text(path: str | Path, encoding: str = "utf-8") -> str:
    """The text of ``path``, read only if it is a regular file (see :func:`open_regular`).

    For the small files the CLI names: judge configs, cards, price lists.
    """
    fd = open_regular(path)
    with os.fdopen(fd, "rb") as handle:
        return handle.read().decode(encoding)


_EVAL_FIELDS_LEFT_OUT = {"messages", "events", "store", "attachments"}
"""What an inspect sample holds that no row needs: the transcript, events and attachments."""


def _read_eval_log(real: str, name: str, limits: ReadLimits | None = None) -> Table:
    """The samples of an inspect_ai ``.eval`` log, read by inspect's own ``read_eval_log``.

    The archive's listed sizes are checked first (a zip inflates: a small file can promise
    gigabytes); inspect then reads it, leaving out the transcripts, and the log is the same
    JSON value a ``.json`` log holds.
    """
    import zipfile

    limits = limits if limits is not None else ReadLimits()
    try:
        with zipfile.ZipFile(real) as archive:
            size = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError) as error:
        raise ImportFileError(f"not a readable inspect_ai .eval log (a zip archive: {error})",
                              path=name) from None
    if size > limits.max_uncompressed_mb * 1024 * 1024:
        raise ImportFileError(
            f"the log inflates to {size / 1024 / 1024:,.1f} MB, more than the limit of "
            f"{limits.max_uncompressed_mb:,.0f} MB (CALIBRATE_MAX_UNCOMPRESSED_MB); nothing "
            "was read", path=name)
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(real, format="eval", exclude_fields=_EVAL_FIELDS_LEFT_OUT)
    except Exception as error:  # inspect's own (zip, JSON, validation): the file is bad
        reason = shown(str(error).replace(real, name), 120)
        raise ImportFileError(f"inspect_ai cannot read this .eval log "
                              f"({type(error).__name__}: {reason})", path=name) from None
    return _json_table(name, log.model_dump(mode="json", exclude_none=True))


def _read_table(
    real: str, name: str, fmt: str, encoding: str, records: str | None = None
) -> Table:
    try:
        if fmt == "eval":
            table = _read_eval_log(real, name)
        elif fmt == "parquet":
            table = _read_parquet(real, name)
        else:
            fast = _read_utf8_csv(name, real, encoding) if fmt == "csv" else None
            if fast is not None:
                table = fast
            else:
                text = _text_of(name, real, encoding)
                if fmt == "json":
                    table = _read_json(name, text, records)
                else:
                    table = (_read_csv if fmt == "csv" else _read_jsonl)(name, text)
    except FileNotFoundError:
        raise ImportFileError("no such file", path=name) from None
    except IsADirectoryError:
        raise ImportFileError("is a directory, not a file", path=name) from None
    except PermissionError:
        raise ImportFileError("permission denied", path=name) from None
    if not table.n_rows:
        raise ImportFileError("the file has a header but no rows", path=name)
    return table



# Table and ArrowColumns (labels.table) and check_parquet_size (labels.reading_parquet) are
# named here too: every reader of a file imports them from where it imports read_table.
__all__ = ["FILE_FORMATS", "MAX_CELL_CHARS", "ArrowColumns", "FileImportSummary", "Table",
           "check_parquet_size", "detect_format", "open_regular", "read_regular_text",
           "read_table"]
