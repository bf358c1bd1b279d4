"""Entry-point settings of the front ends: the database file, the app's address, the access code.

The CLI and the app read one :class:`AppSettings` at their entry point. It extends the judges'
provider :class:`~judges.settings.Settings` (keys, base URLs, local model), so the same object
is passed on to the runner.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

from judges.settings import Settings
from labels.private_files import check_private_file

STREAMLIT_FILES = ("config.toml", "secrets.toml")
"""What Streamlit reads from ``~/.streamlit/`` and ``./.streamlit/``: its options (including the
address it binds and the cross-origin checks) and secrets (the sign-in provider's)."""


def check_streamlit_files(cwd: str | Path | None = None) -> None:
    """Refuse to start Streamlit when a settings file it would read is not the user's alone.

    Streamlit reads ``config.toml`` and ``secrets.toml`` from the user's home and from the
    working folder; one planted by another local user could change the sign-in provider and
    its secrets, or the server's options. Each (or the folder it would be created in) must pass
    :func:`labels.private_files.check_private_file`.

    Raises:
        UnsafeFileError: naming the file, what is wrong, and the fix.
    """
    folders = [Path.home() / ".streamlit", Path(cwd or os.getcwd()) / ".streamlit"]
    fix = (
        "Streamlit would read it and take its options (the server's address and checks) and "
        "secrets (the sign-in provider's). If it is yours, make it private (chmod 600, and no "
        "group or other write on its folder); else remove it, or start the app from "
        "another folder."
    )
    for folder in folders:
        for name in STREAMLIT_FILES:
            check_private_file(folder / name, "Streamlit's settings file", fix)


class AppSettings(Settings):
    """Provider settings plus what only a front end needs.

    Every field reads ``CALIBRATE_<FIELD>`` from the environment or a private ``.env`` file
    (e.g. ``CALIBRATE_DB_PATH``, ``CALIBRATE_ACCESS_CODE``; see :mod:`labels.settings_files`).
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
    auth: Literal["local", "oidc"] = Field(
        default="local",
        description="local: one person's app (typed annotator names, optional access code); "
        "oidc: team mode, sign-in with the identity provider under [auth] in "
        ".streamlit/secrets.toml and roles from `calibrate users`",
    )
    session_hours: float = Field(
        default=12.0, gt=0,
        description="team mode: hours a sign-in lasts (from the provider's token issue time) "
        "before the app asks for a new one",
    )
    app_host: str = "127.0.0.1"
    app_port: int = 8501
    max_upload_mb: int = Field(
        default=200, ge=1,
        description="largest file the app accepts as an upload (also Streamlit's "
        "server.maxUploadSize when started by `calibrate app`)",
    )
