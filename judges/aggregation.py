"""How the calls of one item combine into one verdict: one vocabulary, one implementation.

A judge may be called several times per item (repeats, and both source orders when the
position swap is on). Two rules combine those calls (:data:`AGGREGATION_RULES`):

* ``all_agree`` (MT-Bench, Zheng et al. 2023): a verdict counts only if every scored call agrees;
  a row that flips is ``unsure`` and every rate excludes it;
* ``majority``: the most frequent scored verdict; equal top counts give ``unsure``.

The rule of a report is the judge config's ``aggregation`` field unless the caller overrides
it (:func:`rule_for`); imported verdicts, which have no config, use ``all_agree``. The counting
itself is :func:`judges.calibration.self_consistency`; :func:`aggregate_calls` applies it to the
per-call rows of :func:`judges.verdicts.judge_verdicts` (or of a verdicts file, for the gate).
:func:`aggregate_stored_calls` gives the same result for calls in the database without
loading them: one SQL pass (:meth:`judges.stores.judge_store.JudgeStore.item_aggregates`) per
report, so a
report on 10 M calls never holds a per-call frame.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow.compute as pc

from judges.calibration import ConsistencyResult, consistency_from_flags, self_consistency
from judges.calibration.vocabulary import AGGREGATION_RULES, AggregationRule
from judges.config import JudgeConfig
from judges.verdicts import dataset_keys
from labels.errors import CalibrateError

if TYPE_CHECKING:
    from judges.workspace import Workspace

DEFAULT_RULE: AggregationRule = "all_agree"
"""The rule of judges without a config (imported verdicts)."""

# "unanimous" is how judge configs spelled all_agree before the two vocabularies were merged;
# configs keep the word as written, because it is part of their hash (their id).
_RULE_ALIASES = {"unanimous": "all_agree", "mt-bench": "all_agree", "mtbench": "all_agree"}


def normalize_rule(rule: str) -> AggregationRule:
    """Map a rule name (or alias such as ``unanimous``) to ``all_agree`` or ``majority``.

    Raises:
        CalibrateError: for an unknown rule (``any_fail``, which old configs could name but
            nothing ever implemented, included).
    """
    name = _RULE_ALIASES.get(rule, rule)
    if name == "all_agree":
        return "all_agree"
    if name == "majority":
        return "majority"
    raise CalibrateError(
        f"unknown aggregation rule {rule!r} (rules: {', '.join(AGGREGATION_RULES)}); choose "
        "one with --aggregation or in the judge config's aggregation field"
    )


def rule_for(config: JudgeConfig | None, rule: str | None = None) -> AggregationRule:
    """The rule to apply: ``rule`` when given, else the config's ``aggregation``.

    Args:
        config: The judge config, or ``None`` for imported verdicts (:data:`DEFAULT_RULE`).
        rule: An explicit rule (e.g. ``calibrate report --aggregation``), or ``None``.
    """
    if rule is not None:
        return normalize_rule(rule)
    if config is None:
        return DEFAULT_RULE
    return normalize_rule(config.aggregation)


_ITEM_COLUMNS = ["item_id", "verdict", "n_calls", "n_scored", "order_flipped",
                 "repeat_flipped", "flipped", "both_orders", "reasoning", "unscored_reason"]


def aggregate_calls(
    calls: pd.DataFrame, *, rule: str = "all_agree", confidence: float = 0.95,
    kind: str = "pointwise",
) -> tuple[pd.DataFrame, ConsistencyResult | None]:
    """One verdict per item from per-call rows, with flip flags (self-consistency).

    Args:
        calls: Rows with ``item_id``, ``verdict`` and optionally ``repeat``, ``order``,
            ``reasoning``, ``unscored_reason``.
        rule: ``all_agree`` (MT-Bench, default) or ``majority`` (aliases: ``unanimous``).
        confidence: Level of the flip-rate intervals.
        kind: ``pointwise`` (pass/fail verdicts) or ``pairwise`` (a/b/tie; a row whose orders
            disagree becomes ``tie`` under ``all_agree``, the MT-Bench rule).

    Returns:
        ``(items, consistency)``: the per-item frame (columns as :attr:`JudgeItems.items`, in
        first-appearance order) and the :class:`~judges.calibration.ConsistencyResult`
        (``None`` for no calls).
    """
    name = normalize_rule(rule)
    if calls.empty:
        return pd.DataFrame(columns=_ITEM_COLUMNS), None
    ids = calls["item_id"].astype(str).to_numpy()
    verdicts = calls["verdict"].astype(object).where(calls["verdict"].notna(), None)
    consistency = self_consistency(
        ids,
        verdicts.to_numpy(dtype=object),
        order=calls["order"].astype(str).to_numpy() if "order" in calls else None,
        repeat=calls["repeat"].to_numpy() if "repeat" in calls else None,
        rule=name,
        kind="pairwise" if kind == "pairwise" else "binary",
        confidence=confidence,
    )
    per_item = pd.DataFrame({
        "item_id": consistency.item_ids.astype(str),
        "verdict": consistency.verdicts.astype(str),
        "n_calls": consistency.n_calls,
        "n_scored": consistency.n_scored,
        "order_flipped": consistency.order_flipped,
        "repeat_flipped": consistency.repeat_flipped,
        "flipped": consistency.any_flipped,
        "both_orders": consistency.order_comparable,
    })
    frame = calls.assign(item_id=ids)
    words = ["a", "b", "tie", "unsure"] if kind == "pairwise" else ["pass", "fail", "unsure"]
    scored = frame[frame["verdict"].isin(words)]
    reasoning = (
        scored.groupby("item_id", sort=False)["reasoning"].first()
        if "reasoning" in frame else pd.Series(dtype=object)
    )
    unscored = frame[~frame["verdict"].isin(words)]
    reasons = (
        unscored.groupby("item_id", sort=False)["unscored_reason"].first()
        if "unscored_reason" in frame else pd.Series(dtype=object)
    )
    per_item["reasoning"] = per_item["item_id"].map(reasoning).astype(object)
    per_item["unscored_reason"] = per_item["item_id"].map(reasons).astype(object)
    order = pd.Index(pd.unique(ids))
    per_item = per_item.set_index("item_id").loc[order].reset_index()
    return per_item[_ITEM_COLUMNS], consistency


def aggregate_stored_calls(
    workspace: Workspace, dataset: str, config_id: str, *, rule: str = "all_agree",
    confidence: float = 0.95, kind: str = "pointwise", texts_for: Collection[str] | None = None,
) -> tuple[pd.DataFrame, ConsistencyResult | None]:
    """:func:`aggregate_calls` of :func:`judges.verdicts.judge_verdicts`, counted in SQL.

    Same arguments and result as ``aggregate_calls(judge_verdicts(workspace, dataset,
    config_id), ...)`` (``tests/judges/test_aggregation_sql.py`` compares the two on random
    call tables), but the calls stay in DuckDB: one GROUP BY counts each item's verdicts and
    flips, so memory grows with the items, not with the calls. ``texts_for`` limits the
    ``reasoning`` and ``unscored_reason`` columns to those item ids (NaN elsewhere; a report
    shows them for its labelled rows only); picking them is most of the SQL's work.
    """
    name = normalize_rule(rule)
    pairwise = kind == "pairwise"
    categories = ["a", "b", "tie", "unsure"] if pairwise else ["fail", "pass", "unsure"]
    table = workspace.judges.item_aggregates(
        config_id, dataset_keys(workspace, dataset, config_id), categories=categories,
        inconsistent="tie" if pairwise else "unsure", rule=name, texts_for=texts_for,
    )
    if table.num_rows == 0:
        return pd.DataFrame(columns=_ITEM_COLUMNS), None
    rows = table.to_pandas()  # strings stay Arrow-backed (pandas' "str"): no per-row objects
    # ConsistencyResult keeps its items in sorted-id order, as np.unique gives them
    by_id = pc.sort_indices(table["item_id"]).to_numpy()

    def sorted_by_id(column: str) -> npt.NDArray[Any]:
        values: npt.NDArray[Any] = rows[column].to_numpy()[by_id]
        return values

    consistency = consistency_from_flags(
        kind="pairwise" if pairwise else "binary", rule=name,
        item_ids=sorted_by_id("item_id").astype(str),
        verdicts=sorted_by_id("verdict").astype(str),
        n_calls=sorted_by_id("n_calls"), n_scored=sorted_by_id("n_scored"),
        order_flipped=sorted_by_id("order_flipped"),
        order_comparable=sorted_by_id("order_comparable"),
        repeat_flipped=sorted_by_id("repeat_flipped"),
        repeat_comparable=sorted_by_id("repeat_comparable"),
        any_flipped=sorted_by_id("any_flipped"), n_order_pairs=int(rows["n_pairs"].sum()),
        n_order_pairs_flipped=int(rows["n_pairs_flipped"].sum()), confidence=confidence,
    )
    n_scored = rows["n_scored"].to_numpy(dtype=np.int64)
    per_item = pd.DataFrame({
        "item_id": rows["item_id"].astype("str"),
        "verdict": rows["verdict"].astype("str"),
        "n_calls": rows["n_calls"].to_numpy(dtype=np.int64),
        "n_scored": n_scored,
        "order_flipped": rows["order_flipped"].to_numpy(dtype=bool),
        "repeat_flipped": rows["repeat_flipped"].to_numpy(dtype=bool),
        "flipped": rows["any_flipped"].to_numpy(dtype=bool) & (n_scored >= 2),
        "both_orders": rows["order_comparable"].to_numpy(dtype=bool),
        # objects with NaN for none, as aggregate_calls' Series.map gives
        "reasoning": rows["reasoning"].astype(object).where(rows["reasoning"].notna(), np.nan),
        "unscored_reason": rows["unscored_reason"].astype(object).where(
            rows["unscored_reason"].notna(), np.nan),
    })
    return per_item[_ITEM_COLUMNS], consistency


__all__ = [
    "AGGREGATION_RULES", "DEFAULT_RULE", "AggregationRule", "aggregate_calls",
    "aggregate_stored_calls", "normalize_rule", "rule_for",
]
