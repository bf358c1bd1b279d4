"""Settings read from a ``.env`` file only when it is yours alone.

A settings file decides where the API key is sent (``CALIBRATE_OPENAI_BASE_URL``), who may reach
the app (``CALIBRATE_APP_HOST``, ``CALIBRATE_ACCESS_CODE``) and which database is used. A ``.env``
in a shared working folder may have been planted by another local user, so:

* the file is ``$CALIBRATE_ENV_FILE`` when set (``calibrate --env-file PATH`` sets it), else
  ``.env`` in the working folder;
* either is read only when :func:`labels.private_files.check_private_file` accepts it: owned by
  this user, not writable by group or others, in a folder others cannot change; else
  :class:`~labels.errors.UnsafeFileError` names the file and the fix, and nothing is read.

The environment itself is the user's, so variables there are always read (and win over the
file). Every settings class of `calibrate` derives from :class:`PrivateSettings`.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from labels.errors import CalibrateError
from labels.private_files import check_private_file

ENV_FILE_VARIABLE = "CALIBRATE_ENV_FILE"
"""Names the settings file to read instead of ``./.env`` (set by ``--env-file``)."""

_FIX = (
    "A settings file decides where your API key is sent and who may connect to the app, so "
    "only one that is yours alone is read. If this one is yours, make it private (chmod 600, "
    "and no group or other write on its folder); else remove it, or name your own with "
    f"--env-file PATH (or {ENV_FILE_VARIABLE})."
)


def settings_file() -> Path | None:
    """The settings file to read, checked; ``None`` when there is none.

    Raises:
        UnsafeFileError: the file, or its folder, could have been written by someone else.
        CalibrateError: ``$CALIBRATE_ENV_FILE`` names a file that does not exist.
    """
    named = os.environ.get(ENV_FILE_VARIABLE)
    path = Path(os.path.abspath(named or ".env"))
    if not check_private_file(path, "the settings file", _FIX):
        if named:
            raise CalibrateError(
                f"the settings file {path} ({ENV_FILE_VARIABLE} or --env-file) does not exist"
            )
        return None
    return path


class PrivateSettings(BaseSettings):
    """Settings from the environment, then from :func:`settings_file` (never another ``.env``)."""

    model_config = SettingsConfigDict(
        env_prefix="CALIBRATE_", env_file_encoding="utf-8", extra="ignore"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments, the environment, then the checked settings file; nothing else."""
        checked = DotEnvSettingsSource(settings_cls, env_file=settings_file())
        return init_settings, env_settings, checked


__all__ = ["ENV_FILE_VARIABLE", "PrivateSettings", "settings_file"]
