"""One DuckDB database file per process, shared safely by threads.

DuckDB connections are not thread-safe, and only one *process* may open a file (see the project's
FACTS notes). :class:`Database` holds the single process-wide connection and hands out a fresh
cursor per operation; every store method uses :meth:`Database.cursor` or
:meth:`Database.transaction`, so one ``Database`` can be shared by all threads of a process
(the Streamlit server's sessions, a judge run's workers).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from labels.errors import (
    DatabaseAccessError,
    DatabaseLockedError,
    DatabaseOpenError,
    StorageFullError,
    UnsafeFileError,
)
from labels.private_files import check_folder, file_problem, private_umask
from labels.stores.migrations import Migration, migrate, pending_migrations

if TYPE_CHECKING:
    import pandas as pd  # only for a type: opening a database loads no pandas

_PID = re.compile(r"\(PID (\d+)\)")
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}


def _describe_process(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "command unknown"
    words = [w.decode(errors="replace") for w in raw.split(b"\0") if w]
    command = " ".join(words)
    return command if len(command) <= 160 else command[:157] + "..."


def lock_message(path: str | Path, error: BaseException) -> str:
    """Say in plain words which process holds ``path`` and what to do about it."""
    match = _PID.search(str(error))
    if match:
        pid = int(match.group(1))
        holder = f"process {pid} ({_describe_process(pid)})"
        stop = f"stop it first (Ctrl+C in its terminal, or `kill {pid}`)"
    else:
        holder = "another process"
        stop = "stop that process first"
    return (
        f"The database {path} is open in {holder}. DuckDB lets only one process use a database "
        f"file at a time. If that is the calibrate app, {stop}, or run this command against "
        "another file with --db PATH (or CALIBRATE_DB_PATH)."
    )


def access_message(path: str | Path) -> str:
    """Say in plain words that this user may not open ``path``, whose it is, and what to do."""
    target = Path(path)
    what, owner = "the database", "not readable by this user"
    for candidate, name in ((target, "the database"), (target.parent, "its folder")):
        try:
            info = candidate.stat()
        except FileNotFoundError:
            continue
        except OSError:  # a folder on the way cannot even be searched
            break
        what, owner = name, f"owned by uid {info.st_uid}, mode {info.st_mode & 0o777:04o}"
        break
    return (
        f"Cannot open the database {path}: permission denied for this user (uid {os.getuid()}); "
        f"{what} is {owner}. Run calibrate as the user who owns it, or use another file with "
        "--db PATH (or CALIBRATE_DB_PATH)."
    )


def wal_path(path: str | Path) -> Path:
    """The write-ahead log DuckDB keeps beside the database file ``path``."""
    return Path(f"{path}.wal")


def check_database_files(path: str | Path) -> None:
    """Refuse a database, or a WAL beside it, that someone else could have written.

    Checked before DuckDB opens the file: DuckDB absorbs the WAL into the database at open,
    so a planted WAL would change what the database says without a trace (OpenSSH's
    ``StrictModes`` model, :mod:`labels.private_files`).

    Raises:
        UnsafeFileError: naming the file or folder, what is wrong, and the fix.
    """
    check_folder(
        path, "the database",
        "Keep the database in a folder only you can change (e.g. under your home folder), "
        "or pick another file with --db PATH (or CALIBRATE_DB_PATH).",
    )
    db, wal = Path(path), wal_path(path)
    fixes = {
        (db, "owner"): (
            "Someone else's database can say anything. If you trust its owner, copy it to a "
            f"file of your own (cp {db} mine.duckdb, then --db mine.duckdb), or run calibrate "
            "as its owner."
        ),
        (db, "mode"): (
            "Someone else may have changed it. If it is yours and you trust its content, make "
            f"it private: chmod 600 {db}"
        ),
        (wal, "owner"): (
            "DuckDB would absorb its writes into the database when it opens it. If you did not "
            f"make it, remove it (rm {wal}); it is not yours to replay."
        ),
        (wal, "mode"): (
            "Someone else may have written into it, and DuckDB would absorb it into the "
            f"database. If it is yours and you trust it, make it private: chmod 600 {wal}"
        ),
    }
    for file, what in ((db, "the database"), (wal, "the database's write-ahead log")):
        try:
            info = os.stat(file)
        except FileNotFoundError:
            continue
        except OSError:
            continue  # unreadable: DuckDB's open says so (access_message)
        problem = file_problem(info)
        if problem:
            kind = "owner" if info.st_uid != os.geteuid() else "mode"
            raise UnsafeFileError(
                f"Refusing to open {what} {file}: it {problem}. {fixes[(file, kind)]}",
                path=str(file),
            )


def _same_file_other_config(error: BaseException) -> bool:
    return isinstance(error, duckdb.ConnectionException) and "different configuration" in str(
        error
    )


_NO_SPACE = ("no space left on device", "disk is full", "disk full", "quota exceeded")


def storage_full(path: str, error: BaseException) -> StorageFullError | None:
    """A plain message when ``error`` is DuckDB failing to write for lack of disk space."""
    text = str(error)
    if not isinstance(error, duckdb.Error) or not any(w in text.lower() for w in _NO_SPACE):
        return None
    return StorageFullError(
        f"the disk holding the database {path} is full (DuckDB: {text.splitlines()[0][:200]}); "
        "nothing of this change was stored and the database is as it was. Free some space "
        "there, or use a database on another disk (--db PATH), then run the command again."
    )


def is_lock_error(error: BaseException) -> bool:
    """True when ``error`` is DuckDB refusing a file another process holds."""
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


def held_by_another_process(path: str | Path) -> bool:
    """True when another process holds the DuckDB file ``path`` open (a probe: open, close).

    The probe opens the file read-only, and not at all when :func:`check_database_files`
    refuses it (the command that follows then says why).
    """
    try:
        check_database_files(path)
        con = duckdb.connect(str(path), read_only=True, config=dict(_CONFIG))
    except UnsafeFileError:
        return False
    except duckdb.Error as error:
        return is_lock_error(error)
    con.close()
    return False


def equal_conditions(columns: Mapping[str, object]) -> tuple[list[str], list[Any]]:
    """``column = ?`` conditions and their parameters for the columns given a value.

    ``None`` means any value; ``["true"]`` when no column is given one. The column names come
    from code, never from input.
    """
    given = {column: value for column, value in columns.items() if value is not None}
    return [f"{column} = ?" for column in given] or ["true"], list(given.values())


class Database:
    """A DuckDB file opened once for this process.

    A file database is checked before it is opened (:func:`check_database_files`), and the
    process umask is narrowed (:func:`labels.private_files.private_umask`), so the file and
    the WAL DuckDB keeps beside it are created ``0600``.

    Args:
        path: the database file; ``":memory:"`` for a throwaway database.
        lock_timeout: seconds to keep retrying while another process holds the file before
            raising :class:`~labels.errors.DatabaseLockedError` (0 = fail at once).
        read_only: open the file read-only (nothing can change it; a read-only file or
            mount works). A missing file is then an empty database in memory, and no file
            is created. In a process that already holds the file read-write (the app),
            its open database is shared instead. A database that lacks a migration set a
            store needs is reopened read-write to add it when the file can be written, else
            read into memory with the set added there.
    """

    def __init__(
        self, path: str | Path, *, lock_timeout: float = 0.0, read_only: bool = False
    ) -> None:
        """Open (or create) the file, taking DuckDB's one-process lock on it.

        Raises:
            UnsafeFileError: the file, its WAL or its folder could have been written by
                someone else (the message says which, and the fix).
            DatabaseLockedError: another process still holds the file after ``lock_timeout``.
            DatabaseOpenError: the file cannot be opened as a DuckDB database.
        """
        self.path = str(path)
        self._lock_timeout = lock_timeout
        self.in_memory = self.path == ":memory:" or (read_only and not os.path.exists(path))
        self.read_only = read_only and not self.in_memory
        self._con = self._connect(lock_timeout, read_only=self.read_only)
        self._lock = threading.Lock()
        self._migrated: set[str] = set()

    def _connect(self, lock_timeout: float, *, read_only: bool) -> duckdb.DuckDBPyConnection:
        if self.in_memory:
            return duckdb.connect(":memory:", config=dict(_CONFIG))
        check_database_files(self.path)
        private_umask()
        created = not os.path.exists(self.path)
        if not read_only:
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except PermissionError:
                raise DatabaseAccessError(access_message(self.path)) from None
        deadline = time.monotonic() + lock_timeout
        delay = 0.02
        while True:
            try:
                con = duckdb.connect(self.path, read_only=read_only, config=dict(_CONFIG))
                if created and os.path.exists(self.path):
                    os.chmod(self.path, 0o600)
                return con
            except duckdb.Error as error:
                if read_only and _same_file_other_config(error):
                    # This process holds the file read-write already (the app, running a CLI
                    # command for its user): share that open database.
                    self.read_only = False
                    return self._connect(lock_timeout, read_only=False)
                if "permission denied" in str(error).lower():
                    raise DatabaseAccessError(access_message(self.path)) from None
                if not is_lock_error(error):
                    first = str(error).splitlines()[0] if str(error) else type(error).__name__
                    raise DatabaseOpenError(
                        f"cannot open {self.path} as a DuckDB database ({first})"
                    ) from None
                if time.monotonic() >= deadline:
                    raise DatabaseLockedError(lock_message(self.path, error)) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)

    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A new cursor for one operation (autocommit), closed afterwards."""
        cur = self._con.cursor()
        try:
            yield cur
        finally:
            cur.close()

    def execute(self, sql: str, params: Sequence[object] = ()) -> None:
        """Run one statement on its own cursor (autocommit)."""
        with self.cursor() as cur:
            try:
                cur.execute(sql, params)
            except duckdb.Error as error:
                raise storage_full(self.path, error) or error from None

    def frame(self, sql: str, params: Sequence[object] = ()) -> pd.DataFrame:
        """The result of one read query as a pandas DataFrame."""
        with self.cursor() as cur:
            return cur.execute(sql, params).df()

    def fetchone(self, sql: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
        """The first row of one read query (on its own cursor), ``None`` when it has none."""
        with self.cursor() as cur:
            return cur.execute(sql, params).fetchone()

    def fetchall(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Every row of one read query (on its own cursor)."""
        with self.cursor() as cur:
            return cur.execute(sql, params).fetchall()

    def records(self, sql: str, params: Sequence[object] = ()) -> list[dict[str, Any]]:
        """Every row of one read query as a dict keyed by the query's column names."""
        with self.cursor() as cur:
            cur.execute(sql, params)
            names = [column[0] for column in cur.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    @contextmanager
    def transaction(
        self, first: tuple[str, Sequence[object]] | None = None
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor inside ``BEGIN … COMMIT``; any exception rolls everything back.

        ``first`` (a statement and its parameters) is sent with the ``BEGIN``, in one call: its
        result is the cursor's to fetch. The Label page's save does this, one call fewer per
        key press. A full disk (at a write or at the commit) raises
        :class:`~labels.errors.StorageFullError`: nothing was stored.
        """
        # Parameters bind to the last statement of a call; BEGIN takes none.
        sql, params = ("BEGIN TRANSACTION; " + first[0], first[1]) if first is not None \
            else ("BEGIN TRANSACTION", ())
        with self.cursor() as cur:
            try:
                cur.execute(sql, params)
                yield cur
            except BaseException as error:
                with suppress(duckdb.Error):  # a failed write may have ended it already
                    cur.execute("ROLLBACK")
                full = storage_full(self.path, error)
                if full is not None:
                    raise full from None
                raise
            try:
                cur.execute("COMMIT")
            except duckdb.Error as error:
                raise storage_full(self.path, error) or error from None

    def table_names(self) -> set[str]:
        """Names of the tables in this file (any schema), without migrating anything."""
        with self.cursor() as cur:
            return {
                str(r[0]) for r in cur.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_catalog = current_database()"
                ).fetchall()
            }

    def ensure_migrated(self, migration_set: str, migrations: Sequence[Migration]) -> None:
        """Apply a migration set once per process (cheap after the first call).

        On a read-only database a set already applied is only checked; one it lacks reopens
        the file read-write to add it (:class:`~labels.errors.DatabaseOpenError` when the file
        cannot be written).
        """
        if migration_set in self._migrated:
            return
        with self._lock:
            if migration_set in self._migrated:
                return
            if self.read_only:
                with self.cursor() as cur:
                    missing = pending_migrations(cur, migration_set, migrations)
                if missing:
                    self._reopen_to_migrate(migration_set, missing)
            if not self.read_only:
                with self.cursor() as cur:
                    migrate(cur, migration_set, migrations)
            self._migrated.add(migration_set)

    def _reopen_to_migrate(self, migration_set: str, missing: Sequence[str]) -> None:
        """Make room for a migration set a read-only database lacks.

        A file we may write is reopened read-write (the set is added once, as any command
        would). A read-only file (or mount) is copied into memory and the set added there:
        the command reads the file's data, and nothing can reach the file.
        """
        self._con.close()
        self.read_only = False
        if os.access(self.path, os.W_OK):
            self._con = self._connect(self._lock_timeout, read_only=False)
            return
        con = duckdb.connect(":memory:", config=dict(_CONFIG))
        try:
            con.execute("ATTACH ? AS calibrate_file (READ_ONLY)", [self.path])
            con.execute("COPY FROM DATABASE calibrate_file TO memory")
            con.execute("DETACH calibrate_file")
        except duckdb.Error as error:
            con.close()
            first = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise DatabaseOpenError(
                f"{self.path} is read-only and lacks the {migration_set} schema "
                f"({', '.join(missing)}); reading it into memory failed ({first})"
            ) from None
        self._con = con
        self.in_memory = True

    def close(self) -> None:
        """Close the process-wide connection (releases the file lock)."""
        self._con.close()

    def __enter__(self) -> Database:
        """Use the open database in a ``with`` block."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close it when the block ends, however it ends."""
        self.close()
