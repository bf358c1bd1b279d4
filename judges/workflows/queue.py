"""The label queue: its order from a judge's verdicts, and rows dealt to annotators.

One workflow for the Label page (``calibrate_app.resources`` caches the plans it builds), the
Data page's judge-run counts, ``calibrate assignments`` and the Calibration page's uncertainty.

The queue orders use one judge config: the one run (or imported) most recently on the
dataset, with its verdicts combined by that config's aggregation rule, exactly as its
calibration report combines them. Nothing here is ever shown to an annotator: it only orders
their queue (the labelling page stays blind). The judge tables are created on first use, so a
database no judge has touched gives "nothing".

The queue's pieces the app keeps per process (:class:`Holds`, :class:`LabelTally`,
:class:`QueuePlan`, :class:`QueueSettings`) are importable from here.

Assigned rows are dealt in the queue's own order (see :mod:`labels.assignments` for why that
keeps every label's provenance), from the rows nobody labelled or was assigned yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judges.verdicts import judge_verdicts
from labels.assignments import deal_rows, free_rows
from labels.queue_counts import LabelTally, QueueCounts
from labels.sampling import Holds, QueueOrder, QueuePlan, QueueSettings, plan_queue

if TYPE_CHECKING:
    import pandas as pd

    from judges.workspace import Workspace


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


def judge_run_counts(workspace: Workspace) -> dict[str, int]:
    """Dataset name → number of judge runs on it (empty when no judge has ever run)."""
    return workspace.judges.run_counts()


def fingerprint(workspace: Workspace, dataset: str) -> str:
    """Changes whenever the dataset's judge verdicts change (cheap: one aggregate)."""
    return workspace.judges.calls_fingerprint(dataset)


def queue_verdicts(workspace: Workspace, dataset: str, *,
                   with_uncertainty: bool = False) -> QueueVerdicts | None:
    """The newest judge config's verdicts and flips on ``dataset``; ``None`` before any run.

    ``with_uncertainty`` also fills :attr:`QueueVerdicts.uncertainty` from the same calls:
    a second read of every call of the config would cost as much again at 10 M calls.
    """
    from judges.aggregation import aggregate_calls, rule_for  # the statistics: on first use

    judge_store = workspace.judges
    config_id = judge_store.latest_config_on(dataset)
    if config_id is None:
        return None
    calls = judge_verdicts(workspace, dataset, config_id)
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


def uncertainty(workspace: Workspace, dataset: str, *,
                config_id: str | None = None) -> dict[str, float] | None:
    """Item id → the newest judge config's uncertainty in [0, 1], for the active queue order.

    Twice the share of the item's verdicts (over repeats and source orders) that differ from its
    most common verdict (0 = always the same, 1 = an even split), and 1 for an item with no
    usable verdict. ``None`` when no judge has run on the dataset. ``config_id`` (default: the
    newest run's) names the config. A queue plan gets its uncertainty from :func:`queue_verdicts`,
    which reads the calls once for verdicts and uncertainty alike.
    """
    config_id = config_id or workspace.judges.latest_config_on(dataset)
    if config_id is None:
        return None
    return uncertainty_of(judge_verdicts(workspace, dataset, config_id))


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


def build_queue_plan(workspace: Workspace, dataset: str, order: QueueOrder, seed: int,
                     criterion: str | None = None) -> QueuePlan:
    """The queue order of ``dataset`` for ``order`` and ``seed``, from the stored verdicts.

    The app shares one per process (``calibrate_app.resources.QueuePlans``); assigning rows
    builds one to deal them in the same order. ``criterion`` picks the escalation the
    escalated order serves.
    """
    store = workspace.labels
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
    found = queue_verdicts(workspace, dataset, with_uncertainty=order == "active") \
        if order in JUDGE_ORDERS else None
    verdicts = found.verdicts if found is not None and order in ("stratified", "active") \
        else None
    flips = flips_of(found) if order == "flips_first" else None
    return plan_queue(
        store.item_ids(dataset), order=order, seed=seed, verdicts=verdicts, flips=flips,
        uncertainty=None if found is None else found.uncertainty,
        judge=None if found is None else found.config_id,
    )  # fmt: skip


# -- assignments (team mode) --------------------------------------------------------------


@dataclass(frozen=True)
class AssignedBatch:
    """What one call of :func:`assign_batch` dealt.

    Attributes:
        batch_id: The batch's id in the audit trail.
        rows: annotator → the rows dealt to them now.
        order: The queue order the rows were taken in.
        free: How many free rows there were before dealing.
    """

    batch_id: int
    rows: dict[str, list[str]]
    order: str
    free: int

    def describe(self) -> str:
        """One line: the batch, its order, each annotator's rows and how many overlap."""
        each = ", ".join(f"{who} {len(rows):,} rows" for who, rows in self.rows.items())
        distinct = len({row for rows in self.rows.values() for row in rows})
        dealt = sum(len(rows) for rows in self.rows.values())
        shared = f"; {dealt - distinct:,} assignment(s) overlap" if dealt > distinct else ""
        return f"Batch {self.batch_id} ({self.order} order): {each}{shared}."


def assign_batch(workspace: Workspace, dataset: str, criterion: str,
                 annotators: Sequence[str], *, batch: int, overlap: int | None,
                 actor: str) -> AssignedBatch:
    """Deal ``batch`` free rows of the queue to each of ``annotators`` and record them.

    Args:
        workspace: The open database.
        dataset: The dataset.
        criterion: The criterion to label for.
        annotators: Addresses with the annotator or owner role.
        batch: Rows per annotator.
        overlap: Annotators per row; None: every one of ``annotators`` ("everyone").
        actor: Who assigns (audit trail).

    Raises:
        ValueError: a bad batch or overlap (see :func:`labels.assignments.deal_rows`).
        labels.errors.NotFoundError: no such dataset or criterion.
        labels.stores.team_store.TeamError: someone in ``annotators`` does not label.
        labels.errors.CalibrateError: no free rows are left.
    """
    from labels.errors import CalibrateError

    store = workspace.labels
    store.dataset(dataset)  # NotFoundError names the datasets there are
    store.criterion(criterion)
    team = workspace.team
    people = team.check_labellers(annotators)
    overlap = len(people) if overlap is None else overlap
    deal_rows([], people, batch=batch, overlap=overlap)  # a bad request fails before any work
    settings = store.queue_settings(dataset, criterion)
    plan = build_queue_plan(workspace, dataset, settings.order, settings.seed, criterion)
    _, _, counts = store.queue_snapshot(dataset, "", criterion)
    assigned = {row for rows in team.assignments(dataset, criterion).values() for row in rows}
    candidates = free_rows(plan.item_ids, labelled=counts.keys(), assigned=assigned)
    if not candidates:
        raise CalibrateError(f"no row of {dataset!r} is free to assign for {criterion!r}: "
                             "every row is labelled or already assigned")
    dealt = deal_rows(candidates, people, batch=batch, overlap=overlap)
    batch_id = team.assign(dataset, criterion, dealt, actor=actor)
    return AssignedBatch(batch_id, dealt, plan.order, len(candidates))


__all__ = ["JUDGE_ORDERS", "AssignedBatch", "Holds", "LabelTally", "QueueCounts", "QueuePlan",
           "QueueSettings", "QueueVerdicts", "assign_batch",
           "build_queue_plan", "fingerprint", "flips_of", "judge_run_counts", "queue_verdicts",
           "uncertainty", "uncertainty_of"]
