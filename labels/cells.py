"""Checks on single cells shared by the importers: required text, numbers as text, type names.

Every failure is an :class:`~labels.errors.ImportFileError` naming the file, row and column.
"""

from __future__ import annotations

import math
from typing import Any

from labels.reading import MAX_CELL_CHARS, Table


def is_missing(value: Any) -> bool:
    """True for an empty cell: ``None``, NaN or ``""``."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or value == ""


def text_cell(table: Table, index: int, column: str, value: Any, *, required: bool) -> str | None:
    """Cell ``value`` (record ``index`` of ``column``) as text; numbers are written as text.

    Raises:
        ImportFileError: the cell is empty but ``required``, is not text or a number, or holds
            more than :data:`~labels.reading.MAX_CELL_CHARS` characters.
    """
    if is_missing(value):
        if required:
            raise table.error("is empty but is required", index, column)
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise table.error(f"must be text, got {type_name(value)}", index, column)
    if isinstance(value, float) and not math.isfinite(value):
        raise table.error(f"must be text, got the number {value}", index, column)
    text = value if isinstance(value, str) else _number_text(table, index, column, value)
    if len(text) > MAX_CELL_CHARS:
        raise table.error(
            f"holds {len(text):,} characters; the limit is {MAX_CELL_CHARS:,} per cell",
            index, column,
        )
    return text


def _number_text(table: Table, index: int, column: str, value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    try:
        return str(value)
    except ValueError:  # Python refuses to write integers of more than 4,300 digits
        raise table.error("holds an integer too long to write as text", index, column) from None


def type_name(value: Any) -> str:
    """``an object``, ``a list``, ``true/false`` …: a value's type in words."""
    return {dict: "an object", list: "a list", bool: "true/false", str: "text"}.get(
        type(value), f"a {type(value).__name__}"
    )
