"""Import existing human labels from a spreadsheet, all or nothing.

The file has ``id`` and ``label`` columns, optionally ``note`` and ``annotator``.

Item ids are normalised as everywhere else (:func:`labels.validation.normalise_id`), ids that
only look alike are refused naming both rows, and annotator names follow the naming rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from labels.cells import text_cell
from labels.errors import ImportFileError, InvalidNameError, did_you_mean
from labels.models import (
    DEFAULT_CRITERION,
    PAIRWISE_CRITERION,
    PAIRWISE_VERDICTS,
    POINTWISE_VERDICTS,
)
from labels.provenance import Provenance
from labels.reading import FileImportSummary, Table, read_table
from labels.stores.label_store import LabelStore, NewLabel
from labels.tool_formats import TOOL_FORMATS, detect
from labels.validation import LookalikeIdError, LookalikeIds, check_name, shown
from labels.verdict_words import parse_verdict, spellings

LABEL_FIELDS = ("id", "label", "note", "annotator")
"""The fields of a labels file ``labels import --map FIELD=COLUMN`` can name."""

IMPORT_SELECTIONS = ("random", "all", "by_verdict", "unknown", "escalated")
"""How an imported label file's rows were chosen (``labels import --selection``)."""

@dataclass(frozen=True)
class LabelImportSummary(FileImportSummary):
    """What a label import did."""

    annotators: tuple[str, ...]
    tool: str | None = None
    """The tool whose file it was (``langfuse``, ``langsmith``, ``phoenix``), if any."""
    metric: str | None = None
    """The tool's metric whose human labels were read."""


def _label_word(table: Table, index: int, column: str, value: Any, pairwise: bool,
                words: Mapping[str, str]) -> str:
    allowed = PAIRWISE_VERDICTS if pairwise else POINTWISE_VERDICTS
    if isinstance(value, str):
        value = words.get(value.strip(), value)
    try:
        return parse_verdict(value, allowed)
    except ValueError:
        raise table.error(
            f"{shown(value)} is not a label (use {spellings(allowed)})",
            index, column,
        ) from None


def _annotator(table: Table, index: int, value: str, column: str) -> str:
    try:
        return check_name(value.strip(), "annotator")
    except InvalidNameError as error:
        raise table.error(str(error), index, column) from None


def import_labels(
    store: LabelStore,
    path: str | Path,
    dataset: str,
    *,
    annotator: str | None = None,
    criterion: str | None = None,
    format: str | None = None,
    encoding: str = "utf-8",
    id_column: str = "id",
    label_column: str = "label",
    display_name: str | None = None,
    selection: str = "unknown",
    mapping: Mapping[str, str] | None = None,
    records: str | None = None,
    metric: str | None = None,
) -> LabelImportSummary:
    """Import existing human labels (``id``, ``label``, optional ``note`` and ``annotator``).

    Labels equal to the annotator's current label for the item are skipped, so re-importing
    the same file adds nothing. All labels are written in one transaction.

    Args:
        store: the label store.
        path: the file (CSV, JSONL, JSON or Parquet).
        dataset: the dataset whose items are labelled.
        annotator: who labelled, unless the file has an ``annotator`` column.
        criterion: what the labels judge (default ``faithfulness``, or ``preference`` on a
            pairwise dataset, whose labels are ``a``/``b``/``tie``, one row per annotator
            vote).
        format: the file format (default from the extension), or the tool that wrote it
            (``langfuse``, ``langsmith``, ``phoenix``: recognised by its shape without it).
        encoding: text encoding of CSV/JSON files.
        id_column: the column with item ids (``item_id`` is also accepted).
        label_column: the column with labels (``verdict`` is also accepted).
        display_name: how messages name the file (default ``path``), e.g. an upload's own
            name instead of the server's temporary path.
        selection: how the file's rows were chosen (``random``, ``all``, ``by_verdict``,
            ``escalated`` or ``unknown``, the default); the report checks ``unknown`` against
            the judge verdicts. ``escalated``: the rows are among those the newest acceptance
            rule of the dataset and criterion escalated (``calibrate judge select``), picked
            at random among them; every row must be one of them.
        mapping: field (``id``, ``label``, ``note``, ``annotator``) → the column, or a path
            into nested records (``{"label": "feedback.value"}``, :mod:`labels.record_paths`),
            that holds it; ``id`` and ``label`` win over ``id_column`` and ``label_column``.
        records: for a JSON file whose top level is an object, the path of its list of
            records.
        metric: in a tool's file of scores and feedback (:mod:`labels.tool_formats`), the
            metric whose human labels to read, when it holds several. Only a person's
            records are read (Langfuse ``ANNOTATION`` scores, LangSmith feedback from the
            API or the app, Phoenix ``HUMAN`` annotations), each under its annotator; a
            judge's are ``verdicts import``'s.

    Raises:
        ImportFileError: a problem in the file, naming the file, row and column.
        InvalidNameError: ``annotator`` breaks the naming rule.
    """
    name = display_name or str(path)
    if selection not in IMPORT_SELECTIONS:
        choices = ", ".join(IMPORT_SELECTIONS)
        raise ImportFileError(f"unknown selection {selection!r} (choose {choices})", path=name)
    mapping = dict(mapping or {})
    unknown = sorted(set(mapping) - set(LABEL_FIELDS))
    if unknown:
        raise ImportFileError(
            f"--map {unknown[0]}=…: unknown field{did_you_mean(unknown[0], LABEL_FIELDS)} "
            f"(fields: {', '.join(LABEL_FIELDS)})", path=name
        )
    tool_name = format if format in TOOL_FORMATS else None
    table = read_table(path, format=None if tool_name else format, encoding=encoding,
                       display_name=name, records=records)
    tool = detect(table, tool_name) if tool_name or "label" not in mapping else None
    words: dict[str, str] = {}
    chosen = None
    if tool is not None and (tool_name or tool.feedback):
        chosen = tool.label_metric(metric, path=name)
        table = table.matching(chosen.where)
        mapping = {**chosen.mapping, **mapping}
        words = dict(chosen.words)
    elif metric is not None:
        raise ImportFileError("--metric names a metric of a tool's file of feedback "
                              "(langfuse, langsmith, phoenix); this file is not one", path=name)
    table = table.with_mapping(mapping, name=name)
    id_column = mapping.get("id", id_column)
    label_column = mapping.get("label", label_column)
    note_col = mapping.get("note", "note")
    annotator_col = mapping.get("annotator", "annotator")
    id_col = (
        id_column
        if id_column in table.columns
        else ("item_id" if "item_id" in table.columns else None)
    )
    label_col = (
        label_column
        if label_column in table.columns
        else ("verdict" if "verdict" in table.columns else None)
    )
    if id_col is None or label_col is None:
        missing = "id" if id_col is None else "label"
        raise ImportFileError(
            f"missing required column {missing!r}{table.did_you_mean(missing)} "
            f"(columns: {table.shown_paths()})",
            path=name,
        )
    has_annotator = annotator_col in table.columns
    if annotator is None and not has_annotator:
        raise ImportFileError(
            "no annotator: pass --annotator NAME or add an 'annotator' column", path=name
        )
    if annotator is not None:
        annotator = check_name(annotator.strip(), "annotator")
    kind = store.dataset(dataset).kind
    if criterion is None:
        criterion = PAIRWISE_CRITERION if kind == "pairwise" else DEFAULT_CRITERION
    pairwise = store.criterion(criterion).kind == "pairwise"
    if pairwise != (kind == "pairwise"):
        raise ImportFileError(
            f"dataset {dataset!r} is {kind} but criterion {criterion!r} is "
            f"{'pairwise' if pairwise else 'pointwise'}: use --criterion "
            f"{PAIRWISE_CRITERION if kind == 'pairwise' else DEFAULT_CRITERION}",
            path=name,
        )
    current = store.current_labels(dataset, criterion=criterion)
    latest = {
        (r.item_id, r.annotator): (r.verdict, r.note) for r in current.itertuples(index=False)
    }
    known_ids = set(store.item_ids(dataset))
    provenance = Provenance(selection=selection)
    if selection == "escalated":
        escalation = store.escalation(dataset, criterion)
        if escalation is None:
            raise ImportFileError(
                f"--selection escalated: no rows of {dataset!r} have been escalated for "
                f"{criterion!r} (calibrate judge select records them)", path=name)
        known_ids = set(escalation.item_ids)
        provenance = Provenance(selection="escalated", stratum=escalation.rule,
                                judge=escalation.judge)
    new: list[NewLabel] = []
    skipped = 0
    seen: dict[tuple[str, str], int] = {}
    ids = LookalikeIds()
    for index in range(table.n_rows):
        record = table.record(index)
        raw_id = text_cell(table, index, id_col, record.get(id_col), required=True)
        assert raw_id is not None  # required=True never returns None
        try:
            item_id = ids.add(raw_id, table.row_number(index))
        except LookalikeIdError as error:
            raise ImportFileError(str(error), path=name, row=table.row_number(index),
                                  column=id_col) from None
        if item_id not in known_ids:
            raise ImportFileError(
                f"item {shown(item_id, 24)} is not one of the rows escalated by rule "
                f"{provenance.stratum}" if selection == "escalated" else
                f"dataset {dataset!r} has no item {shown(item_id, 24)}",
                path=name,
                row=table.row_number(index),
                column=id_col,
            )
        verdict = _label_word(table, index, label_col, record.get(label_col), pairwise, words)
        who = annotator
        if has_annotator:
            cell = text_cell(table, index, annotator_col, record.get(annotator_col),
                             required=False)
            if cell and cell.strip():
                who = _annotator(table, index, cell, annotator_col)
        if not who:
            raise ImportFileError(
                "is empty and no --annotator was given",
                path=name,
                row=table.row_number(index),
                column=annotator_col,
            )
        key = (item_id, who)
        if key in seen:
            raise ImportFileError(
                f"labels item {shown(item_id, 24)} for {who!r} again (first at row {seen[key]})",
                path=name,
                row=table.row_number(index),
                column=id_col,
            )
        seen[key] = table.row_number(index)
        note = ""
        if note_col in table.columns:
            note = text_cell(table, index, note_col, record.get(note_col), required=False) or ""
        if latest.get(key) == (verdict, note):
            skipped += 1
            continue
        new.append(
            NewLabel(
                item_id=item_id,
                annotator=who,
                verdict=verdict,
                criterion=criterion,
                note=note,
                origin="import",
                provenance=provenance,
            )
        )
    store.add_labels(dataset, new)
    return LabelImportSummary(
        dataset=dataset,
        path=name,
        rows_read=table.n_rows,
        added=len(new),
        unchanged=skipped,
        annotators=tuple(sorted({n.annotator for n in new})),
        tool=tool.tool if chosen is not None and tool is not None else None,
        metric=chosen.name if chosen is not None else None,
    )


__all__ = ["LABEL_FIELDS", "LabelImportSummary", "import_labels"]
