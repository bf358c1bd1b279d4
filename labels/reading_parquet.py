"""Parquet files: refused before they are read when their footer promises too much.

A Parquet file's footer says how many rows it holds and how many bytes its pages take once
decompressed; :func:`check_parquet_size` counts the decoded size from that without decoding
(a small file can index one long string a million times), so a hostile file is refused
before pyarrow expands it. :mod:`labels.reading` reads the other formats and calls this one.
"""

from __future__ import annotations

from typing import Any

from labels.errors import ImportFileError
from labels.limits import ReadLimits
from labels.table import Table

__all__ = ["check_parquet_size"]


_FIXED_WIDTH = {"BOOLEAN": 1, "INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12}
_UNCHECKABLE_ENCODINGS = {"DELTA_BYTE_ARRAY"}
"""Encodings whose decoded size cannot be known without decoding (prefix-coded strings: a value
may repeat all of the one before it for a few bytes)."""


def _dictionary_bytes(array: Any) -> int:
    """Bytes the strings of ``array`` take once decoded, counted from its dictionary.

    ``array`` is read with ``read_dictionary``: its strings are indices into a dictionary, and
    nothing is expanded (a 9 KB file can index one 8 KB string 1,000,000 times: 8 GB).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        return sum(_dictionary_bytes(chunk) for chunk in array.chunks)
    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = pc.binary_length(array.dictionary)
        total = pc.sum(pc.take(lengths, array.indices)).as_py()
        return int(total or 0) + 4 * len(array)  # and an offset per value
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return _dictionary_bytes(array.flatten())
    if pa.types.is_struct(kind):
        return sum(_dictionary_bytes(array.field(i)) for i in range(kind.num_fields))
    if pa.types.is_map(kind):
        return _dictionary_bytes(array.keys) + _dictionary_bytes(array.items)
    return 0


def _decoded_bytes(path: str, parquet: Any) -> tuple[int, str | None]:
    """Bytes the file's columns take once decoded, and an encoding that cannot be checked.

    Fixed-width values count their width per value; strings without a dictionary what their
    pages hold uncompressed; dictionary-encoded strings are counted from their dictionary
    and indices (read as such, never expanded).
    """
    import pyarrow.parquet as pq

    meta = parquet.metadata
    total = 0
    dictionary_columns: set[str] = set()
    for group in range(meta.num_row_groups):
        row_group = meta.row_group(group)
        for c in range(row_group.num_columns):
            column = row_group.column(c)
            uncheckable = _UNCHECKABLE_ENCODINGS & set(column.encodings)
            if uncheckable:
                return total, f"{column.path_in_schema} ({sorted(uncheckable)[0]})"
            kind = column.physical_type
            if kind in _FIXED_WIDTH:
                total += column.num_values * _FIXED_WIDTH[kind]
            elif kind == "FIXED_LEN_BYTE_ARRAY":
                length = meta.schema.column(c).length or 0
                total += column.num_values * max(length, 1)
            elif column.has_dictionary_page:
                dictionary_columns.add(column.path_in_schema)
            else:
                total += column.total_uncompressed_size
    if dictionary_columns:
        paths = sorted(dictionary_columns)
        with pq.ParquetFile(path, read_dictionary=paths) as encoded:
            for group in range(meta.num_row_groups):
                table = encoded.read_row_group(group, columns=paths)
                total += sum(_dictionary_bytes(column) for column in table.columns)
    return total, None


def check_parquet_size(
    path: str, limits: ReadLimits | None = None, *, name: str | None = None
) -> None:
    """Refuse a Parquet file that promises more rows or bytes than ``limits`` allow.

    The footer (the file's metadata) says how many rows, and how many bytes the pages take
    once decompressed; the decoded size is counted without decoding: fixed-width values by
    their width, strings by their pages or, when dictionary-encoded, from the dictionary and
    the indices (read as such, never expanded). A file that would inflate to gigabytes is
    refused in milliseconds, with a few MB read. ``name`` is how messages name the file
    (default ``path``).
    """
    shown_path = name or path
    import pyarrow as pa
    import pyarrow.parquet as pq

    limits = limits if limits is not None else ReadLimits()
    limit = limits.max_uncompressed_mb * 1024 * 1024
    try:
        with pq.ParquetFile(path) as parquet:
            meta = parquet.metadata
            rows = meta.num_rows
            size = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
            if rows > limits.max_rows or size > limit:
                decoded, uncheckable = 0, None
            else:
                decoded, uncheckable = _decoded_bytes(path, parquet)
    except (pa.ArrowException, OSError) as error:
        reason = str(error).replace(path, shown_path)  # never the server's own path
        raise ImportFileError(f"not a readable Parquet file ({reason})", path=shown_path) from None
    if rows > limits.max_rows:
        raise ImportFileError(
            f"holds {rows:,} rows, more than the limit of {limits.max_rows:,} "
            "(CALIBRATE_MAX_ROWS); nothing was read", path=shown_path,
        )
    # Two sizes answer to the one limit: the pages decompressed, and the values decoded.
    over = (f", more than the limit of {limits.max_uncompressed_mb:,.0f} MB "
            "(CALIBRATE_MAX_UNCOMPRESSED_MB); nothing was read")
    if size > limit:
        raise ImportFileError(f"its column data takes {size / 1024 / 1024:,.1f} MB uncompressed"
                              f"{over}", path=shown_path)
    if uncheckable is not None:
        raise ImportFileError(
            f"column {uncheckable} uses an encoding whose decoded size cannot be checked "
            "before it is read; write the file again with the default encodings (e.g. pandas' "
            "to_parquet); nothing was read", path=shown_path,
        )
    if decoded > limit:
        raise ImportFileError(
            f"its columns decode to {decoded / 1024 / 1024:,.1f} MB (dictionary-encoded values "
            f"repeated){over}", path=shown_path,
        )


def _first_nul(table: Any) -> tuple[int, str] | None:
    """``(row index, column)`` of the first string holding a NUL, as a CSV file may not."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for name, column in zip(table.column_names, table.columns, strict=True):
        values = column
        while pa.types.is_list(values.type) or pa.types.is_large_list(values.type):
            values = pa.chunked_array([chunk.flatten() for chunk in values.chunks],
                                      type=values.type.value_type)
        if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
            continue
        if not pc.any(pc.match_substring(values, "\x00")).as_py():
            continue
        if values is column:
            return int(pc.index(pc.match_substring(column, "\x00"), True).as_py()), name
        for index, cell in enumerate(column.to_pylist()):  # a list column: find the row
            if any("\x00" in str(v) for v in (cell or [])):
                return index, name
    return None


def _read_parquet(path: str, name: str) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_parquet_size(path, name=name)
    try:
        table = pq.read_table(path)
    except FileNotFoundError:
        raise
    except (pa.ArrowException, OSError) as error:
        reason = str(error).replace(path, name)  # never the server's own path
        raise ImportFileError(f"not a readable Parquet file ({reason})", path=name) from None
    nul = _first_nul(table)
    if nul is not None:
        raise ImportFileError(
            "holds a NUL character, which is not text (a CSV or JSON file may not hold one "
            "either)", path=name, row=nul[0] + 1, column=nul[1],
        )
    columns = {column: table.column(column).to_pylist() for column in table.column_names}
    return Table(name, table.column_names, columns, table.num_rows)
