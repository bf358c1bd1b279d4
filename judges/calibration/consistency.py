"""Self-consistency of a judge: flips across position-swapped orders and across repeats.

Input is the long, table-like shape a caller gets from a DB query — one row per judge call:
``(item_id, repeat, order, verdict)`` with ``order`` in ``{"original", "swapped"}`` and
``verdict`` in ``{"pass", "fail", "unsure", "unscored"}`` (binary) or
``{"a", "b", "tie", "unsure", "unscored"}`` (pairwise). :func:`self_consistency_matrix` accepts
a 2-D items x calls array instead.

Rules:

* ``unscored`` calls are ignored everywhere; an item with no scored call aggregates to
  ``"unscored"``. ``unsure`` is a verdict the judge gave, so it takes part in flips.
* A *flip across orders* is a (item, repeat) whose original and swapped verdicts differ; a *flip
  across repeats* is a (item, order) whose repeats differ. Rates are reported per item (an item
  flips if any of its comparable pairs/groups does), with Wilson intervals.
* Aggregation ``rule="all_agree"`` (MT-Bench, Zheng et al. 2023): a verdict counts only if every
  scored call agrees, else ``"unsure"`` (binary) / ``"tie"`` (pairwise).
  ``rule="majority"``: the most frequent scored verdict; equal top counts -> ``"unsure"``/``"tie"``.

For pairwise verdicts, ``swapped_verdicts="aligned"`` (default) means the verdicts of swapped
calls already name the answers in their original positions (MT-Bench's convention);
``"as_shown"`` means they name the positions as shown to the judge, so ``a``/``b`` are swapped
back before comparing.

References:
    Zheng, L. et al. (2023). Judging LLM-as-a-judge with MT-Bench and Chatbot Arena. NeurIPS
    (position-swap consistency; a verdict must survive both orders).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from ._results import CalibrationInputError, Estimate, _ToDict
from ._verdicts import UNSCORED, UNSURE, PerRow, VerdictKind, normalize_verdicts
from .rates import check_confidence, wilson_interval
from .resampling import group_codes

__all__ = [
    "ConsistencyOptions", "ConsistencyResult", "consistency_from_flags", "self_consistency",
    "self_consistency_matrix",
]

Rule = Literal["all_agree", "majority"]

# Category index per kind: decided codes first, then "unsure" as its own category.
_CATEGORY_NAMES: dict[str, tuple[str, ...]] = {
    "binary": ("fail", "pass", "unsure"),
    "pairwise": ("a", "b", "tie", "unsure"),
}
_INCONSISTENT: dict[str, str] = {"binary": "unsure", "pairwise": "tie"}


@dataclass(frozen=True)
class ConsistencyResult(_ToDict):
    """Flip rates and aggregated verdicts.

    Attributes:
        kind: ``"binary"`` or ``"pairwise"``.
        rule: Aggregation rule used.
        item_ids: Unique item ids (sorted), aligned with the per-item arrays.
        verdicts: Aggregated verdict per item (strings, incl. ``"unscored"``).
        n_calls: Calls per item (all).
        n_scored: Scored calls per item.
        order_flipped: Per item: some repeat's two orders disagree.
        order_comparable: Per item: some repeat has both orders scored (an item judged in
            one order only has ``False``).
        repeat_flipped: Per item: some order's repeats disagree.
        any_flipped: Per item: its scored verdicts are not all identical.
        flip_rate_order: Share of items with a comparable order pair that flipped (Wilson).
        flip_rate_repeat: Share of items with >= 2 scored repeats in an order that flipped.
        flip_rate_any: Share of items with >= 2 scored calls whose verdicts differ.
        n_order_pairs: (item, repeat) pairs with both orders scored.
        n_order_pairs_flipped: Of those, pairs whose verdicts differ.
        n_unscored_items: Items with no scored call.
    """

    kind: str
    rule: str
    item_ids: npt.NDArray[Any]
    verdicts: npt.NDArray[np.str_]
    n_calls: npt.NDArray[np.int64]
    n_scored: npt.NDArray[np.int64]
    order_flipped: npt.NDArray[np.bool_]
    repeat_flipped: npt.NDArray[np.bool_]
    any_flipped: npt.NDArray[np.bool_]
    order_comparable: npt.NDArray[np.bool_]
    flip_rate_order: Estimate
    flip_rate_repeat: Estimate
    flip_rate_any: Estimate
    n_order_pairs: int
    n_order_pairs_flipped: int
    n_unscored_items: int

    def summary(self) -> dict[str, Any]:
        """JSON-safe summary without the per-item arrays."""
        d = self.to_dict()
        for key in (
            "item_ids",
            "verdicts",
            "n_calls",
            "n_scored",
            "order_flipped",
            "repeat_flipped",
            "any_flipped",
            "order_comparable",
        ):
            d.pop(key)
        d["n_items"] = int(self.item_ids.shape[0])
        return d


def _order_codes(order: PerRow | None, n: int) -> npt.NDArray[np.int64]:
    if order is None:
        return np.zeros(n, dtype=np.int64)
    arr = np.asarray(order)
    if arr.shape != (n,):
        raise CalibrationInputError(f"order must have one entry per row ({n}), got {arr.shape}")
    if arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.integer):
        out = arr.astype(np.int64)
        if not np.isin(out, [0, 1]).all():
            raise CalibrationInputError("integer order must be 0 (original) or 1 (swapped)")
        return out
    s = np.strings.lower(np.strings.strip(arr.astype(str)))
    out = np.full(n, -1, dtype=np.int64)
    out[s == "original"] = 0
    out[s == "swapped"] = 1
    if (out < 0).any():
        bad = sorted(set(arr[out < 0].astype(str).tolist()))[:5]
        raise CalibrationInputError(f"unknown order values {bad}; use 'original'/'swapped'")
    return out


def self_consistency(
    item_id: PerRow, verdict: PerRow,
    *, order: PerRow | None = None, repeat: PerRow | None = None, kind: VerdictKind = "binary",
    rule: Rule = "all_agree", swapped_verdicts: Literal["aligned", "as_shown"] = "aligned",
    confidence: float = 0.95,
) -> ConsistencyResult:
    """Flip rates across orders and repeats, and one aggregated verdict per item.

    Args:
        item_id: Item id per call (row).
        verdict: Verdict per call.
        order: ``"original"``/``"swapped"`` (or 0/1) per call; ``None`` = all original.
        repeat: Repeat index (any labels) per call; ``None`` = one repeat.
        kind: ``"binary"`` or ``"pairwise"``.
        rule: ``"all_agree"`` (MT-Bench) or ``"majority"``.
        swapped_verdicts: For pairwise verdicts: ``"aligned"`` if swapped calls' verdicts
            already refer to the original positions, ``"as_shown"`` to swap ``a``/``b`` back.
        confidence: Confidence level of the flip-rate intervals.

    Returns:
        A :class:`ConsistencyResult`.

    Raises:
        CalibrationInputError: On misaligned inputs, unknown values, or duplicate
            (item, repeat, order) rows.

    Examples:
        >>> r = self_consistency(["q1", "q1", "q2", "q2"], ["a", "b", "a", "a"],
        ...                      order=["original", "swapped"] * 2, kind="pairwise")
        >>> r.verdicts.tolist(), r.flip_rate_order.estimate
        (['tie', 'a'], 0.5)
    """
    conf = check_confidence(confidence)
    if rule not in ("all_agree", "majority"):
        raise CalibrationInputError(f"rule must be 'all_agree' or 'majority', got {rule!r}")
    if swapped_verdicts not in ("aligned", "as_shown"):
        raise CalibrationInputError("swapped_verdicts must be 'aligned' or 'as_shown'")
    codes = normalize_verdicts(verdict, kind=kind).astype(np.int64)
    n = codes.shape[0]
    u, item_ids = group_codes(item_id)
    if u.shape[0] != n:
        raise CalibrationInputError(f"item_id has {u.shape[0]} rows, verdict has {n}")
    o = _order_codes(order, n)
    if repeat is None:
        r = np.zeros(n, dtype=np.int64)
        n_rep = 1
    else:
        r, rep_uniques = group_codes(repeat)
        if r.shape[0] != n:
            raise CalibrationInputError(f"repeat has {r.shape[0]} rows, verdict has {n}")
        n_rep = rep_uniques.shape[0]
    names = _CATEGORY_NAMES[kind]
    k = len(names)
    unsure_cat = k - 1
    # Category per call: decided codes keep their index, unsure -> last, unscored -> -1.
    cat = np.where(codes == UNSURE, unsure_cat, codes)
    cat = np.where(codes == UNSCORED, -1, cat)
    if kind == "pairwise" and swapped_verdicts == "as_shown":
        flip = (o == 1) & (cat <= 1) & (cat >= 0)
        cat = np.where(flip, 1 - cat, cat)
    n_items = item_ids.shape[0]

    key = (u * n_rep + r) * 2 + o
    if np.bincount(key, minlength=n_items * n_rep * 2).max(initial=0) > 1:
        raise CalibrationInputError("duplicate (item_id, repeat, order) rows")
    grid = np.full(n_items * n_rep * 2, -1, dtype=np.int64)
    grid[key] = cat
    grid3 = grid.reshape(n_items, n_rep, 2)

    # Order flips: per (item, repeat) with both orders scored.
    both = (grid3[:, :, 0] >= 0) & (grid3[:, :, 1] >= 0)
    pair_flip = both & (grid3[:, :, 0] != grid3[:, :, 1])
    order_comparable = both.any(axis=1)
    order_flipped = pair_flip.any(axis=1)

    # Repeat flips: per (item, order), distinct scored categories across repeats.
    onehot = np.zeros((n_items, n_rep, 2, k), dtype=bool)
    iu, ir, io = np.nonzero(grid3 >= 0)
    onehot[iu, ir, io, grid3[iu, ir, io]] = True
    per_order_counts = onehot.sum(axis=1)  # items x 2 x k
    per_order_scored = per_order_counts.sum(axis=2)
    per_order_distinct = (per_order_counts > 0).sum(axis=2)
    repeat_comparable = (per_order_scored >= 2).any(axis=1)
    repeat_flipped = (per_order_distinct >= 2).any(axis=1)

    counts = per_order_counts.sum(axis=1)  # items x k
    n_scored = counts.sum(axis=1)
    distinct = (counts > 0).sum(axis=1)
    any_flipped = distinct >= 2

    inconsistent = names.index(_INCONSISTENT[kind])
    if rule == "all_agree":
        agg = np.where(distinct == 1, counts.argmax(axis=1), inconsistent)
    else:
        top = counts.max(axis=1)
        n_top = (counts == top[:, None]).sum(axis=1)
        agg = np.where(n_top == 1, counts.argmax(axis=1), inconsistent)
    label_names = np.array([*names, "unscored"])
    agg = np.where(n_scored == 0, k, agg)
    verdicts = label_names[agg]

    return consistency_from_flags(
        kind=kind, rule=rule, item_ids=item_ids, verdicts=verdicts,
        n_calls=np.bincount(u, minlength=n_items).astype(np.int64), n_scored=n_scored,
        order_flipped=order_flipped, order_comparable=order_comparable,
        repeat_flipped=repeat_flipped, repeat_comparable=repeat_comparable,
        any_flipped=any_flipped, n_order_pairs=int(both.sum()),
        n_order_pairs_flipped=int(pair_flip.sum()), confidence=conf,
    )


def consistency_from_flags(
    *,
    kind: str,
    rule: str,
    item_ids: npt.NDArray[Any],
    verdicts: npt.NDArray[Any],
    n_calls: npt.ArrayLike,
    n_scored: npt.ArrayLike,
    order_flipped: npt.ArrayLike,
    order_comparable: npt.ArrayLike,
    repeat_flipped: npt.ArrayLike,
    repeat_comparable: npt.ArrayLike,
    any_flipped: npt.ArrayLike,
    n_order_pairs: int,
    n_order_pairs_flipped: int,
    confidence: float = 0.95,
) -> ConsistencyResult:
    """A :class:`ConsistencyResult` from per-item flags already counted elsewhere.

    :func:`self_consistency` counts the flags from the calls in numpy; a store can count the
    same flags in SQL (one GROUP BY, :meth:`judges.stores.judge_store.JudgeStore.item_aggregates`)
    and
    finish here, so both paths share the flip rates and their Wilson intervals.

    Args:
        kind: ``"binary"`` or ``"pairwise"``.
        rule: The aggregation rule the verdicts were made with.
        item_ids: Unique item ids, aligned with every per-item array.
        verdicts: Aggregated verdict per item (incl. ``"unscored"``).
        n_calls: Calls per item.
        n_scored: Scored calls per item.
        order_flipped: Some repeat's two scored orders disagree.
        order_comparable: Some repeat has both orders scored.
        repeat_flipped: Some order's scored repeats disagree.
        repeat_comparable: Some order has two or more scored repeats.
        any_flipped: The item's scored verdicts are not all identical.
        n_order_pairs: (item, repeat) pairs with both orders scored.
        n_order_pairs_flipped: Of those, pairs whose verdicts differ.
        confidence: Confidence level of the flip-rate intervals.

    Returns:
        A :class:`ConsistencyResult`.
    """
    conf = check_confidence(confidence)
    scored = np.asarray(n_scored, dtype=np.int64)
    any_comparable = scored >= 2

    def rate(flipped: npt.ArrayLike, comparable: npt.ArrayLike, what: str) -> Estimate:
        comp = np.asarray(comparable, dtype=bool)
        m = int(comp.sum())
        if m == 0:
            return Estimate.refusal(f"no item has {what}", n=0, method="wilson", confidence=conf)
        return wilson_interval(int((np.asarray(flipped) & comp).sum()), m, confidence=conf)

    flips_any = np.asarray(any_flipped, dtype=bool)
    return ConsistencyResult(
        kind=kind,
        rule=rule,
        item_ids=item_ids,
        verdicts=verdicts,
        n_calls=np.asarray(n_calls, dtype=np.int64),
        n_scored=scored,
        order_flipped=np.asarray(order_flipped, dtype=bool),
        repeat_flipped=np.asarray(repeat_flipped, dtype=bool),
        any_flipped=flips_any & any_comparable,
        order_comparable=np.asarray(order_comparable, dtype=bool),
        flip_rate_order=rate(
            order_flipped, order_comparable, "both orders scored in the same repeat"
        ),
        flip_rate_repeat=rate(
            repeat_flipped, repeat_comparable, "two or more scored repeats in one order"
        ),
        flip_rate_any=rate(flips_any, any_comparable, "two or more scored calls"),
        n_order_pairs=n_order_pairs,
        n_order_pairs_flipped=n_order_pairs_flipped,
        n_unscored_items=int((scored == 0).sum()),
    )


class ConsistencyOptions(TypedDict, total=False):
    """How :func:`self_consistency` reads and aggregates the calls (documented there)."""

    kind: VerdictKind
    rule: Rule
    swapped_verdicts: Literal["aligned", "as_shown"]
    confidence: float


def self_consistency_matrix(
    verdicts: npt.ArrayLike | Sequence[Sequence[Any]],
    *, orders: Sequence[Any] | None = None, item_ids: PerRow | None = None,
    **options: Unpack[ConsistencyOptions],
) -> ConsistencyResult:
    """:func:`self_consistency` for a 2-D items x calls array.

    Args:
        verdicts: 2-D array-like, one row per item, one column per call.
        orders: Order of each column (``"original"``/``"swapped"``); ``None`` = all original.
            The repeat index of a column is its occurrence number within its order.
        item_ids: Item id per row (default ``0..n-1``).
        **options: ``kind``, ``rule``, ``swapped_verdicts`` and ``confidence``, as
            :func:`self_consistency` takes them (same defaults).

    Returns:
        A :class:`ConsistencyResult`.

    Examples:
        >>> r = self_consistency_matrix([["pass", "pass"], ["pass", "fail"]],
        ...                             orders=["original", "swapped"])
        >>> r.verdicts.tolist()
        ['pass', 'unsure']
    """
    arr = np.asarray(verdicts, dtype=object)
    if arr.ndim != 2:
        raise CalibrationInputError(f"verdicts must be 2-D (items x calls), got {arr.shape}")
    n_items, n_calls = arr.shape
    col_orders = (
        _order_codes(orders, n_calls) if orders is not None else np.zeros(n_calls, dtype=np.int64)
    )
    col_repeat = np.zeros(n_calls, dtype=np.int64)
    for o in (0, 1):
        idx = np.nonzero(col_orders == o)[0]
        col_repeat[idx] = np.arange(idx.shape[0])
    ids = np.arange(n_items) if item_ids is None else np.asarray(item_ids)
    if ids.shape[0] != n_items:
        raise CalibrationInputError("item_ids must have one entry per row")
    return self_consistency(
        np.repeat(ids, n_calls),
        arr.ravel(),
        order=np.tile(col_orders, n_items),
        repeat=np.tile(col_repeat, n_items),
        **options,
    )
