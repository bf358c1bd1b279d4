"""SplitStore: the only SQL on the dev/test split and the derived-item links (set ``splits``).

The rule that assigns rows is pure (:mod:`labels.splits`); this module reads the labelled rows
through the label store (whose tables they are), applies the rule and stores the result, one
transaction per call.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from labels.errors import CalibrateError, ConflictError
from labels.splits import (
    DEFAULT_SEED,
    DEFAULT_TEST_SHARE,
    DerivedItem,
    Split,
    SplitSummary,
    assign_splits,
    consensus,
    stratum_of,
)
from labels.stores.db import Database
from labels.stores.migrations import Migration

if TYPE_CHECKING:
    from labels.stores.label_store import LabelStore

M001_SPLITS = """
CREATE TABLE split_settings (
    dataset VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    seed BIGINT NOT NULL,
    test_share DOUBLE NOT NULL CHECK (test_share > 0 AND test_share < 1),
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (dataset, criterion)
);
CREATE TABLE split_rows (
    dataset VARCHAR NOT NULL,
    criterion VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL CHECK (split IN ('dev', 'test')),
    stratum VARCHAR NOT NULL,
    assigned_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (dataset, criterion, item_id)
);
CREATE TABLE derived_items (
    dataset VARCHAR NOT NULL,
    item_id VARCHAR NOT NULL,
    origin_dataset VARCHAR NOT NULL,
    origin_item_id VARCHAR NOT NULL,
    perturbation VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (dataset, item_id)
)
"""

# One process owns the DuckDB file; inside it, sessions and threads that read a split at the
# same moment would each assign the same new rows and collide on the primary key, so the
# read-assign-write of :meth:`SplitStore.ensure` runs under one lock per process.
_ENSURE_LOCK = threading.Lock()

SPLIT_MIGRATIONS = [Migration("m001_splits", M001_SPLITS)]


class SplitStore:
    """The dev/test split and the derived-item links (the only SQL on these tables).

    Args:
        db: an open :class:`~labels.stores.db.Database`; the ``splits`` migrations are applied.
        labels: the label store of the same database, which the labelled rows are read through.
    """

    TABLES = ("derived_items", "split_rows", "split_settings")
    """The tables this store owns: no other store's SQL names them."""

    def __init__(self, db: Database, labels: LabelStore) -> None:
        """Use ``db``, applying the ``splits`` migrations it lacks."""
        self.db = db
        self.labels = labels
        db.ensure_migrated("splits", SPLIT_MIGRATIONS)

    def ensure(
        self, dataset: str, criterion: str, *, seed: int | None = None,
        test_share: float | None = None,
    ) -> SplitSummary:
        """Make the split if it does not exist, assign rows labelled since, and return it.

        Args:
            dataset: Dataset name.
            criterion: Criterion name.
            seed: Seed of a new split (default :data:`DEFAULT_SEED`); an existing split
                keeps its own, and a different one is refused (a split is made once).
            test_share: Target share of test rows of a new split (default
                :data:`DEFAULT_TEST_SHARE`); same rule.

        Raises:
            ConflictError: ``seed`` or ``test_share`` differ from the existing split's.
            CalibrateError: the dataset is made of derived (perturbed) rows.
        """
        if self.is_derived_dataset(dataset):
            raise CalibrateError(
                f"dataset {dataset!r} holds perturbed copies of rows (calibrate judge stress); "
                "it is never split or used for calibration"
            )
        with _ENSURE_LOCK, self.db.transaction() as cur:
            row = cur.execute(
                "SELECT seed, test_share FROM split_settings WHERE dataset = ? AND criterion = ?",
                [dataset, criterion],
            ).fetchone()
            if row is None:
                use_seed = DEFAULT_SEED if seed is None else int(seed)
                share = DEFAULT_TEST_SHARE if test_share is None else float(test_share)
                if not 0.0 < share < 1.0:
                    raise CalibrateError(f"test share must be between 0 and 1, got {share}")
                cur.execute(
                    "INSERT INTO split_settings (dataset, criterion, seed, test_share) "
                    "VALUES (?, ?, ?, ?)", [dataset, criterion, use_seed, share],
                )
            else:
                use_seed, share = int(row[0]), float(row[1])
                if (seed is not None and int(seed) != use_seed) or (
                    test_share is not None and not math.isclose(float(test_share), share)
                ):
                    raise ConflictError(
                        f"{dataset}/{criterion} was split with seed {use_seed} and test share "
                        f"{share:g}; a split is made once (a fresh test set means new labels)"
                    )
            labelled = self.labels.labelled_rows(dataset, criterion)
            stored = cur.execute(
                "SELECT item_id, split, stratum FROM split_rows "
                "WHERE dataset = ? AND criterion = ?", [dataset, criterion],
            ).fetchall()
            existing = {r[0]: (r[1], r[2]) for r in stored}
            by_item: dict[str, list[str]] = {}
            segments: dict[str, str | None] = {}
            for item_id, verdict, segment in labelled:
                by_item.setdefault(item_id, []).append(verdict)
                segments[item_id] = segment
            rows = [(i, stratum_of(consensus(v), segments[i])) for i, v in by_item.items()]
            strata = dict(rows)
            new = assign_splits(rows, existing, seed=use_seed, test_share=share)
            if new:
                cur.executemany(
                    "INSERT INTO split_rows (dataset, criterion, item_id, split, stratum) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [[dataset, criterion, i, s, strata[i]] for i, s in sorted(new.items())],
                )
        splits: dict[str, Split] = {i: "test" if s == "test" else "dev"
                                    for i, (s, _) in existing.items()}
        splits.update(new)
        return SplitSummary(dataset, criterion, use_seed, share, splits, len(new))

    # -- derived items ----------------------------------------------------------------------

    def link_derived(self, links: Sequence[DerivedItem]) -> None:
        """Record where perturbed rows came from (idempotent per derived row)."""
        if not links:
            return
        with self.db.transaction() as cur:
            cur.executemany(
                "INSERT INTO derived_items (dataset, item_id, origin_dataset, origin_item_id, "
                "perturbation) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [[d.dataset, d.item_id, d.origin_dataset, d.origin_item_id, d.perturbation]
                 for d in links],
            )

    def derived(self, dataset: str) -> list[DerivedItem]:
        """The derived rows stored in ``dataset`` with their origins."""
        rows = self.db.fetchall(
            "SELECT dataset, item_id, origin_dataset, origin_item_id, perturbation "
            "FROM derived_items WHERE dataset = ? ORDER BY item_id", [dataset],
        )
        return [DerivedItem(*r) for r in rows]

    def is_derived_dataset(self, dataset: str) -> bool:
        """Whether ``dataset`` holds derived (perturbed) rows."""
        row = self.db.fetchone(
            "SELECT count(*) FROM derived_items WHERE dataset = ?", [dataset]
        )
        return bool(row and row[0])

    def derived_datasets(self) -> set[str]:
        """Every dataset that holds derived rows."""
        with self.db.cursor() as cur:
            return {r[0] for r in cur.execute(
                "SELECT DISTINCT dataset FROM derived_items").fetchall()}


__all__ = ["SPLIT_MIGRATIONS", "SplitStore"]
