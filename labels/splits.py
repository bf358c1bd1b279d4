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
  :meth:`labels.stores.split_store.SplitStore.ensure`), continuing each stratum's balance.

The tables (:mod:`labels.stores.split_store`, migration set ``splits``) live in the same DuckDB
file,
beside the link table of derived items (perturbed copies made by ``calibrate judge stress``;
they live in a dataset of their own, get no labels and never enter a split or a calibration).
This module is pure: the assignment rule and the records.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from labels.errors import CalibrateError

Split = Literal["dev", "test"]
DERIVED_SUFFIX = ".stress"
"""Perturbed copies of dataset ``d`` live in dataset ``d + DERIVED_SUFFIX``."""
DEFAULT_SEED = 17
DEFAULT_TEST_SHARE = 0.5



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


def consensus(verdicts: Iterable[str]) -> str:
    """One row's label for stratifying: the annotators' common verdict, or ``mixed``."""
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


__all__ = [
    "DEFAULT_SEED", "DEFAULT_TEST_SHARE", "DERIVED_SUFFIX", "DerivedItem", "Split", "SplitSummary",
    "assign_splits", "consensus", "stratum_of",
]

