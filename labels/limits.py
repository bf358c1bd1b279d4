"""How much a data file may expand to when it is read, whoever asks (CLI, app, Python API).

A small file can promise a lot: a 16 KB Parquet file can hold 3,000,000 dictionary-encoded rows,
and a zstd page can inflate a thousandfold. Reading such a file first and checking afterwards
costs minutes and gigabytes, so :func:`labels.reading.check_parquet_size` checks the promise in
the file's footer against these limits before a single page is read.
"""

from __future__ import annotations

from pydantic import Field

from labels.settings_files import PrivateSettings


class ReadLimits(PrivateSettings):
    """Limits on one file, read from the environment or a private ``.env``.

    ``CALIBRATE_MAX_ROWS`` and ``CALIBRATE_MAX_UNCOMPRESSED_MB`` override the defaults (see
    :mod:`labels.settings_files` for which settings file is read).
    """

    max_rows: int = Field(
        default=1_000_000, ge=1, description="rows one Parquet file may hold"
    )
    max_uncompressed_mb: float = Field(
        default=1024.0, gt=0,
        description="MB the column data of one Parquet file may take once decompressed, and "
        "once decoded (dictionary-encoded values expanded)",
    )
