"""Entry-point settings of the front ends: the database file, the app's address, the access code.

The CLI and the app read one :class:`AppSettings` at their entry point. It extends the judges'
provider :class:`~judges.settings.Settings` (keys, base URLs, local model), so the same object
is passed on to the runner.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr

from judges.settings import Settings


class AppSettings(Settings):
    """Provider settings plus what only a front end needs.

    Every field reads ``CALIBRATE_<FIELD>`` from the environment or a ``.env`` file in the
    working directory (e.g. ``CALIBRATE_DB_PATH``, ``CALIBRATE_ACCESS_CODE``).
    """

    db_path: Path = Field(default=Path("calibrate.duckdb"), description="the DuckDB file")
    lock_timeout: float = Field(
        default=5.0,
        ge=0,
        description="seconds a command waits for a database file another process holds",
    )
    access_code: SecretStr | None = Field(
        default=None, description="if set, the app asks for this code before showing anything"
    )
    app_host: str = "127.0.0.1"
    app_port: int = 8501
    max_upload_mb: int = Field(
        default=200, ge=1,
        description="largest file the app accepts as an upload (also Streamlit's "
        "server.maxUploadSize when started by `calibrate app`)",
    )
