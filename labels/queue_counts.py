"""Who labelled which row, kept up to date by reading only the labels added since the last look.

The Label page needs, on every key press, the number of annotators of every row (rows with
``overlap`` of them leave the queue) and the rows the annotator labelled. Reading every label of
the dataset each time grows with the labels: 75-107 ms per key press at 100,000 labels. Labels
are only ever appended with increasing ids, so :class:`LabelTally` keeps the tally per (dataset,
criterion) and reads the labels with a higher id than it has seen, together with the number of
labels: when the numbers disagree (a transaction with a lower id committed later) it reads
everything again, so the result is always that of :meth:`LabelStore.queue_snapshot`.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from labels.sampling import Progress, QueueSettings
from labels.stores.label_store import LabelStore


@dataclass(frozen=True)
class _Tally:
    """The tally of one (dataset, criterion).

    Replaced as a whole on every change, so readers never see it change under them: its dicts
    and sets are never mutated once published.
    """

    labels: int = 0
    last_id: int = -1
    annotators: dict[str, frozenset[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    by_annotator: dict[str, frozenset[str]] = field(default_factory=dict)
    histogram: dict[int, int] = field(default_factory=dict)  # annotators -> rows with that many


class QueueCounts(NamedTuple):
    """One annotator's view of the labels of a (dataset, criterion); read-only (shared).

    Attributes:
        total: items in the dataset.
        mine: items the annotator labelled.
        counts: item id → number of annotators with a label.
        histogram: number of annotators → number of items with exactly that many.
        by_annotator: annotator → the items they labelled (everyone's; for assignments).
        settings: the queue settings of the (dataset, criterion), read with the counts.
    """

    total: int
    mine: frozenset[str]
    counts: Mapping[str, int]
    histogram: Mapping[int, int]
    by_annotator: Mapping[str, frozenset[str]] = MappingProxyType({})
    settings: QueueSettings = QueueSettings()

    def progress(self, *, overlap: int = 1, skipped: Sequence[str] = ()) -> Progress:
        """:func:`labels.sampling.progress` of these counts, without walking every labelled row.

        Rows full without this annotator are the rows with ``overlap`` annotators or more (from
        the histogram) less this annotator's among them (all of them when ``overlap`` is 1).
        """
        full = sum(rows for n, rows in self.histogram.items() if n >= overlap)
        full_mine = len(self.mine) if overlap <= 1 else \
            sum(1 for i in self.mine if self.counts.get(i, 0) >= overlap)
        still_skipped = sum(1 for i in set(skipped)
                            if i not in self.mine and self.counts.get(i, 0) < overlap)
        remaining = max(self.total - len(self.mine) - (full - full_mine), 0)
        return Progress(labelled=len(self.mine), remaining=remaining, skipped=still_skipped)


def _grown(tally: _Tally, labels: int, new: list[tuple[int, str, str]]) -> _Tally:
    """``tally`` with the labels ``new`` (id, item, annotator) added."""
    annotators = dict(tally.annotators)
    counts = dict(tally.counts)
    histogram = dict(tally.histogram)
    added: dict[str, set[str]] = {}
    for _, item_id, annotator in new:
        before = annotators.get(item_id, frozenset())
        if annotator not in before:
            annotators[item_id] = before | {annotator}
            counts[item_id] = len(before) + 1
            if before:
                histogram[len(before)] -= 1
            histogram[len(before) + 1] = histogram.get(len(before) + 1, 0) + 1
        added.setdefault(annotator, set()).add(item_id)
    by_annotator = dict(tally.by_annotator)
    for annotator, items in added.items():
        by_annotator[annotator] = by_annotator.get(annotator, frozenset()) | items
    last_id = max([tally.last_id, *(label_id for label_id, _, _ in new)])
    return _Tally(labels, last_id, annotators, counts, by_annotator, histogram)


class LabelTally:
    """Label counts per (database, dataset, criterion), shared by every session. Thread-safe."""

    def __init__(self) -> None:
        """Start with nothing read."""
        self._lock = threading.Lock()
        self._tallies: dict[Hashable, _Tally] = {}

    def snapshot(
        self, store: LabelStore, dataset: str, annotator: str, criterion: str
    ) -> QueueCounts:
        """What :meth:`LabelStore.queue_snapshot` returns, reading only the labels added since.

        The queue settings come with the counts, read in the same statement
        (:func:`labels.stores.label_reads.labels_since`).

        Returns:
            The counts (total, mine, counts as ``queue_snapshot`` gives them, and a histogram).
        """
        key = (store.db.path, dataset, criterion)
        with self._lock:
            tally = self._tallies.get(key, _Tally())
        read = store.labels_since(dataset, criterion, tally.last_id)
        total, labels, new = read.total, read.labels, read.new
        if tally.labels + len(new) != labels:  # a lower id committed late
            tally = _Tally()
            read = store.labels_since(dataset, criterion, -1)
            total, labels, new = read.total, read.labels, read.new
        if new:
            tally = _grown(tally, labels, new)
            with self._lock:
                known = self._tallies.get(key)
                if known is None or known.last_id <= tally.last_id:
                    self._tallies[key] = tally
        return QueueCounts(total, tally.by_annotator.get(annotator, frozenset()), tally.counts,
                           tally.histogram, MappingProxyType(tally.by_annotator), read.settings)
