"""Dev / test discipline for tuning judges: a seeded, stratified split made once per criterion.

Tuning a judge prompt on the rows that then "prove" the improvement gives optimistic numbers.
So the labelled rows of a dataset and criterion are split once into **dev** (shown while
tuning: disagreement lists, proposals) and **test** (evaluated, never shown row by row).

* Stratified by the human label (consensus of the current labels: ``pass``, ``fail``,
  ``unsure``, or ``mixed`` when annotators disagree) and the row's ``segment``.
* Seeded: the order inside a stratum is a hash of ``(seed, item_id)``, and each stratum gets a
  random start (systematic sampling), so every stratum's test share is within one row of
  ``test_share`` whatever order the rows arrive in.
* Made once: a row keeps its split forever, even when its label changes later. Rows labelled
  after the split was made are assigned when they are first read (every reader calls
  :meth:`SplitStore.ensure`), continuing each stratum's balance.

The table lives in the same DuckDB file (migration set ``splits``), beside the link table of
derived items (perturbed copies made by ``calibrate judge stress``; they live in a dataset of
their own, get no labels and never enter a split or a calibration).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from labels.db import Database
from labels.errors import CalibrateError, ConflictError
from labels.migrations import Migration

Split = Literal["dev", "test"]
DERIVED_SUFFIX = ".stress"
"""Perturbed copies of dataset ``d`` live in dataset ``d + DERIVED_SUFFIX``."""
DEFAULT_SEED = 17
DEFAULT_TEST_SHARE = 0.5

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

SPLIT_MIGRATIONS = [Migration("m001_splits", M001_SPLITS)]
EXPECTED_TABLES = ("derived_items", "split_rows", "split_settings")


def _unit(*parts: object) -> float:
    """A number in [0, 1) fixed by ``parts`` (BLAKE2b), the split's only source of chance."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


def stratum_of(verdict: str, segment: str | None) -> str:
    """The stratum key of a row: its human label and its segment (``-`` when none)."""
    return f"{verdict}|{segment if segment else '-'}"


def assign_splits(
    rows: Sequence[tuple[str, str]],
    existing: Mapping[str, tuple[str, str]],
    *,
    seed: int,
    test_share: float,
) -> dict[str, Split]:
    """Assign new rows to dev or test, continuing each stratum's balance.

    Args:
        rows: ``(item_id, stratum)`` of every labelled row (assigned ones are skipped).
        existing: ``item_id -> (split, stratum)`` of the rows assigned before.
        seed: The split's seed.
        test_share: Target share of test rows in every stratum, in (0, 1).

    Returns:
        ``item_id -> split`` for the rows of ``rows`` not in ``existing``.

    Examples:
        >>> rows = [(f"r{i}", "pass|-") for i in range(10)]
        >>> out = assign_splits(rows, {}, seed=1, test_share=0.5)
        >>> sorted(Counter(out.values()).items())
        [('dev', 5), ('test', 5)]
    """
    if not 0.0 < test_share < 1.0:
        raise CalibrateError(f"test share must be between 0 and 1, got {test_share}")
    counts: dict[str, Counter[str]] = {}
    for side, stratum in existing.values():
        counts.setdefault(stratum, Counter())[side] += 1
    new: dict[str, list[str]] = {}
    for item_id, stratum in rows:
        if item_id not in existing:
            new.setdefault(stratum, []).append(item_id)
    out: dict[str, Split] = {}
    for stratum, ids in new.items():
        seen = counts.setdefault(stratum, Counter())
        start = _unit(seed, "start", stratum)
        for item_id in sorted(set(ids), key=lambda i: _unit(seed, i)):
            total = seen["dev"] + seen["test"] + 1
            # Systematic sampling with a random start: test when the running count of test
            # rows (plus the start) falls below its target; never more than one row off.
            split: Split = "test" if seen["test"] + start < test_share * total else "dev"
            seen[split] += 1
            out[item_id] = split
    return out


@dataclass(frozen=True)
class SplitSummary:
    """The split of one dataset and criterion.

    Attributes:
        dataset: Dataset name.
        criterion: Criterion name.
        seed: The split's seed.
        test_share: Target share of test rows.
        splits: ``item_id -> "dev" | "test"`` of every labelled row.
        newly_assigned: Rows assigned by this call (labels that arrived since the last read).
    """

    dataset: str
    criterion: str
    seed: int
    test_share: float
    splits: dict[str, Split]
    newly_assigned: int

    def ids(self, split: Split) -> list[str]:
        """Item ids of one side, sorted."""
        return sorted(i for i, s in self.splits.items() if s == split)

    def describe(self) -> str:
        """One line: the sizes of both sides and how the split was made."""
        n = Counter(self.splits.values())
        return (f"{self.dataset}/{self.criterion}: {n['dev']} dev and {n['test']} test rows "
                f"(seed {self.seed}, test share {self.test_share:g}, stratified by human label "
                f"and segment; {self.newly_assigned} assigned now)")


def _consensus(verdicts: Iterable[str]) -> str:
    kinds = set(verdicts)
    return kinds.pop() if len(kinds) == 1 else "mixed"


@dataclass(frozen=True)
class DerivedItem:
    """A perturbed copy of a row: where it lives, where it came from and how it was made."""

    dataset: str
    item_id: str
    origin_dataset: str
    origin_item_id: str
    perturbation: str


class SplitStore:
    """The dev/test split and the derived-item links (the only SQL on these tables)."""

    def __init__(self, db: Database) -> None:
        """Use ``db``, applying the ``splits`` migrations it lacks."""
        self.db = db
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
        with self.db.transaction() as cur:
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
            labelled = cur.execute(
                "SELECT l.item_id, l.verdict, i.segment FROM current_labels l "
                "JOIN items i ON i.dataset = l.dataset AND i.item_id = l.item_id "
                "WHERE l.dataset = ? AND l.criterion = ? ORDER BY l.item_id",
                [dataset, criterion],
            ).fetchall()
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
            rows = [(i, stratum_of(_consensus(v), segments[i])) for i, v in by_item.items()]
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
        with self.db.cursor() as cur:
            rows = cur.execute(
                "SELECT dataset, item_id, origin_dataset, origin_item_id, perturbation "
                "FROM derived_items WHERE dataset = ? ORDER BY item_id", [dataset],
            ).fetchall()
        return [DerivedItem(*r) for r in rows]

    def is_derived_dataset(self, dataset: str) -> bool:
        """Whether ``dataset`` holds derived (perturbed) rows."""
        with self.db.cursor() as cur:
            row = cur.execute(
                "SELECT count(*) FROM derived_items WHERE dataset = ?", [dataset]
            ).fetchone()
        return bool(row and row[0])

    def derived_datasets(self) -> set[str]:
        """Every dataset that holds derived rows."""
        with self.db.cursor() as cur:
            return {r[0] for r in cur.execute(
                "SELECT DISTINCT dataset FROM derived_items").fetchall()}


__all__ = [
    "DEFAULT_SEED", "DEFAULT_TEST_SHARE", "DERIVED_SUFFIX", "EXPECTED_TABLES", "SPLIT_MIGRATIONS",
    "DerivedItem", "Split", "SplitStore", "SplitSummary", "assign_splits", "stratum_of",
]

