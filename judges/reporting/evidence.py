"""The calibration evidence and the target run, read from the database (and from files).

:func:`calibration_evidence` turns a dataset's labels, their recorded provenance and a judge's
verdicts into the pure :class:`~judges.calibration.CalibrationEvidence` the one estimation path
(:func:`~judges.calibration.answer_pass_rate`) works from; :func:`run_counts` does the same for
the rows whose pass rate is wanted. A judge card carries the evidence, and ``calibrate score``
builds the target from a verdicts file with :func:`run_counts_of_items`, so a card scored on the
report's target verdicts gives the report's number.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.calibration import (
    SELECTIONS,
    CalibrationEvidence,
    LabelledRows,
    RunCounts,
    judge_outcomes,
    order_trend,
)
from judges.calibration.evidence import NO_SEGMENT, OUTCOME_NOT_RUN

__all__ = [
    "calibration_evidence",
    "document_codes",
    "escalation_of_labels",
    "judged_rows",
    "per_row",
    "row_positions",
    "run_counts",
    "run_counts_of_items",
    "selections_of",
    "verdicts_fingerprint",
]

_HUMAN = {"pass": 1, "fail": 0}


def verdicts_fingerprint(item_ids: npt.ArrayLike, verdicts: npt.ArrayLike) -> str:
    """A hash of a run's per-item verdicts (rows the judge ran on), independent of row order.

    Two runs with the same fingerprint have the same verdict on every item: a verdicts file
    whose fingerprint is a card's *is* the card's calibration run.
    """
    ids = np.asarray(item_ids, dtype=object).astype(str)
    words = np.asarray(verdicts, dtype=object).astype(str)
    order = np.argsort(ids, kind="stable")
    text = "\n".join(f"{i}\x1f{v}" for i, v in zip(ids[order], words[order], strict=True))
    return "b2:" + hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def per_row(values: npt.NDArray[Any], rows: npt.NDArray[np.int64]) -> npt.NDArray[Any]:
    """``values[rows]`` as objects, NaN where ``rows`` is -1 (no such row)."""
    out = np.asarray(values, dtype=object)[np.maximum(rows, 0)] if len(values) else (
        np.full(len(rows), np.nan, dtype=object))
    out[rows < 0] = np.nan
    return out


def judged_rows(ids: npt.NDArray[Any], judged: pd.DataFrame) -> npt.NDArray[np.int64]:
    """For each row of a dataset (``ids`` in file order), its row in ``judged`` (-1: none).

    ``judged`` holds the judged items in file order, a subset of the rows; when the judge ran
    on every row (the usual case at scale) the two id arrays are equal and no lookup is made.
    """
    judged_ids = judged["item_id"].to_numpy(dtype=object)
    if len(judged_ids) == len(ids) and np.array_equal(judged_ids, ids):
        return np.arange(len(ids), dtype=np.int64)
    return np.asarray(pd.Index(judged_ids, dtype=object).get_indexer(ids), dtype=np.int64)


def row_positions(ids: npt.NDArray[Any], labelled: pd.DataFrame) -> npt.NDArray[np.int64]:
    """For each labelled row, its row among the dataset's ``ids`` (-1: not one of them)."""
    return np.asarray(pd.Index(ids, dtype=object).get_indexer(
        labelled["item_id"].to_numpy(dtype=object)), dtype=np.int64)


def run_counts(groups: dict[str, Any], judged: pd.DataFrame) -> tuple[RunCounts, Any]:
    """The judge's outcomes on every row of a dataset, and each row's outcome in file order.

    Args:
        groups: :meth:`LabelStore.item_groups` of the dataset (file order).
        judged: The judge's aggregated verdicts (``item_id``, ``verdict``, ``flipped``).

    Returns:
        ``(counts, outcomes)``: the :class:`RunCounts` and the per-row outcome codes.
    """
    at = judged_rows(groups["item_id"], judged)
    verdicts = per_row(judged["verdict"].to_numpy(dtype=object), at)
    flipped = per_row(judged["flipped"].to_numpy(dtype=object), at)
    outcome = judge_outcomes(verdicts)
    flips = pd.Series(flipped, dtype=object).fillna(False).astype(bool).to_numpy()
    return RunCounts.from_rows(outcome, flipped=flips, segment=groups["segment"]), outcome


def run_counts_of_items(items: pd.DataFrame, segments: dict[str, str] | None = None) -> RunCounts:
    """The judge's outcomes on the items of a verdicts file (every item was run).

    Args:
        items: Aggregated verdicts (``item_id``, ``verdict``, ``flipped``), e.g. of
            :func:`judges.aggregation.aggregate_calls`.
        segments: Item id -> segment, when the file carries them.
    """
    outcome = judge_outcomes(items["verdict"].to_numpy(dtype=object))
    flipped = items["flipped"].fillna(False).astype(bool).to_numpy() if (
        "flipped" in items) else None
    seg = None
    if segments:
        seg = np.array([segments.get(i, np.nan) for i in items["item_id"].astype(str)],
                       dtype=object)
    return RunCounts.from_rows(outcome, flipped=flipped, segment=seg)


def _first_provenance(provenance: pd.DataFrame) -> pd.DataFrame:
    """One row per item: the provenance of its first current label (which drew it)."""
    if provenance.empty:
        return provenance
    first = provenance.sort_values(["item_id", "label_id"], kind="stable")
    return first.drop_duplicates("item_id", keep="first").set_index("item_id")


def calibration_evidence(
    *, labelled: pd.DataFrame, provenance: pd.DataFrame, groups: dict[str, Any],
    population: RunCounts, outcome: npt.NDArray[np.int8], judged: pd.DataFrame, rule: str,
    escalated_ids: Sequence[str] | None = None,
) -> CalibrationEvidence:
    """The calibration evidence of a dataset's labels and a judge's verdicts on it.

    Args:
        labelled: One row per labelled item: ``item_id``, ``verdict`` (human consensus).
        provenance: :meth:`LabelStore.provenance_frame` of the dataset and criterion.
        groups: :meth:`LabelStore.item_groups` of the dataset (file order).
        population: :func:`run_counts` of the dataset.
        outcome: The per-row outcomes :func:`run_counts` returned.
        judged: The judge's aggregated verdicts on the dataset (``flipped`` per item).
        rule: The aggregation rule the verdicts were aggregated under.
        escalated_ids: The rows of the escalation the labels drawn from the escalated queue
            came from (:func:`escalation_of_labels`); ``None`` without one.

    Returns:
        A :class:`CalibrationEvidence` (no fingerprint: :func:`verdicts_fingerprint` adds it
        where a card is written).
    """
    ids = groups["item_id"]
    at = row_positions(ids, labelled)
    human: npt.NDArray[np.int8] = np.asarray(
        labelled["verdict"].map(_HUMAN).fillna(-1).to_numpy(dtype=np.int8), dtype=np.int8)
    lab_outcome = np.where(at >= 0, outcome[np.maximum(at, 0)], OUTCOME_NOT_RUN).astype(np.int8)
    judged_at = judged_rows(ids, judged)
    flip_of_row = per_row(judged["flipped"].to_numpy(dtype=object), judged_at)
    flipped = pd.Series(per_row(flip_of_row, at), dtype=object).fillna(False).astype(
        bool).to_numpy()
    seg_names = per_row(groups["segment"], at)
    seg_text = pd.Series(seg_names, dtype=object)
    seg_text = seg_text.where(seg_text.notna(), NO_SEGMENT).astype(str)
    index = {name: i for i, name in enumerate(population.segments)}
    segment = np.array([index[s] for s in seg_text], dtype=np.int64)
    document = document_codes(per_row(groups["document_id"], at), labelled["item_id"])
    selection, share = selections_of(labelled["item_id"], provenance)
    escalated = lab_escalated = None
    if escalated_ids is not None:
        in_escalation = pd.Index(pd.unique(np.asarray(escalated_ids, dtype=object)),
                                 dtype=object).get_indexer(ids) >= 0
        row_flips = pd.Series(flip_of_row, dtype=object).fillna(False).astype(bool).to_numpy()
        seg_of_row = groups["segment"]
        escalated = RunCounts.from_rows(
            outcome[in_escalation], flipped=row_flips[in_escalation],
            segment=np.asarray(seg_of_row, dtype=object)[in_escalation],
        ).aligned(population.segments)
        lab_escalated = np.where(at >= 0, in_escalation[np.maximum(at, 0)], False)
    rows = LabelledRows(human=human, outcome=lab_outcome, flipped=flipped, segment=segment,
                        document=document, selection=selection, share=share,
                        escalated=lab_escalated)  # fmt: skip
    in_file_order = (selection == SELECTIONS.index("file")).any()
    trend = order_trend(outcome) if in_file_order else None
    return CalibrationEvidence(rows, population, order_trend=trend, rule=rule,
                               escalated=escalated)


def document_codes(documents: npt.NDArray[Any], item_ids: pd.Series) -> npt.NDArray[np.int64]:
    """Document code per labelled row (-1 everywhere when no two rows share a document).

    Args:
        documents: The ``document_id`` of each labelled row (``NaN`` for none).
        item_ids: The labelled rows' ids (a row without a document is its own).
    """
    docs = pd.Series(documents, dtype=object)
    document = np.full(len(docs), -1, dtype=np.int64)
    if docs.notna().any() and docs.dropna().duplicated().any():
        keyed = docs.where(docs.notna(), "item:" + item_ids.astype(str).to_numpy())
        _, codes = np.unique(keyed.astype(str).to_numpy(), return_inverse=True)
        document = codes.astype(np.int64)
    return document


def selections_of(
    item_ids: pd.Series, provenance: pd.DataFrame
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float64]]:
    """How each labelled row was chosen: selection codes and active selection shares.

    Args:
        item_ids: The labelled rows' ids.
        provenance: :meth:`LabelStore.provenance_frame` of the dataset and criterion (a row's
            first current label tells how it was drawn).

    Returns:
        ``(selection, share)``: an index into :data:`~judges.calibration.SELECTIONS` per row
        (``unknown`` when not recorded) and the active order's share (``NaN`` otherwise).
    """
    first = _first_provenance(provenance)
    ids = item_ids.astype(str)
    if len(first):
        names = ids.map(first["selection"]).fillna("unknown")
        share = ids.map(first["selection_share"]).to_numpy(dtype=float)
    else:
        names = pd.Series(["unknown"] * len(ids))
        share = np.full(len(ids), np.nan)
    selection = np.array([SELECTIONS.index(s) for s in names], dtype=np.int8)
    return selection, share


def escalation_of_labels(provenance: pd.DataFrame) -> str | None:
    """The acceptance rule the dataset's escalated labels were drawn under, if exactly one.

    ``None`` when no label was drawn from the escalated queue, or when they come from two
    rules (the estimate then refuses them: one escalation splits the rows).
    """
    first = _first_provenance(provenance)
    if first.empty:
        return None
    rules = set(first.loc[first["selection"] == "escalated", "stratum"].dropna().astype(str))
    return next(iter(rules)) if len(rules) == 1 else None
