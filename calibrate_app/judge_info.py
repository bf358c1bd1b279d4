"""Read-only facts about judge runs, for the Data page counts and the labelling queue orders.

Everything comes from :class:`judges.stores.judge_store.JudgeStore` (the ``judges`` tables are
created on
first use, so a database no judge has touched gives "nothing"). The queue orders use one judge
config: the one run (or imported) most recently on the dataset, with its verdicts combined by
that config's aggregation rule, exactly as its calibration report combines them. Nothing here is
ever shown to an annotator: it only orders their queue (the labelling page stays blind).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from judges.aggregation import aggregate_calls, rule_for
from judges.stores.judge_store import JudgeStore
from judges.verdicts import judge_verdicts
from labels import LabelStore
from labels.sampling import QueueOrder, QueuePlan, plan_queue


@dataclass(frozen=True)
class QueueVerdicts:
    """One judge config's verdicts on a dataset, per item.

    Attributes:
        config_id: The config (the newest run on the dataset).
        verdicts: Item id → the aggregated verdict (items left unscored are absent).
        flips: Items whose calls disagree (across repeats or source orders).
        uncertainty: Item id → uncertainty (:func:`uncertainty_of` of the same calls) when
            :func:`queue_verdicts` was asked for it, else ``None``.
    """

    config_id: str
    verdicts: dict[str, str]
    flips: frozenset[str]
    uncertainty: dict[str, float] | None = None


def judge_run_counts(store: LabelStore) -> dict[str, int]:
    """Dataset name → number of judge runs on it (empty when no judge has ever run)."""
    return JudgeStore(store.db).run_counts()


def fingerprint(store: LabelStore, dataset: str) -> str:
    """Changes whenever the dataset's judge verdicts change (cheap: one aggregate)."""
    return JudgeStore(store.db).calls_fingerprint(dataset)


def queue_verdicts(store: LabelStore, dataset: str, *,
                   with_uncertainty: bool = False) -> QueueVerdicts | None:
    """The newest judge config's verdicts and flips on ``dataset``; ``None`` before any run.

    ``with_uncertainty`` also fills :attr:`QueueVerdicts.uncertainty` from the same calls:
    a second read of every call of the config would cost as much again at 10 M calls.
    """
    judge_store = JudgeStore(store.db)
    config_id = judge_store.latest_config_on(dataset)
    if config_id is None:
        return None
    calls = judge_verdicts(store, dataset, config_id)
    config = judge_store.stored_config(config_id).config
    items, _ = aggregate_calls(calls, rule=rule_for(config))
    scored = items[items["verdict"].ne("unscored")]
    flipped = items["flipped"].astype("boolean").fillna(False).astype(bool)
    return QueueVerdicts(
        config_id=config_id,
        verdicts=dict(zip(scored["item_id"], scored["verdict"], strict=True)),
        flips=frozenset(items.loc[flipped, "item_id"].astype(str)),
        uncertainty=uncertainty_of(calls) if with_uncertainty else None,
    )


def flips_of(found: QueueVerdicts | None) -> frozenset[str] | None:
    """The flips of ``found`` for the flips-first order; ``None`` when it holds no calls."""
    return None if found is None or (not found.verdicts and not found.flips) else found.flips


def uncertainty(store: LabelStore, dataset: str, *,
                config_id: str | None = None) -> dict[str, float] | None:
    """Item id → the newest judge config's uncertainty in [0, 1], for the active queue order.

    Twice the share of the item's verdicts (over repeats and source orders) that differ from its
    most common verdict (0 = always the same, 1 = an even split), and 1 for an item with no
    usable verdict. ``None`` when no judge has run on the dataset. ``config_id`` (default: the
    newest run's) names the config. A queue plan gets its uncertainty from :func:`queue_verdicts`,
    which reads the calls once for verdicts and uncertainty alike.
    """
    config_id = config_id or JudgeStore(store.db).latest_config_on(dataset)
    if config_id is None:
        return None
    return uncertainty_of(judge_verdicts(store, dataset, config_id))


def uncertainty_of(calls: pd.DataFrame) -> dict[str, float] | None:
    """Item id → uncertainty in [0, 1] of one config's calls (see :func:`uncertainty`).

    Args:
        calls: Rows with ``item_id`` and ``verdict`` (``None``/NaN for an unscored call), as
            :func:`judges.verdicts.judge_verdicts` returns them.

    Returns:
        The scores, or ``None`` when ``calls`` is empty.
    """
    if calls.empty:
        return None
    scores: dict[str, float] = {}
    for item_id, verdicts in calls.groupby("item_id")["verdict"]:
        usable = verdicts.dropna()
        total = len(usable)
        top = int(usable.value_counts().max()) if total else 0
        scores[str(item_id)] = 1.0 if not total else min(1.0, 2.0 * (1.0 - top / total))
    return scores


JUDGE_ORDERS = ("stratified", "flips_first", "active")
"""The queue orders built from a judge's verdicts (their plans follow new verdicts)."""


def build_queue_plan(store: LabelStore, dataset: str, order: QueueOrder, seed: int,
                     criterion: str | None = None) -> QueuePlan:
    """The queue order of ``dataset`` for ``order`` and ``seed``, from the store's verdicts.

    The app shares one per process (``resources.QueuePlans``); assigning rows builds one to
    deal them in the same order. ``criterion`` picks the escalation the escalated order serves.
    """
    if order == "escalated":
        escalation = store.escalation(dataset, criterion) if criterion is not None else None
        return plan_queue(
            store.item_ids(dataset), order="escalated", seed=seed,
            escalated=None if escalation is None else escalation.item_ids,
            judge=None if escalation is None else escalation.judge,
            rule=None if escalation is None else escalation.rule,
        )  # fmt: skip
    # One read of the newest config's verdicts, so the plan's strata, flips and uncertainty
    # come from one config and the plan can name it (a run starting meanwhile changes nothing).
    found = queue_verdicts(store, dataset, with_uncertainty=order == "active") \
        if order in JUDGE_ORDERS else None
    verdicts = found.verdicts if found is not None and order in ("stratified", "active") \
        else None
    flips = flips_of(found) if order == "flips_first" else None
    return plan_queue(
        store.item_ids(dataset), order=order, seed=seed, verdicts=verdicts, flips=flips,
        uncertainty=None if found is None else found.uncertainty,
        judge=None if found is None else found.config_id,
    )  # fmt: skip


__all__ = ["JUDGE_ORDERS", "QueueVerdicts", "build_queue_plan", "fingerprint", "flips_of",
           "judge_run_counts", "queue_verdicts", "uncertainty", "uncertainty_of"]
