"""The SQL a module holds, read from its source: which tables it reads or writes.

:func:`sql_texts` collects the string constants of a module that can hold SQL (every string but
docstrings and other bare string statements; an f-string's constant parts joined around a
placeholder), and :func:`tables_touched` finds the tables that SQL names after ``FROM``,
``JOIN``, ``INTO``, ``UPDATE … SET``, ``CREATE [TEMP] TABLE | VIEW``, ``CREATE INDEX … ON``,
``ALTER TABLE``, ``RENAME TO`` and ``DROP TABLE | VIEW``. Not tables: the module's CTE names,
the Arrow tables and frames it registers on a cursor, its temporary tables, DuckDB table
functions (``range(…)``: a name right before a parenthesis), subqueries, and the catalog
(``information_schema``). SQL keywords are upper case in this code base, so prose ("read from
the items") is not taken for SQL.

``tests/test_store_tables.py`` holds each store to its own tables with this;
``tests/test_layers.py`` uses :func:`sql_texts` to find SQL outside the stores.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from repo_paths import REPO

PLACEHOLDER = " {…} "
"""What an f-string's formatted values read as: nothing a table name can match."""

_NAME = r"(\w+(?:\.\w+)?)"
_REFERENCE = re.compile(
    r"\b(?:FROM|JOIN|INSERT\s+INTO|"
    r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(?:TABLE|VIEW)(?:\s+IF\s+NOT\s+EXISTS)?|"
    r"CREATE\s+(?:UNIQUE\s+)?INDEX\s+\w+\s+ON|ALTER\s+TABLE|RENAME\s+TO|"
    r"DROP\s+(?:TABLE|VIEW)(?:\s+IF\s+EXISTS)?)\s+" + _NAME + r"(?![\w(])"
)
_UPDATE = re.compile(r"\bUPDATE\s+" + _NAME + r"\s+SET\b")
_RENAME = re.compile(r"\bALTER\s+TABLE\s+(\w+)\s+RENAME\s+TO\s+(\w+)")
_CTE = re.compile(r"\b(\w+)\s+AS\s+(?:NOT\s+)?(?:MATERIALIZED\s+)?\(")
_TEMP = re.compile(r"\bCREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+TABLE\s+"
                   r"(?:IF\s+NOT\s+EXISTS\s+)?(\w+)")
_KEYWORDS = {"SELECT", "DATABASE", "VALUES", "LATERAL", "IF", "NOT", "EXISTS"}
_CATALOG = ("information_schema.", "pg_catalog.", "duckdb_")


def _docstring_ids(tree: ast.AST) -> set[int]:
    """Ids of the string constants that are statements of their own (docstrings, notes)."""
    return {id(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def sql_texts(source: str, filename: str = "<module>") -> list[tuple[int, str]]:
    """``(line, text)`` of every string of ``source`` that may hold SQL.

    An f-string gives one text, its constant parts joined by :data:`PLACEHOLDER` (so a
    table name split from its keyword by a formatted value is still read as one clause);
    its parts are not read again alone.
    """
    tree = ast.parse(source, filename=filename)
    skip = _docstring_ids(tree)
    parts: set[int] = set()
    texts: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            pieces = []
            for value in node.values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    parts.add(id(value))
                    pieces.append(value.value)
                else:
                    pieces.append(PLACEHOLDER)
            texts.append((node.lineno, "".join(pieces)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in skip and id(node) not in parts):
            texts.append((node.lineno, node.value))
    return sorted(texts)


def registered_names(source: str) -> set[str]:
    """Names the module registers on a cursor (``cur.register("name", table)``)."""
    return {node.args[0].value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "register" and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)}


@dataclass(frozen=True)
class Reference:
    """One table a module's SQL names."""

    line: int
    table: str
    sql: str

    def __str__(self) -> str:
        return f"{self.line}: {self.table} ({' '.join(self.sql.split())[:70]!r})"


def tables_touched(source: str, filename: str = "<module>") -> list[Reference]:
    """The tables (and views) the SQL of ``source`` reads or writes, one entry per mention.

    A table a migration builds under a passing name and renames (``ALTER TABLE x_new RENAME
    TO x``, DuckDB's way to change a constraint) is read as the table it becomes.
    """
    texts = sql_texts(source, filename)
    local = registered_names(source)
    renamed: dict[str, str] = {}
    for _, text in texts:
        local |= {m.group(1) for m in _CTE.finditer(text)}
        local |= {m.group(1) for m in _TEMP.finditer(text)}
        renamed |= {m.group(1): m.group(2) for m in _RENAME.finditer(text)}
    found = []
    for line, text in texts:
        for match in (*_REFERENCE.finditer(text), *_UPDATE.finditer(text)):
            name = match.group(1)
            if (name in local or (name.upper() == name and name.upper() in _KEYWORDS)
                    or name.startswith(_CATALOG)):
                continue
            found.append(Reference(line, renamed.get(name, name), text))
    return sorted(found, key=lambda r: (r.line, r.table))


def module_tables(path: Path) -> list[Reference]:
    """:func:`tables_touched` of the module at ``path``."""
    return tables_touched(path.read_text(encoding="utf-8"), str(path))


def library_modules(packages: Iterable[str] = ("labels", "judges")) -> list[Path]:
    """Every module of the library packages, in path order."""
    return sorted(p for package in packages for p in (REPO / package).rglob("*.py"))


@dataclass(frozen=True)
class Owner:
    """A store (or the migration ledger), the tables it owns and the modules holding its SQL."""

    name: str
    tables: tuple[str, ...]
    modules: tuple[str, ...]


def owners() -> list[Owner]:
    """Every owner of tables: each store's ``TABLES`` and the modules its SQL is written in."""
    from judges.stores.alignment_store import AlignStore
    from judges.stores.batch_store import BatchStore
    from judges.stores.judge_store import JudgeStore
    from labels.stores.label_store import LabelStore
    from labels.stores.migrations import LEDGER_TABLES
    from labels.stores.split_store import SplitStore
    from labels.stores.team_store import TeamStore

    labels, judges = "labels/stores/", "judges/stores/"
    return [
        Owner("the migration ledger", LEDGER_TABLES,
              (labels + "db.py", labels + "migrations.py")),
        Owner("LabelStore", LabelStore.TABLES, tuple(labels + m for m in (
            "label_store.py", "schema.py", "item_store.py", "item_reads.py", "label_reads.py",
            "queue_store.py", "history_store.py", "label_writes.py"))),
        Owner("SplitStore", SplitStore.TABLES, (labels + "split_store.py",)),
        Owner("TeamStore", TeamStore.TABLES, (labels + "team_store.py",)),
        Owner("JudgeStore", JudgeStore.TABLES, tuple(judges + m for m in (
            "judge_store.py", "judge_schema.py", "judge_aggregates.py", "judge_keys.py"))),
        Owner("AlignStore", AlignStore.TABLES, (judges + "alignment_store.py",)),
        Owner("BatchStore", BatchStore.TABLES, (judges + "batch_store.py",)),
    ]


def owner_of(relative: str) -> Owner | None:
    """The owner whose SQL the module ``relative`` (a repository path) holds; None: no store's."""
    return next((o for o in owners() if relative in o.modules), None)
