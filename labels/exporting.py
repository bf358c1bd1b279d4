"""Write labels (or any table of untrusted text) to CSV, Parquet or JSONL."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pandas as pd

from labels.errors import CalibrateError

EXPORT_FORMATS = (".csv", ".parquet", ".jsonl")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Where a spreadsheet may start a cell: the start of the text and after every CR or LF (a
# program that splits lines before it parses CSV starts a row there).
_LINE_START = re.compile(r"(?:^|(?<=[\r\n]))(?=[=+\-@\t\r])")
CSV_LINE_END = "\r\n"
"""CSV rows end in CRLF (RFC 4180), so every cell holding a CR or LF is quoted."""


def neutralise_formula(value: object) -> object:
    r"""Prefix each line of a text cell that a spreadsheet would run as a formula with ``'``.

    Row text is untrusted: a cell such as ``=HYPERLINK("http://…")`` opened in a spreadsheet
    would run. OWASP's advice for CSV injection is this prefix; it goes before the cell and
    before every line inside it that starts with a trigger (``= + - @``, tab, CR), so a note
    ``ok\r=cmd|…`` cannot start a formula in a program that splits it into lines.

    >>> neutralise_formula("ok\r=cmd|' /C calc'!A0")
    "ok\r'=cmd|' /C calc'!A0"
    """
    if isinstance(value, str) and (
        value.startswith(_FORMULA_START) or "\n" in value or "\r" in value
    ):
        return _LINE_START.sub("'", value)
    return value


def write_csv(frame: pd.DataFrame, path: str | Path) -> None:
    """``frame`` as CSV safe in a spreadsheet: formulas neutralised, CR/LF cells quoted."""
    safe = frame.copy()
    for column in safe.columns:
        if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
            safe[column] = safe[column].map(neutralise_formula)
    safe.to_csv(path, index=False, lineterminator=CSV_LINE_END)


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` by its extension, atomically (a temp file, then a rename).

    CSV is written by :func:`write_csv` (formulas neutralised, CR/LF cells quoted). The file
    is created ``0600`` (``mkstemp``).
    """
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in EXPORT_FORMATS:
        raise CalibrateError(
            f"{target}: unknown export format {suffix or '(none)'!r}; use "
            f"{', '.join(EXPORT_FORMATS)}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=suffix)
    os.close(fd)
    try:
        if suffix == ".csv":
            write_csv(frame, tmp_name)
        elif suffix == ".parquet":
            frame.to_parquet(tmp_name, index=False)
        else:
            frame.to_json(
                tmp_name, orient="records", lines=True, force_ascii=False, date_format="iso"
            )
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target
