"""The label store: datasets, items and human labels in one DuckDB file.

Every name loads its module on first use (PEP 562): the file importers (:func:`import_rows`,
:func:`import_labels`) need pyarrow, which a command that only reads the store (``calibrate
datasets``) should not pay for, and the store needs DuckDB, which ``calibrate --help`` should not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from labels.lazy import load

if TYPE_CHECKING:
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
    from labels.importing import ImportSummary, import_rows
    from labels.label_import import LabelImportSummary, import_labels
    from labels.models import Criterion, Dataset, Item, Label, Source, content_id
    from labels.provenance import Provenance
    from labels.stores.db import Database
    from labels.stores.label_store import LabelStore, NewLabel

_EXPORTS: dict[str, tuple[str, ...]] = {
    "labels.stores.db": ("Database",),
    "labels.errors": (
        "CalibrateError",
        "ConflictError",
        "DatabaseAccessError",
        "DatabaseLockedError",
        "ImportFileError",
        "InvalidNameError",
        "NotFoundError",
        "UnsafeFileError",
    ),
    "labels.importing": ("ImportSummary", "import_rows"),
    "labels.label_import": ("LabelImportSummary", "import_labels"),
    "labels.models": ("Criterion", "Dataset", "Item", "Label", "Source", "content_id"),
    "labels.provenance": ("Provenance",),
    "labels.stores.label_store": ("LabelStore", "NewLabel"),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    # PEP 562: a name's module is imported on its first use, so `labels.errors` (which the
    # CLI needs to print help) does not bring DuckDB or pyarrow with it.
    return load(__name__, _WHERE, name)


def open_store(path: str, *, lock_timeout: float = 0.0, read_only: bool = False) -> LabelStore:
    """Open (creating and migrating if needed) the label store in the DuckDB file ``path``.

    ``read_only`` opens it without the right to change it (see :class:`Database`).
    """
    from labels.stores.db import Database
    from labels.stores.label_store import LabelStore

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
