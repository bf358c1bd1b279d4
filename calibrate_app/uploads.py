"""Uploaded files: one private folder per browser session, deleted once the file is imported.

The importer reads files from disk, so an upload has to be written somewhere first. Anywhere
shared or predictable (``/tmp/calibrate-uploads/…``) lets another local user read the rows or
plant a file or symlink under the name the app will write. So each upload gets a fresh
``mkdtemp`` folder (mode 0700, owned by the app's user, checked), the file is created inside it
with ``O_EXCL | O_NOFOLLOW`` and mode 0600, and the folder is removed after the import (whether
it succeeded or not), when the upload is replaced or cleared, and when the browser session ends.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from labels.errors import CalibrateError

FOLDER_PREFIX = "calibrate-upload-"
_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


class UploadError(CalibrateError):
    """An upload cannot be accepted (too large, or an unusable name)."""


def safe_upload_name(name: str) -> str:
    """The browser-supplied ``name`` reduced to a plain file name (no folders, no ``..``)."""
    base = Path(name.replace("\\", "/")).name
    if base in ("", ".", "..") or "\x00" in base:
        raise UploadError(f"{name!r} is not a usable file name")
    return base


class UploadFolder:
    """The private folder holding one session's current upload (at most one file at a time)."""

    def __init__(self) -> None:
        """Start empty: nothing is written until :meth:`hold`."""
        self._lock = threading.Lock()
        self._folder: Path | None = None
        self._file: Path | None = None
        self._file_id: str | None = None

    @property
    def folder(self) -> Path | None:
        """The folder while an upload is held, else None."""
        return self._folder

    def hold(self, file_id: str, name: str, data: bytes) -> Path:
        """Write ``data`` as ``name`` into a new private folder (once per ``file_id``)."""
        with self._lock:
            if self._file_id == file_id and self._file is not None and self._file.exists():
                return self._file
            self._discard()
            file_name = safe_upload_name(name)
            folder = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
            info = folder.lstat()
            # mkdtemp creates the folder 0700 for us; verify rather than trust the umask/OS.
            if info.st_uid != os.geteuid() or stat.S_IMODE(info.st_mode) != 0o700:
                shutil.rmtree(folder, ignore_errors=True)
                raise UploadError(f"the temporary folder {folder} is not private; not writing")
            path = folder / file_name
            fd = os.open(path, _FILE_FLAGS, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            self._folder, self._file, self._file_id = folder, path, file_id
            return path

    def holds(self, path: str | Path) -> bool:
        """True when ``path`` is the upload this folder holds."""
        return self._file is not None and Path(path) == self._file

    def discard(self) -> None:
        """Delete the folder and the upload in it (nothing happens when there is none)."""
        with self._lock:
            self._discard()

    def _discard(self) -> None:
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
        self._folder = self._file = self._file_id = None


def check_upload_size(name: str, size: int, max_mb: int) -> None:
    """Refuse an upload of ``size`` bytes above ``max_mb`` megabytes, with a clear message."""
    if size > max_mb * 1024 * 1024:
        raise UploadError(
            f"{name} is {size / 1024 / 1024:,.1f} MB; uploads are limited to {max_mb} MB "
            "(CALIBRATE_MAX_UPLOAD_MB). Import bigger files with `calibrate import` on the "
            "server."
        )
