"""LabelStore: the SQL on datasets, items, annotators, criteria and labels.

The import of a file of rows writes through :mod:`.item_store`; the labelling queue's own
tables (skips, settings, escalations) are read and written by :mod:`.queue_store`, an
annotator's "My labels" list by :mod:`.history_store`, the items as columns (run planning,
reports) by :mod:`.item_reads`, what the split and team stores read of the labels by
:mod:`.label_reads`; the schema is in :mod:`.schema`.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from labels.audit import AuditEntry
from labels.errors import AlreadyLabelledError, CalibrateError, NotFoundError, did_you_mean
from labels.models import (
    DEFAULT_CRITERION,
    PAIRWISE_VERDICTS,
    POINTWISE_VERDICTS,
    Criterion,
    Dataset,
    Item,
    Kind,
    Label,
)
from labels.provenance import Provenance
from labels.sampling import QueueSettings
from labels.stores import item_reads, label_reads, queue_store
from labels.stores.db import Database, equal_conditions
from labels.stores.history_store import OwnHistory, own_history
from labels.stores.item_reads import ITEM_COLUMNS, item_from_row
from labels.stores.label_writes import NewLabel as NewLabel  # defined beside the writes
from labels.stores.label_writes import (
    add_checked_label,
    insert_labels,
    label_values,
    provenance_values,
)
from labels.stores.queue_store import (
    Escalation as Escalation,  # re-exported: callers name it from here
)
from labels.stores.schema import LABEL_MIGRATIONS, LABEL_TABLES, QUEUE_MIGRATIONS, QUEUE_TABLES
from labels.validation import check_name, normalise_id

if TYPE_CHECKING:
    # Only for annotations: DuckDB's .df() builds the frames, and a command that never asks
    # for one (``calibrate datasets``) should not load pandas.
    import pandas as pd
    import pyarrow as pa


_LABEL_COLUMNS = (
    "label_id, dataset, item_id, annotator, criterion, verdict, note, failure_tags, "
    "labelled_at, seconds_spent, origin"
)


def _label_from_row(r: Sequence[Any]) -> Label:
    """A :class:`Label` from a row of :data:`_LABEL_COLUMNS`."""
    return Label(
        label_id=r[0], dataset=r[1], item_id=r[2], annotator=r[3], criterion=r[4],
        verdict=r[5], note=r[6], failure_tags=tuple(json.loads(r[7])), labelled_at=r[8],
        seconds_spent=r[9], origin=r[10],
    )


KNOWN_ITEMS = 4096
"""How many item ids (and annotator names) a store remembers as existing (see ``add_labels``)."""


_Named = TypeVar("_Named", Dataset, Criterion)


def _named(found: Sequence[_Named], name: str, what: str, plural: str) -> _Named:
    """The one of ``found`` called ``name``, or :class:`NotFoundError` listing them all."""
    for entry in found:
        if entry.name == name:
            return entry
    names = [entry.name for entry in found]
    raise NotFoundError(f"no {what} named {name!r}{did_you_mean(name, names)} "
                        f"({plural}: {', '.join(names) or 'none yet'})")


def stored_dataset_names(db: Database) -> list[str] | None:
    """Dataset names in ``db`` without migrating it; ``None`` when it is not a calibrate file.

    An empty file (no tables at all) gives ``[]``.
    """
    tables = db.table_names()
    if not tables:
        return []
    if "datasets" not in tables:
        return None
    with db.cursor() as cur:
        rows = cur.execute("SELECT name FROM datasets ORDER BY name").fetchall()
    return [str(r[0]) for r in rows]


class LabelStore:
    """Datasets, items and human labels in one DuckDB file.

    Every method takes its own cursor, so one store may be shared by many threads.
    Labels are append-only: re-labelling adds a row, and "the current label" is the latest per
    (item, annotator, criterion).

    Args:
        db: an open :class:`~.db.Database`; the ``labels`` migrations are applied to it.
    """

    TABLES = LABEL_TABLES + QUEUE_TABLES
    """The tables this store owns: no other store's SQL names them."""

    def __init__(self, db: Database) -> None:
        """Use ``db``, applying the ``labels`` migrations it lacks."""
        self.db = db
        db.ensure_migrated("labels", LABEL_MIGRATIONS)
        # Items and annotators seen to exist, so a label for one needs no query to check it:
        # on the Label page the row being labelled was read by item() in the run before, and
        # at 1,000,000 items that check scanned the item_id column on every key press
        # (8 ms median, 20 ms mean at load 13; DuckDB uses no index for the composite key).
        # Sound because nothing deletes or renames items or annotators; only names read
        # from, or committed to, the file are remembered.
        self._known_items: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._known_annotators: set[str] = set()
        self._known_lock = threading.Lock()

    def _remember(self, items: Iterable[tuple[str, str]] = (),
                  annotators: Iterable[str] = ()) -> None:
        with self._known_lock:
            for key in items:
                self._known_items[key] = None
                self._known_items.move_to_end(key)
            while len(self._known_items) > KNOWN_ITEMS:
                self._known_items.popitem(last=False)
            if len(self._known_annotators) < KNOWN_ITEMS:
                self._known_annotators.update(annotators)

    # -- datasets ---------------------------------------------------------------------------

    def create_dataset(
        self, name: str, *, kind: Kind = "pointwise", source_file: str | None = None
    ) -> None:
        """Create an empty dataset; an existing one with the same name is left as it is.

        Raises:
            InvalidNameError: ``name`` breaks :data:`labels.validation.NAME_RULE`.
        """
        name = check_name(name, "dataset")
        self.db.execute(
            "INSERT INTO datasets (name, kind, source_file) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [name, kind, source_file],
        )

    def datasets(self) -> list[Dataset]:
        """All datasets with their item, label and annotator counts."""
        rows = self.db.records(
            """
            SELECT d.name, d.kind, d.created_at, d.source_file,
                   (SELECT count(*) FROM items i WHERE i.dataset = d.name) AS items,
                   (SELECT count(*) FROM current_labels l WHERE l.dataset = d.name) AS labels,
                   (SELECT count(DISTINCT annotator) FROM labels l WHERE l.dataset = d.name)
                       AS annotators
            FROM datasets d ORDER BY d.created_at, d.name
            """
        )
        return [Dataset(**r) for r in rows]

    def dataset(self, name: str) -> Dataset:
        """One dataset by name, or :class:`NotFoundError` listing the ones that exist."""
        return _named(self.datasets(), name, "dataset", "datasets")

    # -- items ------------------------------------------------------------------------------

    def count_items(self, dataset: str) -> int:
        """Number of items in ``dataset``."""
        row = self.db.fetchone("SELECT count(*) FROM items WHERE dataset = ?", [dataset])
        return int(row[0]) if row else 0

    def item(self, dataset: str, item_id: str) -> Item:
        """One item, or :class:`NotFoundError`."""
        row = self.db.fetchone(
            f"SELECT {ITEM_COLUMNS} FROM items WHERE dataset = ? AND item_id = ?",
            [dataset, item_id],
        )
        if row is None:
            raise NotFoundError(f"dataset {dataset!r} has no item {item_id!r}")
        item = item_from_row(row)
        self._remember(items=[(dataset, item.item_id)])
        return item

    def item_and_labellers(self, dataset: str, item_id: str,
                           criterion: str) -> tuple[Item, frozenset[str]]:
        """One item and who has labelled it for ``criterion``, in one query (or NotFoundError).

        The Label page reads both for the row it serves on every key press.
        """
        row = self.db.fetchone(
            f"SELECT {ITEM_COLUMNS}, (SELECT list(annotator) FROM labels WHERE "
            "dataset = $1 AND item_id = $2 AND criterion = $3) FROM items "
            "WHERE dataset = $1 AND item_id = $2", [dataset, item_id, criterion])
        if row is None:
            raise NotFoundError(f"dataset {dataset!r} has no item {item_id!r}")
        self._remember(items=[(dataset, row[0])])
        return item_from_row(row), frozenset(row[10] or ())

    def items(self, dataset: str, *, item_ids: Iterable[str] | None = None) -> list[Item]:
        """Items of ``dataset`` in file order (optionally only ``item_ids``)."""
        with self.db.cursor() as cur:
            if item_ids is None:
                rows = cur.execute(
                    f"SELECT {ITEM_COLUMNS} FROM items WHERE dataset = ? ORDER BY position",
                    [dataset],
                ).fetchall()
            else:  # IN (unnest): a hash semi-join, where list_contains scanned the list per row
                rows = cur.execute(
                    f"SELECT {ITEM_COLUMNS} FROM items WHERE dataset = ? "
                    "AND item_id IN (SELECT unnest(?::VARCHAR[])) ORDER BY position",
                    [dataset, list(item_ids)],
                ).fetchall()
        return [item_from_row(r) for r in rows]

    def items_frame(self, dataset: str) -> pd.DataFrame:
        """Items of ``dataset`` as a DataFrame (sources and metadata as JSON text)."""
        return self.db.frame(
            f"SELECT {ITEM_COLUMNS}, content_hash FROM items WHERE dataset = ? "
            "ORDER BY position",
            [dataset],
        )

    def item_groups(self, dataset: str) -> dict[str, Any]:
        """``item_id``, ``segment``, ``document_id`` of every item, in file order (no text)."""
        return item_reads.item_groups(self.db, dataset)

    def content_batches(
        self, dataset: str, *, item_ids: Sequence[str] | None = None,
        labelled_for: str | None = None, limit: int | None = None, batch_rows: int = 4_096,
    ) -> Iterator[pa.RecordBatch]:
        """What a judge sees of the chosen items, a batch at a time (:mod:`.item_reads`)."""
        return item_reads.content_batches(self.db, dataset, item_ids=item_ids,
                                          labelled_for=labelled_for, limit=limit,
                                          batch_rows=batch_rows)

    def stored_hashes(self, dataset: str) -> pa.Table:
        """``item_id`` and the stored ``item_hash`` of the dataset's items, in file order."""
        return item_reads.stored_hashes(self.db, dataset)

    def existing_ids(self, dataset: str, item_ids: Sequence[str]) -> set[str]:
        """Which of ``item_ids`` the dataset has."""
        return item_reads.existing_ids(self.db, dataset, item_ids)

    def first_lacking(self, dataset: str, item_ids: Iterable[str],
                      columns: Sequence[str]) -> str | None:
        """The first of ``item_ids`` (file order) with no value in one of the item ``columns``."""
        return item_reads.first_lacking(self.db, dataset, item_ids, columns)

    def dataset_content_hash(self, dataset: str) -> str:
        """A hash over the content of every item of ``dataset`` (order-independent)."""
        return item_reads.dataset_content_hash(self.db, dataset)

    # -- annotators and criteria ------------------------------------------------------------

    def add_annotator(self, name: str) -> None:
        """Register an annotator (idempotent); surrounding spaces are dropped.

        Raises:
            InvalidNameError: the name breaks :data:`labels.validation.NAME_RULE`.
        """
        name = check_name(name.strip(), "annotator")
        self.db.execute("INSERT INTO annotators (name) VALUES (?) ON CONFLICT DO NOTHING", [name])

    def annotators(self) -> list[str]:
        """Names of all annotators."""
        with self.db.cursor() as cur:
            return [
                r[0] for r in cur.execute("SELECT name FROM annotators ORDER BY name").fetchall()
            ]

    def criteria(self) -> list[Criterion]:
        """All criteria."""
        rows = self.db.records(
            "SELECT name, kind, guidelines, show_reference, failure_tags FROM criteria "
            "ORDER BY name"
        )
        return [Criterion(**{**r, "failure_tags": tuple(json.loads(r["failure_tags"]))})
                for r in rows]

    def criterion(self, name: str) -> Criterion:
        """One criterion by name, or :class:`NotFoundError`."""
        return _named(self.criteria(), name, "criterion", "criteria")

    def save_criterion(self, criterion: Criterion) -> None:
        """Create or update a criterion (guidelines, tags, reference visibility).

        Raises:
            InvalidNameError: the criterion's name breaks :data:`labels.validation.NAME_RULE`.
        """
        criterion = criterion.model_copy(update={"name": check_name(criterion.name, "criterion")})
        self.db.execute(
            """
            INSERT INTO criteria (name, kind, guidelines, show_reference, failure_tags)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET kind = excluded.kind,
                guidelines = excluded.guidelines, show_reference = excluded.show_reference,
                failure_tags = excluded.failure_tags
            """,
            [
                criterion.name,
                criterion.kind,
                criterion.guidelines,
                criterion.show_reference,
                json.dumps(list(criterion.failure_tags)),
            ],
        )

    # -- labels -----------------------------------------------------------------------------

    def add_label(
        self,
        dataset: str,
        item_id: str,
        annotator: str,
        verdict: str,
        *,
        criterion: str = DEFAULT_CRITERION,
        note: str = "",
        failure_tags: Sequence[str] = (),
        seconds_spent: float | None = None,
        labelled_at: datetime | None = None,
        origin: str = "app",
        provenance: Provenance | None = None,
        new_only: bool = False,
    ) -> Label:
        """Append one label and return it as stored (committed when this returns).

        ``provenance`` records how the row was chosen (default: ``unknown``). With ``new_only``,
        :class:`AlreadyLabelledError` instead when ``annotator`` has labelled the item for
        ``criterion`` already (checked inside the transaction that saves it).
        """
        new = NewLabel(
            item_id=item_id,
            annotator=annotator,
            verdict=verdict,
            criterion=criterion,
            note=note,
            failure_tags=tuple(failure_tags),
            seconds_spent=seconds_spent,
            labelled_at=labelled_at,
            origin=origin,
            provenance=provenance or Provenance(),
        )
        return self.add_labels(dataset, [new], new_only=new_only)[0]

    def add_labels(self, dataset: str, labels: Sequence[NewLabel], *,
                   new_only: bool = False) -> list[Label]:
        """Append labels in one transaction: all are stored, or none.

        With ``new_only``, none is stored when an annotator has labelled one of the items for
        its criterion already: :class:`AlreadyLabelledError`.
        """
        if not labels:
            return []
        if len(labels) == 1:
            one = self._add_one_label(dataset, labels[0], new_only=new_only)
            if one is not None:
                return [one]
            # A check failed, or the item or annotator is new to this store: the path below
            # checks and registers them, and names what is wrong.
        item_ids = [normalise_id(new.item_id) for new in labels]
        who = [new.annotator.strip() for new in labels]
        # Labels that exist already: in the first statement, the one that reads the kinds.
        given = ("(SELECT list([item_id, annotator, criterion]) FROM labels WHERE dataset = ? "
                 "AND list_contains(?, item_id) AND list_contains(?, annotator))")
        with self.db.transaction() as cur:
            # Few statements: each costs a trip through the GIL, which a judge run in the same
            # process keeps busy; on the Label page this takes an annotator's first label (the
            # later ones go through _add_one_label).
            # The new labels' ids too (a label refused below leaves a gap, as a rollback does).
            found_kinds = cur.execute(
                "SELECT name, kind, NULL, NULL FROM criteria UNION ALL "
                f"SELECT NULL, kind, {given if new_only else 'NULL'}, (SELECT "
                "list(nextval('label_ids') ORDER BY range) FROM range(?)) FROM datasets "
                "WHERE name = ? ORDER BY name NULLS FIRST",
                [dataset, item_ids, who, len(labels), dataset] if new_only
                else [len(labels), dataset]).fetchall()
            if not any(name is None for name, _, _, _ in found_kinds):
                raise NotFoundError(f"no dataset named {dataset!r}")
            kinds = {name: kind for name, kind, _, _ in found_kinds if name is not None}
            done = {tuple(t) for t in found_kinds[0][2] or ()}
            ids = sorted(int(i) for i in found_kinds[0][3])
            if any((i, a, new.criterion) in done
                   for i, a, new in zip(item_ids, who, labels, strict=True)):
                raise AlreadyLabelledError("that row has a label from that annotator already")
            rows: list[list[Any]] = []
            now = datetime.now(UTC)
            for new in labels:
                kind = kinds.get(new.criterion)
                if kind is None:
                    raise NotFoundError(
                        f"no criterion named {new.criterion!r} (criteria: {', '.join(kinds)})"
                    )
                allowed = PAIRWISE_VERDICTS if kind == "pairwise" else POINTWISE_VERDICTS
                if new.verdict not in allowed:
                    raise CalibrateError(
                        f"verdict {new.verdict!r} is not one of {', '.join(allowed)} "
                        f"(criterion {new.criterion!r})"
                    )
                annotator = check_name(new.annotator.strip(), "annotator")
                at = new.labelled_at or now
                if at.tzinfo is None:
                    raise CalibrateError("labelled_at must be timezone-aware")
                rows.append(label_values(dataset, new, annotator, at))
            with self._known_lock:
                wanted = [i for i in dict.fromkeys(r[1] for r in rows)
                          if (dataset, i) not in self._known_items]
                names = [a for a in dict.fromkeys(r[2] for r in rows)
                         if a not in self._known_annotators]
            found, known = (cur.execute(
                "SELECT (SELECT list(item_id) FROM items WHERE dataset = ? "
                "AND list_contains(?, item_id)), "
                "(SELECT list(name) FROM annotators WHERE list_contains(?, name))",
                [dataset, wanted, names],
            ).fetchall() or [(None, None)])[0] if wanted or names else ((), ())
            stored_ids = set(found or ())
            missing = [i for i in wanted if i not in stored_ids]
            if missing:
                raise NotFoundError(
                    f"dataset {dataset!r} has no item {missing[0]!r}"
                    + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
                )
            for annotator in set(names) - set(known or ()):
                cur.execute(
                    "INSERT INTO annotators (name) VALUES (?) ON CONFLICT DO NOTHING", [annotator]
                )
            provenance = [provenance_values(i, n.provenance)
                          for i, n in zip(ids, labels, strict=True)]
            out = insert_labels(cur, [[i, *r] for i, r in zip(ids, rows, strict=True)],
                                provenance, returning=_LABEL_COLUMNS)
            by_id = {row[0]: row for row in out}
            stored = [_label_from_row(by_id[i]) for i in ids]
        self._remember(items=((dataset, i) for i in wanted), annotators=names)  # committed
        return stored

    def _add_one_label(self, dataset: str, new: NewLabel, *, new_only: bool) -> Label | None:
        """One label in two statements (a Label page key press) if item and annotator are known.

        None: nothing stored (see :func:`labels.stores.label_writes.add_checked_label`).
        """
        with self._known_lock:
            known = ((dataset, normalise_id(new.item_id)) in self._known_items
                     and new.annotator.strip() in self._known_annotators)
        stored = add_checked_label(self.db, dataset, new, new_only=new_only,
                                   returning=_LABEL_COLUMNS) if known else None
        return None if stored is None else _label_from_row(stored)

    def history(
        self,
        dataset: str,
        item_id: str,
        *,
        annotator: str | None = None,
        criterion: str | None = None,
    ) -> list[Label]:
        """Every label ever given to an item, oldest first."""
        where, params = self._filters(dataset, annotator=annotator, criterion=criterion)
        rows = self.db.fetchall(
            f"SELECT {_LABEL_COLUMNS} FROM labels "
            f"WHERE {where} AND item_id = ? ORDER BY labelled_at, label_id",
            [*params, item_id],
        )
        return [_label_from_row(r) for r in rows]

    @staticmethod
    def _filters(
        dataset: str, *, annotator: str | None = None, criterion: str | None = None
    ) -> tuple[str, list[Any]]:
        where, params = equal_conditions(
            {"dataset": dataset, "annotator": annotator, "criterion": criterion})
        return " AND ".join(where), params

    def current_labels(
        self, dataset: str, *, criterion: str | None = None, annotator: str | None = None
    ) -> pd.DataFrame:
        """The latest label per (item, annotator, criterion), as a DataFrame."""
        where, params = self._filters(dataset, annotator=annotator, criterion=criterion)
        return self.db.frame(
            "SELECT label_id, item_id, annotator, criterion, verdict, note, failure_tags, "
            f"labelled_at, seconds_spent, origin FROM current_labels WHERE {where} "
            "ORDER BY item_id, annotator, criterion",
            params,
        )

    def provenance_frame(self, dataset: str, *, criterion: str | None = None) -> pd.DataFrame:
        """The current labels with how their rows were chosen (``unknown`` when not recorded).

        Columns: ``label_id, item_id, annotator, criterion, verdict, origin, selection,
        stratum, inclusion_probability, selection_share, judge``.
        """
        where, params = self._filters(dataset, criterion=criterion)
        return self.db.frame(
            "SELECT c.label_id, c.item_id, c.annotator, c.criterion, c.verdict, c.origin, "
            "coalesce(p.selection, 'unknown') AS selection, p.stratum, "
            "p.inclusion_probability, p.selection_share, p.judge "
            f"FROM (SELECT * FROM current_labels WHERE {where}) c "
            "LEFT JOIN label_provenance p USING (label_id) "
            "ORDER BY c.item_id, c.annotator, c.criterion",
            params,
        )

    def current_provenance(
        self, dataset: str, item_id: str, annotator: str, criterion: str
    ) -> Provenance:
        """How the row of ``annotator``'s current label of ``item_id`` was chosen.

        An edit keeps it: the row was sampled when it was first served, whatever plan is
        current when the label is revised (``unknown`` when none was recorded).
        """
        rows = self.db.records(
            "SELECT p.selection, p.stratum, p.inclusion_probability, p.selection_share, "
            "p.judge FROM current_labels c JOIN label_provenance p USING (label_id) "
            "WHERE c.dataset = ? AND c.item_id = ? AND c.annotator = ? AND c.criterion = ?",
            [dataset, item_id, annotator, criterion])
        return Provenance(**rows[0]) if rows else Provenance()

    def label_history_frame(self, dataset: str, *, criterion: str | None = None) -> pd.DataFrame:
        """Every label version of ``dataset`` (optionally one criterion), oldest first."""
        where, params = self._filters(dataset, criterion=criterion)
        return self.db.frame(
            "SELECT label_id, item_id, annotator, criterion, verdict, note, failure_tags, "
            f"labelled_at, seconds_spent, origin FROM labels WHERE {where} "
            "ORDER BY labelled_at, label_id",
            params,
        )

    def labelled_item_ids(self, dataset: str, annotator: str, criterion: str) -> set[str]:
        """Items this annotator has a current label for (any verdict)."""
        rows = self.db.fetchall(
            "SELECT DISTINCT item_id FROM labels WHERE dataset = ? AND annotator = ? "
            "AND criterion = ?",
            [dataset, annotator, criterion],
        )
        return {r[0] for r in rows}

    def label_counts(self, dataset: str, criterion: str) -> dict[str, int]:
        """Number of distinct annotators with a current label, per item (labelled items only)."""
        rows = self.db.fetchall(
            "SELECT item_id, count(DISTINCT annotator) FROM labels "
            "WHERE dataset = ? AND criterion = ? GROUP BY item_id",
            [dataset, criterion],
        )
        return {r[0]: int(r[1]) for r in rows}

    def labelled_rows(self, dataset: str, criterion: str) -> list[tuple[str, str, str | None]]:
        """``(item_id, verdict, segment)`` of each current label for ``criterion``, by item id."""
        return label_reads.labelled_rows(self.db, dataset, criterion)

    def label_events(self, limit: int | None = None) -> list[AuditEntry]:
        """Every label version as an audit entry, newest first (the newest ``limit`` only)."""
        return label_reads.label_events(self.db, limit)

    def labels_since(self, dataset: str, criterion: str,
                     after_id: int) -> label_reads.LabelsSince:
        """See :func:`labels.stores.label_reads.labels_since` (the Label page's queue read)."""
        return label_reads.labels_since(self.db, dataset, criterion, after_id)

    # -- queue support for the labelling app ------------------------------------------------

    def dataset_kinds(self) -> dict[str, Kind]:
        """Dataset name → kind, without counting anything (cheap enough for every rerun)."""
        rows = self.db.fetchall(
            "SELECT name, kind FROM datasets ORDER BY created_at, name"
        )
        return {r[0]: r[1] for r in rows}

    def item_ids(self, dataset: str) -> list[str]:
        """Every item id of ``dataset`` in file order."""
        rows = self.db.fetchall(
            "SELECT item_id FROM items WHERE dataset = ? ORDER BY position", [dataset]
        )
        return [r[0] for r in rows]

    def labelled_in_order(self, dataset: str, annotator: str, criterion: str) -> list[str]:
        """Items ``annotator`` labelled for ``criterion``, in the order of their first label.

        Editing a label adds a newer version but does not move the item in this list, so an
        annotator stepping back through their work sees a stable sequence.
        """
        return queue_store.labelled_in_order(self.db, dataset, annotator, criterion)

    def queue_snapshot(
        self, dataset: str, annotator: str, criterion: str
    ) -> tuple[int, set[str], dict[str, int]]:
        """(items, items ``annotator`` labelled, item id → annotators with a label), one query.

        See :func:`labels.stores.queue_store.queue_snapshot`.
        """
        return queue_store.queue_snapshot(self.db, dataset, annotator, criterion)

    def skip(self, dataset: str, criterion: str, annotator: str, item_id: str) -> None:
        """Record that ``annotator`` skipped ``item_id``: it moves to the end of their queue.

        Skipping the same row again moves it to the end again.
        """
        queue_store.skip(self.db, dataset, criterion, annotator, item_id)

    def skipped(self, dataset: str, criterion: str, annotator: str) -> list[str]:
        """Items ``annotator`` skipped for (dataset, criterion), oldest skip first."""
        return queue_store.skipped(self.db, dataset, criterion, annotator)

    def own_history(self, dataset: str, criterion: str, annotator: str, *, search: str = "",
                    verdict: str | None = None, limit: int = 10, offset: int = 0
                    ) -> OwnHistory:
        """``annotator``'s own labelled and skipped rows, newest first (the "My labels" list).

        Only that annotator's labels and notes are read, whatever the caller asks: see
        :func:`labels.stores.history_store.own_history` for the search and the filter.
        """
        self.db.ensure_migrated("queue", QUEUE_MIGRATIONS)
        return own_history(self.db, dataset, criterion, annotator, search=search,
                           verdict=verdict, limit=limit, offset=offset)

    def open_work(self, annotator: str) -> list[tuple[str, str, int]]:
        """(dataset, criterion, rows still waiting for ``annotator``) wherever that is above 0.

        Every dataset against every criterion of its kind (:func:`.queue_store.open_work`).
        """
        return queue_store.open_work(self.db, annotator, self.criteria(), self.dataset_kinds())

    def queue_settings(self, dataset: str, criterion: str) -> QueueSettings:
        """The eval owner's queue settings for (dataset, criterion); defaults when never set."""
        return queue_store.queue_settings(self.db, dataset, criterion)

    def save_escalation(
        self, dataset: str, criterion: str, rule: str, item_ids: Iterable[str], *,
        judge: str | None = None,
    ) -> Escalation:
        """Record the rows acceptance rule ``rule`` escalated (the newest escalation is served).

        Recording the same rule again replaces its rows; earlier rules are kept, so labels
        drawn under them stay traceable to the rows they were drawn from.

        Raises:
            NotFoundError: an unknown dataset or criterion, or an id not in the dataset.
        """
        self.dataset(dataset)
        self.criterion(criterion)
        ids = list(dict.fromkeys(str(i) for i in item_ids))
        missing = set(ids) - set(self.item_ids(dataset))
        if missing:
            raise NotFoundError(f"{len(missing)} escalated ids are not rows of {dataset!r}: "
                                f"{sorted(missing)[:3]}")
        return queue_store.save_escalation(self.db, dataset, criterion, rule, ids, judge=judge)

    def escalation(self, dataset: str, criterion: str, *,
                   rule: str | None = None) -> Escalation | None:
        """The newest escalation of (dataset, criterion), or rule ``rule``'s; None without one.

        ``item_ids`` are in file order.
        """
        return queue_store.escalation(self.db, dataset, criterion, rule=rule)

    def escalation_stamp(self, dataset: str, criterion: str) -> tuple[str, datetime] | None:
        """``(rule, escalated_at)`` of the newest escalation (one cheap query), or None."""
        return queue_store.escalation_stamp(self.db, dataset, criterion)

    def save_queue_settings(self, dataset: str, criterion: str, settings: QueueSettings) -> None:
        """Store the queue settings every annotator of (dataset, criterion) will get."""
        queue_store.save_queue_settings(self.db, dataset, criterion, settings)
