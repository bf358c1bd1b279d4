"""Each store queries only its own tables: the test reads the SQL of every library module.

Each store declares the tables it owns (``TABLES``; the migration ledger ``LEDGER_TABLES``);
together they are every table (and view) the migrations create, each with exactly one owner.
:func:`store_sql.tables_touched` reads the tables each module's SQL names (FROM, JOIN, INTO,
UPDATE, CREATE, ALTER, DROP; not CTEs, registered Arrow tables, temporary tables or table
functions), :func:`store_sql.owner_of` says whose SQL a module holds, and each module may name
only its owner's tables; a module of no store, none at all. A store that needs another's data
reads it through that store (:class:`judges.workspace.Workspace` hands each store the ones it
needs).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from repo_paths import REPO
from store_sql import library_modules, owner_of, owners, tables_touched

EXCEPTIONS: dict[tuple[str, str], str] = {}
"""``(module, table)`` → why that module's SQL may name another store's table. None today:
every cross-store read goes through the owner (e.g. run planning reads ``items`` through
``LabelStore.content_batches`` and matches keys against ``judge_calls`` in
``JudgeStore.uncached``)."""

STORE_FOLDERS = ("labels/stores/", "judges/stores/")


def foreign_tables(relative: str, source: str) -> list[str]:
    """The mentions in ``source`` (the module ``relative``) of tables its owner does not own."""
    owner = owner_of(relative)
    own = set(owner.tables) if owner else set()
    return [str(r) for r in tables_touched(source, relative)
            if r.table not in own and (relative, r.table) not in EXCEPTIONS]


@pytest.mark.parametrize("path", library_modules(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_sql_names_only_the_owners_tables(path: Path) -> None:
    relative = path.relative_to(REPO).as_posix()
    assert foreign_tables(relative, path.read_text(encoding="utf-8")) == []


def test_each_table_has_one_owner() -> None:
    seen: dict[str, str] = {}
    twice = []
    for owner in owners():
        for table in owner.tables:
            if table in seen:
                twice.append(f"{table}: {seen[table]} and {owner.name}")
            seen[table] = owner.name
    assert twice == []


def test_the_owners_hold_every_table_the_migrations_create(tmp_path: Path) -> None:
    from judges.workspace import Workspace
    from labels.stores.schema import QUEUE_MIGRATIONS

    workspace = Workspace.open(tmp_path / "all.duckdb")
    try:
        for name in ("labels", "splits", "team", "judges", "alignment", "batches"):
            getattr(workspace, name)
        workspace.db.ensure_migrated("queue", QUEUE_MIGRATIONS)  # applied on first queue use
        created = workspace.db.table_names()
    finally:
        workspace.close()
    owned = {table for owner in owners() for table in owner.tables}
    assert sorted(created - owned) == []  # a table nobody owns
    assert sorted(owned - created) == []  # an owner's table no migration creates


def test_each_owner_names_its_tables_in_its_own_sql() -> None:
    """Not vacuous: the extractor finds every owned table in its owner's SQL (its CREATE)."""
    for owner in owners():
        named = {r.table for module in owner.modules
                 for r in tables_touched((REPO / module).read_text(encoding="utf-8"), module)}
        assert sorted(set(owner.tables) - named) == [], owner.name


def test_every_store_module_has_an_owner() -> None:
    unmapped = [path.relative_to(REPO).as_posix() for path in library_modules()
                if path.relative_to(REPO).as_posix().startswith(STORE_FOLDERS)
                and path.name != "__init__.py" and owner_of(path.relative_to(REPO).as_posix())
                is None]
    assert unmapped == []
    listed = [m for owner in owners() for m in owner.modules]
    assert sorted(m for m in listed if not (REPO / m).is_file()) == []
    assert len(listed) == len(set(listed))


PLANTED = '''
def agreement(db, config_id, keys):
    """FROM labels: a docstring is not SQL."""
    with db.cursor() as cur:
        cur.register("row_keys", keys)
        where = "c.config_id = ?"
        return cur.execute(
            f"WITH recent AS (SELECT * FROM judge_calls c WHERE {where}) "
            "SELECT r.verdict, l.verdict FROM recent r JOIN row_keys k USING (item_hash) "
            "LEFT JOIN current_labels l ON l.item_id = k.item_id, range(3) "
            "WHERE r.item_id IN (SELECT item_id FROM items)", [config_id]).fetchall()
'''


def test_a_planted_cross_store_query_is_found() -> None:
    found = foreign_tables("judges/stores/judge_store.py", PLANTED)
    assert [f.split(" ")[1] for f in found] == ["current_labels", "items"]
    # The same SQL in a module of no store: every table it names is someone else's.
    assert sorted(f.split(" ")[1] for f in foreign_tables("judges/verdicts.py", PLANTED)) == [
        "current_labels", "items", "judge_calls"]


def test_the_extractor_reads_clauses_not_names() -> None:
    sql = '''
SQL = """
CREATE TABLE IF NOT EXISTS kept (a INT);
CREATE TEMP TABLE scratch AS SELECT 1;
CREATE INDEX kept_by_a ON indexed (a);
INSERT INTO written (a) SELECT a FROM scratch;
UPDATE updated SET a = 1 FROM unnest([1]) AS u(a);
DELETE FROM deleted WHERE a IN (SELECT a FROM (SELECT 1 AS a) AS one);
ALTER TABLE passing_new RENAME TO renamed;
DROP TABLE IF EXISTS dropped;
ON CONFLICT (a) DO UPDATE SET a = excluded.a;
SELECT table_name FROM information_schema.tables
"""
'''
    assert sorted({r.table for r in tables_touched(sql)}) == [
        "deleted", "dropped", "indexed", "kept", "renamed", "updated", "written"]
