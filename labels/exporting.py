"""Write labels (or any table of untrusted text) to CSV, Parquet or JSONL."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from labels.errors import CalibrateError

EXPORT_FORMATS = (".csv", ".parquet", ".jsonl")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formula(value: object) -> object:
    """Prefix a text cell that a spreadsheet would run as a formula with ``'``.

    Row text is untrusted: a cell such as ``=HYPERLINK("http://…")`` opened in a spreadsheet
    would run. OWASP's advice for CSV injection is this prefix.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def write_table(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write ``frame`` to ``path`` by its extension, atomically (a temp file, then a rename).

    CSV cells that start like a spreadsheet formula are neutralised.
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
            safe = frame.copy()
            for column in safe.columns:
                if safe[column].dtype == object or pd.api.types.is_string_dtype(safe[column]):
                    safe[column] = safe[column].map(neutralise_formula)
            safe.to_csv(tmp_name, index=False)
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
