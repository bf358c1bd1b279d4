"""Fixtures shared by the whole suite: a temporary database, isolated settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from labels import LabelStore, open_store

ENV_PREFIXES = ("CALIBRATE_", "ANTHROPIC_", "OPENAI_")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No key, base URL or database path from the developer's shell or .env leaks into a test."""
    import os

    for name in list(os.environ):
        if name.startswith(ENV_PREFIXES) and name != "CALIBRATE_REQUIRE_BROWSER":
            monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh DuckDB file path (not yet created)."""
    return tmp_path / "test.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[LabelStore]:
    """A migrated, empty label store on a real DuckDB file."""
    s = open_store(str(db_path))
    yield s
    s.db.close()
