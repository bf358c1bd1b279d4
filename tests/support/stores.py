"""Label stores on real DuckDB files for fixtures: opened, and always closed afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from labels import LabelStore, open_store


@contextmanager
def opened_store(path: Path | str) -> Iterator[LabelStore]:
    """The label store on ``path`` (created and migrated if new), its file released afterwards."""
    store = open_store(str(path))
    try:
        yield store
    finally:
        store.db.close()
