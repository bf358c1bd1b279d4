"""The label store: datasets, items and human labels in one DuckDB file."""

from labels.db import Database
from labels.errors import (
    CalibrateError,
    ConflictError,
    DatabaseAccessError,
    DatabaseLockedError,
    ImportFileError,
    InvalidNameError,
    NotFoundError,
)
from labels.importing import ImportSummary, import_rows
from labels.label_import import LabelImportSummary, import_labels
from labels.models import Criterion, Dataset, Item, Label, Source, content_id
from labels.store import LabelStore, NewLabel, Provenance


def open_store(path: str, *, lock_timeout: float = 0.0) -> LabelStore:
    """Open (creating and migrating if needed) the label store in the DuckDB file ``path``."""
    return LabelStore(Database(path, lock_timeout=lock_timeout))


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
    "content_id",
    "import_labels",
    "import_rows",
    "open_store",
]
