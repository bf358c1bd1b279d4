"""The label store: datasets, items and human labels in one DuckDB file.

The file importers (:func:`import_rows`, :func:`import_labels`) load on first use (PEP 562):
they need pyarrow, which a command that only reads the store (``calibrate datasets``) should not
pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labels.db import Database
from labels.errors import (
    CalibrateError,
    ConflictError,
    DatabaseAccessError,
    DatabaseLockedError,
    ImportFileError,
    InvalidNameError,
    NotFoundError,
    UnsafeFileError,
)
from labels.models import Criterion, Dataset, Item, Label, Source, content_id
from labels.provenance import Provenance
from labels.store import LabelStore, NewLabel

if TYPE_CHECKING:
    from labels.importing import ImportSummary, import_rows
    from labels.label_import import LabelImportSummary, import_labels

def __getattr__(name: str) -> Any:
    # PEP 562: the first use of an importer's name imports its module (and pyarrow).
    if name in ("ImportSummary", "import_rows"):
        from labels import importing as module
    elif name in ("LabelImportSummary", "import_labels"):
        from labels import label_import as module  # type: ignore[no-redef]
    else:
        raise AttributeError(f"module 'labels' has no attribute {name!r}")
    return getattr(module, name)


def open_store(path: str, *, lock_timeout: float = 0.0, read_only: bool = False) -> LabelStore:
    """Open (creating and migrating if needed) the label store in the DuckDB file ``path``.

    ``read_only`` opens it without the right to change it (see :class:`Database`).
    """
    return LabelStore(Database(path, lock_timeout=lock_timeout, read_only=read_only))


__all__ = [
    "CalibrateError",
    "ConflictError",
    "Criterion",
    "Database",
    "DatabaseAccessError",
    "DatabaseLockedError",
    "Dataset",
    "ImportFileError",
    "ImportSummary",
    "InvalidNameError",
    "Item",
    "Label",
    "LabelImportSummary",
    "LabelStore",
    "NewLabel",
    "NotFoundError",
    "Provenance",
    "Source",
    "UnsafeFileError",
    "content_id",
    "import_labels",
    "import_rows",
    "open_store",
]
