"""The layers: libraries never import a front end; SQL lives only in the store modules.

``calibrate_app`` → ``judges`` → ``labels`` (import-linter checks the same in ``make test``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from repo_paths import REPO
from store_sql import owner_of

ROOT = REPO
FRONT_ENDS = ("calibrate_app", "streamlit", "click")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("library", ["labels", "judges"])
def test_library_imports_no_front_end(library: str) -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / library).rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] in FRONT_ENDS
    ]
    assert offending == []


def test_labels_imports_nothing_from_judges() -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "labels").rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] == "judges"
    ]
    assert offending == []


# The store modules, the only ones that hold SQL or talk to a DuckDB cursor: those holding the
# SQL of a store (or of the migration ledger), as tests/support/store_sql.py maps them; which
# tables each may name is tests/test_store_tables.py's to check.
def _is_store(relative: str) -> bool:
    return owner_of(relative) is not None


_SQL_TEXT = re.compile(
    r"^\s*(SELECT|INSERT INTO|UPDATE \w+ SET|DELETE FROM|CREATE (TEMP )?(TABLE|VIEW|INDEX|SEQUENCE)"
    r"|DROP TABLE|ALTER TABLE)\b"
)
_CURSOR_CALLS = {"execute", "executemany", "sql", "cursor", "transaction", "fetchall", "fetchone",
                 "fetchdf", "df"}


def _sql_outside_the_stores(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _SQL_TEXT.search(node.value):
                found.append(f"{node.lineno}: SQL text {node.value.strip()[:40]!r}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in _CURSOR_CALLS):
            found.append(f"{node.lineno}: .{node.func.attr}()")
    return found


@pytest.mark.parametrize("package", ["labels", "judges", "calibrate_app"])
def test_sql_only_in_the_stores(package: str) -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in sorted((ROOT / package).rglob("*.py"))
        if not _is_store(path.relative_to(ROOT).as_posix())
        for where in _sql_outside_the_stores(path)
    ]
    assert offending == []


def test_the_sql_check_finds_sql(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('def f(con):\n    return con.execute("SELECT 1").fetchall()\n')
    assert _sql_outside_the_stores(sample) == ["2: .fetchall()", "2: .execute()",
                                               "2: SQL text 'SELECT 1'"]
