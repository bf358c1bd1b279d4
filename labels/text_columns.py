"""Whole-column checks on Arrow text, for the importer's vectorised path.

Each check reads a string column's UTF-8 bytes as one NumPy array and answers per row, with no
Python per row: which characters JSON escapes a column holds, and which sources cells are JSON
lists of plain strings written the way ``json.dumps`` writes them (the rows whose canonical form
the store can write with plain string replacements). A row a check does not clear takes the
careful per-row path, which gives the same text or the precise error.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

_QUOTE, _BACKSLASH, _COMMA, _SPACE = ord('"'), ord("\\"), ord(","), ord(" ")
_OPEN, _CLOSE = ord("["), ord("]")


def utf8_bytes(column: pa.Array[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(offsets, data)``: row ``i`` is ``data[offsets[i]:offsets[i + 1]]`` (a null is empty)."""
    import pyarrow as pa

    if column.type not in (pa.string(), pa.large_string()):
        column = column.cast(pa.large_string())
    width = np.int64 if column.type == pa.large_string() else np.int32
    _, offsets_buffer, data_buffer = column.buffers()
    assert offsets_buffer is not None  # a string array always has offsets
    first = column.offset
    offsets = np.frombuffer(cast(Any, offsets_buffer), dtype=width)[first:first + len(column) + 1]
    offsets = offsets.astype(np.int64)
    if data_buffer is None or not len(column):
        return np.zeros(len(column) + 1, dtype=np.int64), np.zeros(0, dtype=np.uint8)
    # Only this array's bytes (a slice shares a longer buffer), counted from its first row.
    data = np.frombuffer(cast(Any, data_buffer), dtype=np.uint8)[offsets[0]:offsets[-1]]
    return offsets - offsets[0], data


def _rows_of(offsets: np.ndarray, positions: np.ndarray) -> np.ndarray:
    return np.searchsorted(offsets, positions, side="right") - 1


def _chunks(column: pa.Array[Any] | pa.ChunkedArray[Any]) -> list[pa.Array[Any]]:
    return list(column.chunks) if hasattr(column, "chunks") else [column]


def json_escaped_bytes(column: pa.Array[Any] | pa.ChunkedArray[Any]) -> list[int]:
    r"""The distinct bytes the column's strings hold that JSON escapes: ``"``, ``\``, below 0x20.

    In UTF-8 each such byte is always that character (never part of a longer one). Most
    columns hold none, or only a newline: their JSON text needs no replacement, or one.
    """
    found: set[int] = set()
    for chunk in _chunks(column):
        _, data = utf8_bytes(chunk)
        found.update(np.unique(data[(data < 0x20) | (data == _QUOTE) | (data == _BACKSLASH)])
                     .tolist())
    return sorted(found)


def plain_string_lists(
    column: pa.Array[Any] | pa.ChunkedArray[Any], max_bytes: int
) -> tuple[np.ndarray, np.ndarray]:
    """Which cells are ``["a", "b"]`` (or ``["a","b"]``, or ``[]``): ``(plain, compact)``.

    ``plain``: the cell is a JSON list of strings with no escape, no control character, no
    space outside the strings other than ``", "`` separators, at most ``max_bytes`` long, and
    all its separators alike; ``compact``: those separators are ``","``. For such a cell each
    string's text is exactly what stands between its quotes, and JSON writes it back the same.
    """
    parts = [_plain_lists(chunk, max_bytes) for chunk in _chunks(column)]
    if not parts:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    return (np.concatenate([p for p, _ in parts]), np.concatenate([c for _, c in parts]))


def _plain_lists(column: pa.Array[Any], max_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    offsets, data = utf8_bytes(column)
    n = len(column)
    starts, ends = offsets[:-1], offsets[1:]
    length = ends - starts
    plain = (length >= 2) & (length <= max_bytes)
    if not data.size:
        return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    plain &= (data[np.minimum(starts, data.size - 1)] == _OPEN)
    plain &= (data[np.maximum(ends - 1, 0)] == _CLOSE)
    plain[_rows_of(offsets, np.flatnonzero((data < 0x20) | (data == _BACKSLASH)))] = False
    quotes = np.flatnonzero(data == _QUOTE)
    quote_row = _rows_of(offsets, quotes)
    counts = np.bincount(quote_row, minlength=n)
    plain &= (counts % 2 == 0) & ((counts > 0) | (length == 2))  # no quotes: exactly "[]"
    first = np.searchsorted(quote_row, np.arange(n))  # each row's first quote, in ``quotes``
    has = np.flatnonzero(plain & (counts > 0))
    plain[has] &= quotes[first[has]] == starts[has] + 1  # `["` ...
    plain[has] &= quotes[first[has] + counts[has] - 1] == ends[has] - 2  # ... `"]`
    # Between a closing quote and the next opening one: exactly "," or ", ".
    rank = np.arange(quotes.size) - first[quote_row]
    closing = np.flatnonzero((rank % 2 == 1) & (rank < counts[quote_row] - 1))
    gap = quotes[closing + 1] - quotes[closing]
    after = data[np.minimum(quotes[closing] + 1, data.size - 1)]
    second = data[np.minimum(quotes[closing] + 2, data.size - 1)]
    tight = (gap == 2) & (after == _COMMA)
    spaced = (gap == 3) & (after == _COMMA) & (second == _SPACE)
    rows = quote_row[closing]
    plain[rows[~(tight | spaced)]] = False
    compact = np.zeros(n, dtype=bool)
    compact[rows[tight]] = True
    mixed = np.zeros(n, dtype=bool)
    mixed[rows[spaced]] = True
    plain &= ~(compact & mixed)  # both kinds in one cell: the careful path
    return plain, compact & plain


__all__ = ["json_escaped_bytes", "plain_string_lists", "utf8_bytes"]
