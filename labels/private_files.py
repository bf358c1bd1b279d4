"""Files that are yours, or refused: the database, its WAL, settings files.

The model is OpenSSH's ``StrictModes``. On a machine shared with other local users, a file
someone else could have written is not evidence of anything: a write-ahead log planted beside
the database is absorbed into it at open, a ``.env`` in a shared folder can point the API key at
another server. So before such a file is used:

* the file must be owned by this user (the effective uid) and not writable by group or others;
* the folder holding it must be owned by this user or root and not writable by group or others,
  unless it has the sticky bit (``/tmp``: others may add files there, but not replace ours);

else :class:`~labels.errors.UnsafeFileError` says which file, what is wrong, and the fix.

:func:`private_umask` narrows the process umask so that what `calibrate` creates (the database,
the WAL DuckDB deletes and recreates at every checkpoint, exports, caches) is ``0600``.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from labels.errors import UnsafeFileError

_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def private_umask() -> None:
    """Mask the group and other bits of every file and folder this process creates from now on.

    Process-wide and kept: DuckDB recreates its WAL with the umask after every checkpoint, so a
    narrower umask only around the open would not cover it. The first call sets ``0o077`` at
    once (never a looser mask in between), the second restores owner bits a stricter umask had.
    """
    old = os.umask(0o077)
    if old | 0o077 != 0o077:
        os.umask(old | 0o077)


def _mode(info: os.stat_result) -> str:
    return f"{stat.S_IMODE(info.st_mode):04o}"


def _writers(info: os.stat_result) -> str:
    bits = info.st_mode & _OTHERS_WRITE
    names = {stat.S_IWGRP: "its group", stat.S_IWOTH: "every user"}
    return names.get(bits, "its group and every user")


def file_problem(info: os.stat_result) -> str | None:
    """Why a file with this ``stat`` is not this user's alone (``None`` when it is)."""
    me = os.geteuid()
    if info.st_uid != me:
        return f"is owned by uid {info.st_uid}, not by you (uid {me})"
    if info.st_mode & _OTHERS_WRITE:
        return f"can be written by {_writers(info)} (mode {_mode(info)})"
    return None


def folder_problem(info: os.stat_result) -> str | None:
    """Why a folder with this ``stat`` lets someone else replace its files (``None``: none)."""
    me = os.geteuid()
    if info.st_uid not in (0, me):
        return f"is owned by uid {info.st_uid}, who can replace the files in it"
    if info.st_mode & _OTHERS_WRITE and not info.st_mode & stat.S_ISVTX:
        return (f"can be written by {_writers(info)} (mode {_mode(info)}) without the sticky "
                "bit, so others can replace the files in it")
    return None


def _existing_folder(path: Path) -> Path:
    """``path``'s folder, or its nearest existing ancestor when the folder is still to be made."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def folders_of(path: str | Path) -> list[Path]:
    """The folders whose owners decide what ``path`` names: its own, and a link's target's."""
    given = Path(os.path.abspath(path))
    real = Path(os.path.realpath(path))
    folders = [_existing_folder(given)]
    if _existing_folder(real) not in folders:
        folders.append(_existing_folder(real))
    return folders


def check_folder(path: str | Path, what: str, fix: str) -> None:
    """Refuse ``path`` when a folder holding it lets someone else replace it.

    Args:
        path: the file (it need not exist yet).
        what: what the file is, for the message (``the database``).
        fix: what to do instead, for the message.

    Raises:
        UnsafeFileError: naming the folder, what is wrong with it, and ``fix``.
    """
    for folder in folders_of(path):
        try:
            info = os.stat(folder)
        except OSError:
            continue  # a folder that cannot even be searched: the open explains it
        problem = folder_problem(info)
        if problem:
            raise UnsafeFileError(
                f"Refusing to use {what} {path}: its folder {folder} {problem}. {fix}",
                path=str(path),
            )


def check_private_file(path: str | Path, what: str, fix: str) -> bool:
    """Refuse ``path`` unless it is this user's alone, in a folder no one else can change.

    Args:
        path: the file; a missing file passes (its folder is still checked).
        what: what the file is, for the message (``the settings file``).
        fix: what to do instead, for the message.

    Returns:
        Whether the file exists.

    Raises:
        UnsafeFileError: naming the file (or its folder), what is wrong, and ``fix``.
    """
    check_folder(path, what, fix)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable: the open that follows says so
    problem = file_problem(info)
    if problem:
        raise UnsafeFileError(f"Refusing to use {what} {path}: it {problem}. {fix}",
                              path=str(path))
    return True


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` as a new ``0600`` file (``mkstemp``), then rename it into place.

    A reader never sees half a file, and a failed write leaves the old file as it was.
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix,
                               dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


__all__ = [
    "check_folder", "check_private_file", "file_problem", "folder_problem", "folders_of",
    "private_umask", "write_text_atomic",
]
