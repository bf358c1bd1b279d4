"""Named, ordered, transactional schema migrations for the DuckDB file.

Each *migration set* (``labels``, ``judges``, ...) is an ordered list of migrations. Applied ones
are recorded in ``_migrations(migration_set, name, applied_at)``; each migration and its record are
one transaction, so a failing migration leaves no trace. Opening an older file applies the
missing ones in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import duckdb

MigrationBody = str | Callable[[duckdb.DuckDBPyConnection], None]


@dataclass(frozen=True)
class Migration:
    """One schema step: a name (``m001_description``) and SQL statements or a callable."""

    name: str
    body: MigrationBody

    def apply(self, con: duckdb.DuckDBPyConnection) -> None:
        """Run this migration's statements on ``con`` (inside the caller's transaction)."""
        if callable(self.body):
            self.body(con)
            return
        # One statement at a time: DuckDB's handling of ;-separated batches inside an explicit
        # transaction is not something to rely on.
        for statement in _split_sql(self.body):
            con.execute(statement)


def _split_sql(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]


LEDGER_TABLES = ("_migrations",)
"""The ledger's table: owned by the migration runner (this module and the connection in
:mod:`labels.stores.db`), which every store applies its migrations through."""

_LEDGER = """
CREATE TABLE IF NOT EXISTS _migrations (
    migration_set VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (migration_set, name)
)
"""


def applied_migrations(con: duckdb.DuckDBPyConnection, migration_set: str) -> list[str]:
    """Names of the migrations of ``migration_set`` already applied to this database."""
    con.execute(_LEDGER)
    rows = con.execute(
        "SELECT name FROM _migrations WHERE migration_set = ? ORDER BY name", [migration_set]
    ).fetchall()
    return [r[0] for r in rows]


def pending_migrations(
    con: duckdb.DuckDBPyConnection, migration_set: str, migrations: Sequence[Migration]
) -> list[str]:
    """Names of the migrations of ``migration_set`` this database lacks, without writing.

    For a read-only database, where :func:`applied_migrations` cannot create the ledger.
    """
    has_ledger = con.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_catalog = current_database() AND table_name = '_migrations'"
    ).fetchone()
    if not has_ledger or not has_ledger[0]:
        return [m.name for m in migrations]
    rows = con.execute(
        "SELECT name FROM _migrations WHERE migration_set = ?", [migration_set]
    ).fetchall()
    done = {r[0] for r in rows}
    return [m.name for m in migrations if m.name not in done]


def migrate(
    con: duckdb.DuckDBPyConnection, migration_set: str, migrations: Sequence[Migration]
) -> list[str]:
    """Apply the migrations of ``migration_set`` that this database lacks, in order.

    Returns the names applied now (empty when the file was up to date).
    """
    names = [m.name for m in migrations]
    if names != sorted(names) or len(set(names)) != len(names):
        raise ValueError(f"migrations of set {migration_set!r} must have unique, ordered names")
    done = set(applied_migrations(con, migration_set))
    unknown = done - set(names)
    if unknown:
        raise RuntimeError(
            f"this database has {migration_set} migrations this version of calibrate does not "
            f"know ({', '.join(sorted(unknown))}); it was written by a newer version"
        )
    applied = []
    for migration in migrations:
        if migration.name in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            migration.apply(con)
            con.execute(
                "INSERT INTO _migrations (migration_set, name) VALUES (?, ?)",
                [migration_set, migration.name],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        applied.append(migration.name)
    return applied
