"""Importing rows, human labels and judge verdicts; exporting labels and verdicts again.

One workflow for ``calibrate import``, ``calibrate labels import|export``, ``calibrate verdicts
import|export`` and the Data page's upload (its preview and criteria editor too), so the CLI
and the app accept the same files and report the same errors (file, row, column). Every import
is all or nothing, and importing the same file again adds nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from judges.verdicts import JudgeNotNamedError, VerdictImportSummary, parse_verdict_mapping
from labels.importing import (
    ITEM_FIELDS,
    RAGAS_MAPPING,
    ImportSummary,
    OnChanged,
    _resolve_columns,  # the importer's own column detection, which the Data page shows
    normalise,
    parse_mapping,
)
from labels.label_import import LABEL_FIELDS, LabelImportSummary
from labels.models import Criterion, Kind
from labels.reading import FILE_FORMATS, read_table
from labels.record_paths import parse_pairs
from labels.table import Table

if TYPE_CHECKING:
    import pandas as pd

    from judges.config import JudgeConfig
    from judges.workspace import Workspace


def row_mapping(pairs: Sequence[str]) -> dict[str, str]:
    """``["question=prompt", ...]`` (``--map`` of ``calibrate import``) as field → column."""
    return parse_mapping(list(pairs))


def label_mapping(pairs: Sequence[str]) -> dict[str, str]:
    """``--map`` of ``calibrate labels import`` (fields id, label, note, annotator)."""
    return parse_pairs(list(pairs), LABEL_FIELDS)


def verdict_mapping(pairs: Sequence[str]) -> dict[str, str]:
    """``--map`` of ``calibrate verdicts import`` (id, verdict, score, repeat, ...)."""
    return parse_verdict_mapping(list(pairs))


def import_rows(workspace: Workspace, path: str | Path, dataset: str, *,
                format: str | None = None, mapping: Mapping[str, str] | None = None,
                encoding: str = "utf-8", on_changed: OnChanged = "error",
                display_name: str | None = None, records: str | None = None) -> ImportSummary:
    """Import the rows of ``path`` into ``dataset`` (created if new), all or nothing.

    The arguments are :func:`labels.importing.import_rows`'s.
    """
    from labels.importing import import_rows as import_into

    return import_into(workspace.labels, path, dataset, format=format, mapping=mapping,
                       encoding=encoding, on_changed=on_changed, display_name=display_name,
                       records=records)


def import_labels(workspace: Workspace, path: str | Path, dataset: str, *,
                  annotator: str | None = None, criterion: str | None = None,
                  selection: str = "unknown", mapping: Mapping[str, str] | None = None,
                  records: str | None = None, format: str | None = None,
                  metric: str | None = None) -> LabelImportSummary:
    """Import human labels from ``path`` (see :func:`labels.label_import.import_labels`)."""
    from labels.label_import import import_labels as import_into

    return import_into(workspace.labels, path, dataset, annotator=annotator,
                       criterion=criterion, selection=selection, mapping=mapping,
                       records=records, format=format, metric=metric)


def import_verdicts(workspace: Workspace, path: str | Path, *, dataset: str,
                    judge: str | None = None, criterion: str | None = None,
                    config: JudgeConfig | None = None, mapping: Mapping[str, str] | None = None,
                    records: str | None = None, pass_if: str | None = None,
                    unsure_if: str | None = None, metric: str | None = None,
                    format: str | None = None) -> VerdictImportSummary:
    """Import a judge's verdicts made elsewhere (see :func:`judges.verdicts.import_verdicts`).

    Raises:
        JudgeNotNamedError: a plain file without ``judge`` or ``config``.
    """
    from judges.verdicts import import_verdicts as import_into

    return import_into(workspace, path, dataset=dataset, judge=judge, criterion=criterion,
                       config=config, mapping=mapping, records=records, pass_if=pass_if,
                       unsure_if=unsure_if, metric=metric, format=format)


def export_labels(workspace: Workspace, dataset: str, output: str | Path, *,
                  criterion: str | None = None, history: bool = False) -> tuple[int, Path]:
    """Write the current labels (or every version, ``history``) of ``dataset`` to ``output``.

    Returns:
        How many labels were written, and the file (CSV, Parquet or JSONL by extension).
    """
    from labels.exporting import write_table

    store = workspace.labels
    store.dataset(dataset)  # NotFoundError names the datasets there are
    frame = (store.label_history_frame(dataset, criterion=criterion) if history
             else store.current_labels(dataset, criterion=criterion))
    return len(frame), write_table(frame, output)


def export_verdicts(workspace: Workspace, dataset: str, judge: str, output: str | Path) -> Path:
    """Write a judge's verdicts on ``dataset`` (:func:`judges.verdicts.export_verdicts`)."""
    from judges.verdicts import export_verdicts as export

    return export(workspace, dataset, judge, output)


# -- the Data page's look before importing ----------------------------------------------


def read_file(path: str | Path, *, format: str | None = None, encoding: str = "utf-8",
              display_name: str | None = None) -> Table:
    """The file's table, read as the import would read it (errors name file, row, column)."""
    return read_table(path, format=format, encoding=encoding, display_name=display_name)


def detected_columns(table: Table, *, ragas: bool) -> dict[str, list[str]]:
    """Item field → the columns the importer would take for it without a mapping."""
    return _resolve_columns(table, RAGAS_MAPPING if ragas else {})


@dataclass(frozen=True)
class RowPreview:
    """The first rows of a file as the import would store them.

    Attributes:
        frame: One row per item (columns of :data:`labels.importing.ITEM_FIELDS`).
        kind: ``pointwise`` or ``pairwise``, as the import decides from the columns.
        rows: How many rows of the file the preview covers.
    """

    frame: pd.DataFrame
    kind: str
    rows: int


def preview_rows(table: Table, mapping: Mapping[str, str], *, ragas: bool,
                 rows: int) -> RowPreview:
    """The first ``rows`` rows of ``table`` normalised with ``mapping`` (nothing is stored).

    For the ragas format its own mapping applies under ``mapping``, limited to the columns
    the file has.

    Raises:
        labels.errors.CalibrateError: the mapping does not fit the file.
    """
    full: dict[str, Any] = {**RAGAS_MAPPING, **mapping} if ragas else dict(mapping)
    if ragas:
        full = {k: v for k, v in full.items() if v in table.columns or k in mapping}
    head = table.head(rows)
    normalised, kind = normalise(head, full)
    return RowPreview(normalised.to_pandas(), kind, head.n_rows)


def save_criterion(workspace: Workspace, name: str, kind: Kind, guidelines: str,
                   tags: str, show_reference: bool) -> None:
    """Save a criterion; ``tags`` is the failure tags, comma-separated.

    Raises:
        labels.errors.CalibrateError, ValueError: a bad name or field.
    """
    failure_tags = tuple(t.strip() for t in tags.split(",") if t.strip())
    workspace.labels.save_criterion(Criterion(
        name=name, kind=kind, guidelines=guidelines, show_reference=show_reference,
        failure_tags=failure_tags,
    ))


__all__ = ["FILE_FORMATS", "ITEM_FIELDS", "Criterion", "ImportSummary", "JudgeNotNamedError",
           "LabelImportSummary", "OnChanged", "RowPreview", "Table", "VerdictImportSummary",
           "detected_columns", "export_labels", "export_verdicts", "import_labels",
           "import_rows", "import_verdicts", "label_mapping", "preview_rows", "read_file",
           "row_mapping", "save_criterion", "verdict_mapping"]
