"""Errors raised by the label store, meant to be shown to a person as they are."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class CalibrateError(Exception):
    """Base class for every error `calibrate` shows to a user as a plain message."""


class DatabaseLockedError(CalibrateError):
    """The DuckDB file is held by another process (DuckDB allows one process per file)."""


class DatabaseAccessError(CalibrateError):
    """This user may not open the DuckDB file (or create it in its folder)."""


class UnsafeFileError(DatabaseAccessError):
    """A file (or its folder) someone else could have written: refused before it is used.

    The message names the file, what is wrong (owner, mode, folder) and the fix. ``path`` is
    the file refused.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        """Keep the message and the file refused."""
        super().__init__(message)
        self.path = path


class StorageFullError(CalibrateError):
    """The disk holding the database is full: the write was not stored (the file is as before)."""


class DatabaseOpenError(CalibrateError):
    """A file cannot be opened as a DuckDB database (e.g. it is some other kind of file)."""


class ImportFileError(CalibrateError):
    """A file could not be imported. The message names the file, row and column."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        """Prefix ``message`` with where it happened.

        Args:
            message: what is wrong.
            path: the file.
            row: the 1-based data row.
            column: the column name.
        """
        where = []
        if path is not None:
            where.append(str(path))
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column '{column}'")
        prefix = ", ".join(where)
        super().__init__(f"{prefix}: {message}" if prefix else message)
        self.path = path
        self.row = row
        self.column = column
        self.reason = message


class NotFoundError(CalibrateError):
    """A named dataset, item, criterion or annotator does not exist."""


class AlreadyLabelledError(CalibrateError):
    """The annotator has labelled that item for that criterion already (``new_only`` saves)."""


class ConflictError(CalibrateError):
    """An import would change rows that already exist under the same id."""


class InvalidNameError(CalibrateError):
    """A dataset, judge, annotator or criterion name breaks the naming rule."""


def closest_name(name: str, known: Iterable[str]) -> str | None:
    """The known name closest to a mistyped ``name``, or ``None`` (see :func:`did_you_mean`).

    >>> closest_name("questoin", ["id", "question", "answer"])
    'question'
    """
    names = {str(k).lower(): str(k) for k in known if k is not None}
    close = difflib.get_close_matches(name.lower(), list(names), n=1)
    if not close or names[close[0]] == name:
        return None
    return names[close[0]]


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the known name closest to a mistyped ``name``, else ``""``.

    For the end of a not-found message. Close means :func:`difflib.get_close_matches`'s
    default similarity (0.6), compared case-insensitively; a name that matches exactly
    suggests nothing.

    >>> did_you_mean("demo-labeled", ["demo-labelled", "mtbench"])
    "; did you mean 'demo-labelled'?"
    >>> did_you_mean("zzz", ["demo-labelled"])
    ''
    """
    close = closest_name(name, known)
    return "" if close is None else f"; did you mean {close!r}?"
