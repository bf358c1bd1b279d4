"""Which row an annotator sees next: queue orders, overlap and in-progress holds.

Pure functions over item ids plus one small thread-safe in-memory object (:class:`Holds`). Judge
information comes in as plain arguments (``verdicts``: item id → the judge's verdict; ``flips``:
ids whose judge verdict changed between runs), so this module never needs the ``judges`` package.

The queue of one annotator for one (dataset, criterion) is every item they have not labelled
whose number of annotators is still below the overlap ``N``, in the order the eval owner picked.
Rows they skipped come after everything else, in the order they were skipped (the skips are
stored, so a reload keeps them at the end).
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

QueueOrder = Literal["random", "stratified", "flips_first", "file", "active", "escalated"]

QUEUE_ORDERS: dict[str, str] = {
    "random": "Random (seeded)",
    "stratified": "Stratified by judge verdict",
    "flips_first": "Judge flips first",
    "file": "File order",
    "active": "Active (judge-uncertain rows more often)",
    "escalated": "Escalated (rows the judge abstained on)",
}
"""The orders an eval owner can pick, with the words the app shows for them."""

ORDER_GUARANTEES: dict[str, str] = {
    "random": "a random sample of the dataset: the corrected pass rate is valid, and the "
              "labels alone are a valid estimate too",
    "stratified": "random within each judge-verdict stratum: the corrected pass rate is valid "
                  "for any split between strata (the report weights each by its size)",
    "flips_first": "rows whose judge verdict flipped first, each part random: valid under any "
                   "aggregation rule, since flipped rows are their own strata",
    "file": "the file's own order, so its first rows: valid only if the file is in no order "
            "related to the rows' truth; the report refuses a number when the judge's verdicts "
            "trend along the file, and otherwise states the assumption",
    "active": "judge-uncertain rows more often, each with its recorded chance of being served: "
              "valid by inverse-probability weighting",
    "escalated": "only the rows an acceptance rule abstained on (calibrate judge select), in "
                 "random order: valid, since the escalated rows are their own strata and their "
                 "labels settle the rows the judge's accepted verdicts do not",
}
"""What each order guarantees the corrected pass rate (the Label page and the README say it)."""

NO_VERDICT = "(no verdict)"
"""The stratum of items the judge has no verdict for."""

ACTIVE_FLOOR = 0.15
"""Smallest selection weight of the active order (uncertain rows weigh 1): no row is left out."""

_SELECTION_OF_ORDER: dict[str, str] = {
    "random": "random",
    "stratified": "by_verdict",
    "flips_first": "flips_first",
    "file": "file",
    "active": "active",
    "escalated": "escalated",
}


@dataclass(frozen=True)
class QueueSettings:
    """How the eval owner wants one (dataset, criterion) labelled.

    Attributes:
        order: one of :data:`QUEUE_ORDERS`.
        seed: seed of the random order (and of the order inside each stratum).
        overlap: how many annotators each row is wanted from; a row with that many labels
            leaves everybody's queue.
    """

    order: QueueOrder = "random"
    seed: int = 0
    overlap: int = 1

    def __post_init__(self) -> None:
        """Reject an unknown order or an overlap below 1."""
        if self.order not in QUEUE_ORDERS:
            raise ValueError(
                f"unknown queue order {self.order!r} (orders: {', '.join(QUEUE_ORDERS)})"
            )
        if self.overlap < 1:
            raise ValueError(f"overlap must be at least 1, got {self.overlap}")


@dataclass(frozen=True)
class QueuePlan:
    """Every item of a dataset in the order annotators should see them.

    Attributes:
        item_ids: all item ids, best first (labelled ones included; :func:`next_item` skips them).
        order: the order actually used.
        note: why ``order`` differs from the one asked for (e.g. no judge verdicts yet), or None.
        strata: item id → the judge verdict it was ordered by (stratified/active orders).
        shares: item id → its share of the active order's selection weight.
        judge: the judge config whose verdicts built ``strata`` (recorded with each label).
        rule: the escalated order's acceptance rule (its id, recorded with each label as the
            stratum it was drawn from); ``item_ids`` then holds only the escalated rows.
    """

    item_ids: tuple[str, ...]
    order: QueueOrder
    note: str | None = None
    strata: Mapping[str, str] | None = None
    shares: Mapping[str, float] | None = None
    judge: str | None = None
    rule: str | None = None

    @cached_property
    def ranks(self) -> Mapping[str, int]:
        """Item id → 1-based position in ``item_ids``.

        A row's inclusion probability then needs no search of a 1,000,000-id tuple.
        """
        return {item_id: k for k, item_id in enumerate(self.item_ids, start=1)}

    def provenance(self, item_id: str) -> dict[str, object]:
        """How ``item_id`` was chosen when served from this plan (fields of ``Provenance``).

        For the active order the inclusion probability is that of sequential Poisson sampling
        (Ohlsson 1998) at the row's rank ``k`` in the queue: ``min(1, k * share)``; the report
        rescales ``selection_share`` to the final number of labels. The judge is the config
        whose verdicts built this plan, not whichever ran last.
        """
        out: dict[str, object] = {"selection": _SELECTION_OF_ORDER[self.order], "judge": None}
        if self.order == "escalated":
            return {**out, "judge": self.judge, "stratum": self.rule}
        if self.strata is not None:
            out["judge"] = self.judge
            out["stratum"] = self.strata.get(item_id, NO_VERDICT)
        if self.order == "active" and self.shares is not None and item_id in self.shares:
            share = self.shares[item_id]
            rank = self.ranks[item_id]
            out.update(selection_share=share, inclusion_probability=min(1.0, rank * share))
        return out


@dataclass(frozen=True)
class Progress:
    """One annotator's progress: ``labelled / (labelled + remaining) labelled, skipped skipped``.

    ``of`` is ``"assigned"`` when the rows are the annotator's assignment (team mode), so the
    line says what its denominator counts.
    """

    labelled: int
    remaining: int
    skipped: int
    of: Literal["queue", "assigned"] = "queue"

    @property
    def wanted(self) -> int:
        """Rows this annotator labelled plus rows still waiting for them."""
        return self.labelled + self.remaining

    def describe(self) -> str:
        """``37 / 120 labelled, 4 skipped`` (``… assigned rows labelled …`` for an assignment)."""
        what = "assigned rows labelled" if self.of == "assigned" else "labelled"
        return f"{self.labelled:,} / {self.wanted:,} {what}, {self.skipped:,} skipped"


def shuffle_key(seed: int, item_id: str) -> bytes:
    """The sort key of ``item_id`` in the random order with ``seed``.

    A hash of (seed, id) rather than ``random.shuffle``: importing more rows later leaves the
    relative order of the existing ones unchanged, so a queue does not jump around.
    """
    return hashlib.blake2b(f"{seed}\x1f{item_id}".encode(), digest_size=8).digest()


def _shuffled(item_ids: Sequence[str], seed: int) -> list[str]:
    """``item_ids`` sorted by :func:`shuffle_key` (ties keep their order, as ``sorted`` does).

    The keys are compared as big-endian 64-bit integers (the same order as the bytes) by one
    stable numpy sort: 1,000,000 ids take about half the time of ``sorted`` with a key
    function, which matters on the first page run at that size.
    """
    import numpy as np  # lazily: the CLI's start-up loads no numpy for this module

    # shuffle_key's formula inlined: calling it per id made this about 14 % slower at
    # 1,000,000 ids (0.96 s against 0.84 s). test_sampling checks the order is shuffle_key's.
    blake2b, prefix = hashlib.blake2b, f"{seed}\x1f"
    keys = b"".join([blake2b((prefix + i).encode(), digest_size=8).digest() for i in item_ids])
    order = np.argsort(np.frombuffer(keys, dtype=">u8"), kind="stable")
    return [item_ids[k] for k in order.tolist()]


def plan_queue(
    item_ids: Sequence[str],
    *,
    order: QueueOrder = "random",
    seed: int = 0,
    verdicts: Mapping[str, str] | None = None,
    flips: Collection[str] | None = None,
    uncertainty: Mapping[str, float] | None = None,
    judge: str | None = None,
    escalated: Collection[str] | None = None,
    rule: str | None = None,
) -> QueuePlan:
    """Put the items of a dataset in the order annotators should label them.

    Args:
        item_ids: every item id of the dataset, in file order.
        order: ``random`` (seeded shuffle), ``stratified`` (the judge's verdict classes take
            turns, so every prefix of the queue holds them in as equal numbers as the data
            allow; seeded shuffle inside each class), ``flips_first`` (items whose judge verdict
            changed between runs first, then the rest, each part shuffled) or ``file``.
        seed: seed of every shuffle.
        verdicts: item id → the judge's latest verdict; needed by ``stratified``. None or empty
            means no judge has run on the dataset.
        flips: ids of items whose judge verdict differs between runs; needed by ``flips_first``.
            None means no judge run exists.
        uncertainty: item id → the judge's uncertainty in [0, 1] (flips across repeats/orders,
            disagreement between judges, verdict log-probabilities); needed by ``active``, which
            serves rows in sequential Poisson order (key ``U / w`` with ``U`` the seeded uniform
            of the row and ``w = max(sqrt(uncertainty), ACTIVE_FLOOR)``), so every prefix of
            the queue is a sample with probability tied to the uncertainty and above zero.
        judge: the judge config ``verdicts`` and ``uncertainty`` come from; kept on the plan
            (stratified/active orders) and recorded with every label it serves; for
            ``escalated``, the judge the rule abstained on.
        escalated: ids of the rows an acceptance rule escalated; needed by ``escalated``, which
            serves only those rows, shuffled (None: no escalation recorded).
        rule: the id of that acceptance rule (recorded with every label the plan serves).

    Returns:
        The plan. When the judge information an order needs is missing, the order falls back
        to ``random`` and ``note`` says why.
    """
    ids = list(item_ids)

    def random_fallback(missing: str) -> QueuePlan:
        """Random order, with a note that the judge ``missing`` (verdicts, runs) are not there."""
        note = f"No judge {missing} for this dataset yet, so the queue is in random order."
        return QueuePlan(tuple(_shuffled(ids, seed)), "random", note)

    if order == "file":
        return QueuePlan(tuple(ids), "file")
    if order == "escalated":
        if escalated is None:
            return QueuePlan(tuple(_shuffled(ids, seed)), "random",
                             "No rows have been escalated for this dataset and criterion yet "
                             "(calibrate judge select, or the Calibration page's Abstain and "
                             "escalate), so the queue is in random order.")
        wanted = set(escalated)
        rows = _shuffled([i for i in ids if i in wanted], seed)
        note = None if rows else "The acceptance rule escalated no row: nothing to label here."
        return QueuePlan(tuple(rows), "escalated", note, judge=judge, rule=rule)
    if order == "stratified":
        if not verdicts:
            return random_fallback("verdicts")
        strata: dict[str, list[str]] = {}
        for item_id in ids:
            strata.setdefault(verdicts.get(item_id, NO_VERDICT), []).append(item_id)
        columns = [_shuffled(strata[name], seed) for name in sorted(strata)]
        interleaved = [
            column[k]
            for k in range(max(len(c) for c in columns))
            for column in columns
            if k < len(column)
        ]
        return QueuePlan(tuple(interleaved), "stratified", strata=dict(verdicts), judge=judge)
    if order == "flips_first":
        if flips is None:
            return random_fallback("runs")
        flipped = set(flips)
        first = _shuffled([i for i in ids if i in flipped], seed)
        rest = _shuffled([i for i in ids if i not in flipped], seed)
        note = None if first else "No judge verdict has flipped between runs; random order."
        return QueuePlan(tuple(first + rest), "flips_first", note)
    if order == "active":
        if not uncertainty:
            return random_fallback("verdicts")
        weight = {
            i: max(math.sqrt(min(1.0, max(0.0, uncertainty.get(i, 1.0)))), ACTIVE_FLOOR)
            for i in ids
        }
        total = sum(weight.values())
        uniform = {i: (int.from_bytes(shuffle_key(seed, i), "big") + 0.5) / 2.0**64 for i in ids}
        ranked = sorted(ids, key=lambda i: uniform[i] / weight[i])
        served = {i: verdicts.get(i, NO_VERDICT) for i in ids} if verdicts else None
        shares = {i: weight[i] / total for i in ids}
        plan = QueuePlan(tuple(ranked), "active", strata=served, shares=shares,
                         judge=judge if served is not None else None)
        # Built with the plan (which the app rebuilds in a background thread), not by the
        # first key press that records a provenance: 1,000,000 ids take about 0.4 s.
        _ = plan.ranks
        return plan
    if order == "random":
        return QueuePlan(tuple(_shuffled(ids, seed)), "random")
    raise ValueError(f"unknown queue order {order!r} (orders: {', '.join(QUEUE_ORDERS)})")


def next_item(
    plan: Sequence[str],
    *,
    mine: Collection[str],
    counts: Mapping[str, int],
    overlap: int = 1,
    held: Mapping[str, int] | None = None,
    skipped: Sequence[str] = (),
    start: int = 0,
) -> str | None:
    """The next item for one annotator, or None when nothing is free for them.

    Args:
        plan: every item id in queue order (:attr:`QueuePlan.item_ids`).
        mine: items this annotator already labelled (never offered again).
        counts: item id → number of annotators with a label (missing = 0).
        overlap: rows are wanted from this many annotators; rows with that many labels are
            done.
        held: item id → number of *other* annotators looking at it right now. A row whose
            labels plus holds reach ``overlap`` is not offered, so two people labelling at
            once never spend time on a row wanted once. (:func:`progress` still counts it as
            remaining: it comes back if the other annotator leaves it.)
        skipped: items this annotator skipped, oldest first; they come after every other row.
        start: where to start looking in ``plan``: :func:`settled_prefix` (the rows before it
            are never offered again, so the answer is the same as from 0, without walking
            past every labelled row of a large dataset on each key press).
    """
    holds = held or {}
    skipped_set = set(skipped)

    def free(item_id: str) -> bool:
        return (
            item_id not in mine
            and counts.get(item_id, 0) + holds.get(item_id, 0) < overlap
        )

    for index in range(start, len(plan)):
        item_id = plan[index]
        if item_id not in skipped_set and free(item_id):
            return item_id
    for item_id in skipped:
        if free(item_id):
            return item_id
    return None


def settled_prefix(
    plan: Sequence[str],
    *,
    mine: Collection[str],
    counts: Mapping[str, int],
    overlap: int = 1,
    skipped: Collection[str] = (),
    start: int = 0,
) -> int:
    """How many rows at the head of ``plan`` :func:`next_item` will never offer in plan order.

    Those are rows the annotator labelled, rows with ``overlap`` annotators and rows the
    annotator skipped (served from the skipped list instead). Labels and skips are only ever
    added, so for one plan and overlap the prefix only grows: a session keeps it and passes it
    back as ``start``, walking only the rows labelled since (arguments as in :func:`next_item`).
    """
    skipped_set = skipped if isinstance(skipped, (set, frozenset)) else set(skipped)
    index = start
    while index < len(plan):
        item_id = plan[index]
        if item_id not in mine and item_id not in skipped_set and counts.get(item_id, 0) < overlap:
            break
        index += 1
    return index


def progress(
    total: int,
    *,
    mine: Collection[str],
    counts: Mapping[str, int],
    overlap: int = 1,
    skipped: Sequence[str] = (),
) -> Progress:
    """How far one annotator is (labelled, still waiting for them, skipped and still waiting).

    Args:
        total: number of items in the dataset.
        mine: items this annotator labelled.
        counts: item id → number of annotators with a label.
        overlap: rows wanted from this many annotators.
        skipped: items this annotator skipped.
    """
    full_by_others = sum(1 for i, n in counts.items() if n >= overlap and i not in mine)
    remaining = max(total - len(mine) - full_by_others, 0)
    still_skipped = sum(1 for i in set(skipped) if i not in mine and counts.get(i, 0) < overlap)
    return Progress(labelled=len(mine), remaining=remaining, skipped=still_skipped)


class Holds:
    """Which rows annotators are looking at right now, in this process.

    Every session of the app runs in the one process that owns the database file, so an
    in-memory record is enough to steer two annotators away from the same row. A hold expires
    after ``ttl`` seconds (an abandoned browser tab), and each annotator holds at most one row
    per scope. Thread-safe.

    Args:
        ttl: seconds a hold lasts without being renewed.
        clock: monotonic clock (injectable for tests).
    """

    def __init__(self, ttl: float = 600.0, clock: Callable[[], float] = time.monotonic) -> None:
        """Start with no holds."""
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._by_scope: dict[Hashable, dict[str, tuple[str, float]]] = {}

    def hold(self, scope: Hashable, annotator: str, item_id: str) -> None:
        """Record that ``annotator`` is looking at ``item_id`` (replacing their earlier hold)."""
        with self._lock:
            self._by_scope.setdefault(scope, {})[annotator] = (item_id, self._clock() + self._ttl)

    def release(self, scope: Hashable, annotator: str) -> None:
        """Drop ``annotator``'s hold in ``scope``."""
        with self._lock:
            self._by_scope.get(scope, {}).pop(annotator, None)

    def release_elsewhere(self, scope: Hashable, annotator: str) -> None:
        """Drop ``annotator``'s holds in every scope but ``scope`` (they moved on)."""
        with self._lock:
            for other, holders in self._by_scope.items():
                if other != scope:
                    holders.pop(annotator, None)

    def held_by_others(self, scope: Hashable, annotator: str) -> dict[str, int]:
        """Item id → number of other annotators holding it (expired holds are dropped)."""
        with self._lock:
            return self._others(scope, annotator)

    def claim(
        self, scope: Hashable, annotator: str,
        choose: Callable[[dict[str, int]], str | None],
    ) -> str | None:
        """Pick a row and hold it in one step, so two annotators never pick the same row.

        ``choose`` gets the rows held by others (as :meth:`held_by_others`) and returns the
        row to hold, or None (which releases ``annotator``'s hold). It runs under this
        object's lock, so it must be quick and must not call back into it.
        """
        with self._lock:
            item_id = choose(self._others(scope, annotator))
            holders = self._by_scope.setdefault(scope, {})
            if item_id is None:
                holders.pop(annotator, None)
            else:
                holders[annotator] = (item_id, self._clock() + self._ttl)
            return item_id

    def _others(self, scope: Hashable, annotator: str) -> dict[str, int]:
        now = self._clock()
        out: dict[str, int] = {}
        holders = self._by_scope.get(scope, {})
        for who, (item_id, expires) in list(holders.items()):
            if expires < now:
                del holders[who]
            elif who != annotator:
                out[item_id] = out.get(item_id, 0) + 1
        return out
