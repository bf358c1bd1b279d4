"""The pairwise evidence and target run, read from the database (and from verdicts files).

:func:`pairwise_run_counts` counts a pairwise judge's outcomes on every row of a dataset (with
each row's flip and one-order flags and model pair); :func:`pairwise_evidence` adds the
labelled rows — the human consensus per row, how the row was chosen — to give the pure
:class:`~judges.calibration.PairwiseEvidence` the one pairwise estimation path
(:func:`~judges.calibration.answer_win_rate`) works from. ``calibrate score`` builds the target
of a verdicts file with :func:`pairwise_counts_of_items` and recognises the calibration run's
own verdicts by :func:`pairwise_fingerprint`.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from judges.calibration import (
    SELECTIONS,
    PairwiseEvidence,
    PairwiseLabelledRows,
    PairwiseRunCounts,
    human_codes,
    one_order_flags,
    order_trend,
    pairwise_outcomes,
)
from judges.calibration.pairwise_evidence import NO_PAIR, PW_NOT_RUN
from judges.reporting.evidence import (
    document_codes,
    judged_rows,
    per_row,
    row_positions,
    selections_of,
    verdicts_fingerprint,
)

__all__ = [
    "model_pairs",
    "one_order_ids",
    "pair_name",
    "pairwise_counts_of_items",
    "pairwise_evidence",
    "pairwise_fingerprint",
    "pairwise_run_counts",
]

PAIR_SEPARATOR = " vs "


def pair_name(model_a: str, model_b: str) -> str:
    """The name of a model pair (``A vs B``: A's answers are ``answer_a``)."""
    return f"{model_a}{PAIR_SEPARATOR}{model_b}"


def model_pairs(items: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """Item id -> ``(model_a, model_b)`` from the items' metadata (items without both: absent).

    Args:
        items: :meth:`LabelStore.items_frame` rows (``item_id``, ``metadata`` as JSON text).
    """
    out: dict[str, tuple[str, str]] = {}
    for item_id, raw in zip(items["item_id"].astype(str), items["metadata"], strict=True):
        try:
            meta = json.loads(raw) if isinstance(raw, str) else (raw or {})
        except ValueError:
            continue
        a, b = (meta or {}).get("model_a"), (meta or {}).get("model_b")
        if a and b:
            out[item_id] = (str(a), str(b))
    return out


def _flags(items: pd.DataFrame) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """Per item of an aggregated frame: flipped, and judged in one order only."""
    flipped = items["flipped"].fillna(False).astype(bool).to_numpy()
    both = (items["both_orders"].fillna(False).astype(bool).to_numpy()
            if "both_orders" in items else np.zeros(len(items), dtype=bool))
    scored = items["n_scored"].fillna(0).to_numpy(dtype=np.int64) if "n_scored" in items else (
        np.ones(len(items), dtype=np.int64))
    return flipped, one_order_flags(scored, both)


def pairwise_run_counts(
    ids: npt.NDArray[Any], judged: pd.DataFrame, pairs: dict[str, tuple[str, str]]
) -> tuple[PairwiseRunCounts, npt.NDArray[np.int8], npt.NDArray[np.bool_],
           npt.NDArray[np.bool_], npt.NDArray[Any]]:
    """The judge's outcomes on every row of a dataset, and per row in file order.

    Args:
        ids: Every item id of the dataset, in file order.
        judged: The judge's aggregated verdicts (``item_id``, ``verdict``, ``flipped``,
            ``n_scored``, ``both_orders``).
        pairs: Item id -> model pair (:func:`model_pairs`).

    Returns:
        ``(counts, outcome, flipped, one_order, pair)``: the counts and each row's outcome
        code, flags and pair name (``NaN`` for none).
    """
    at = judged_rows(ids, judged)
    outcome = pairwise_outcomes(per_row(judged["verdict"].to_numpy(dtype=object), at))
    flipped_items, one_items = _flags(judged)
    flipped = pd.Series(per_row(flipped_items, at), dtype=object).fillna(False).astype(
        bool).to_numpy()
    one_order = pd.Series(per_row(one_items, at), dtype=object).fillna(False).astype(
        bool).to_numpy()
    pair = np.array([pair_name(*pairs[i]) if i in pairs else np.nan
                     for i in np.asarray(ids, dtype=object).astype(str)], dtype=object)
    counts = PairwiseRunCounts.from_rows(outcome, flipped=flipped, one_order=one_order,
                                         pair=pair if len(pairs) else None)
    return counts, outcome, flipped, one_order, pair


def one_order_ids(items: pd.DataFrame) -> set[str]:
    """Ids of an aggregated frame's items judged in one order only (:func:`one_order_flags`)."""
    return set(items["item_id"].astype(str)[_flags(items)[1]])


def pairwise_counts_of_items(items: pd.DataFrame) -> PairwiseRunCounts:
    """The judge's outcomes on the items of a verdicts file (every item was run; no pairs)."""
    flipped, one_order = _flags(items)
    return PairwiseRunCounts.from_rows(pairwise_outcomes(items["verdict"].to_numpy(dtype=object)),
                                       flipped=flipped, one_order=one_order)


def pairwise_fingerprint(items: pd.DataFrame) -> str:
    """:func:`verdicts_fingerprint` of a pairwise run: each item's verdict and one-order flag."""
    _, one_order = _flags(items)
    words = items["verdict"].astype(str).to_numpy(dtype=object)
    marked = np.where(one_order, words + "/one-order", words)
    return verdicts_fingerprint(items["item_id"].to_numpy(dtype=object), marked)


def pairwise_evidence(
    *, consensus: pd.DataFrame, provenance: pd.DataFrame, groups: dict[str, Any],
    population: PairwiseRunCounts, outcome: npt.NDArray[np.int8], flipped: npt.NDArray[np.bool_],
    one_order: npt.NDArray[np.bool_], pair: npt.NDArray[Any], rule: str,
) -> PairwiseEvidence:
    """The pairwise evidence of a dataset's human votes and a judge's verdicts on it.

    Args:
        consensus: One row per labelled item: ``item_id``, ``verdict`` (the human consensus:
            a / b / tie, ``unsure`` without a decided vote).
        provenance: :meth:`LabelStore.provenance_frame` of the dataset and criterion.
        groups: :meth:`LabelStore.item_groups` of the dataset (file order).
        population: :func:`pairwise_run_counts` of the dataset.
        outcome: The per-row outcomes it returned, with the flip and one-order flags and the
            pair names.
        flipped: See ``outcome``.
        one_order: See ``outcome``.
        pair: See ``outcome``.
        rule: The aggregation rule of the verdicts.

    Returns:
        A :class:`PairwiseEvidence` (no fingerprint: :func:`pairwise_fingerprint` adds it
        where a card is written).
    """
    ids = groups["item_id"]
    at = row_positions(ids, consensus)
    has = at >= 0
    where = np.maximum(at, 0)
    lab_outcome = np.where(has, outcome[where], PW_NOT_RUN).astype(np.int8)
    index = {name: i for i, name in enumerate(population.pairs)}
    names = pd.Series(per_row(pair, at), dtype=object)
    names = names.where(names.notna(), NO_PAIR).astype(str)
    selection, share = selections_of(consensus["item_id"], provenance)
    rows = PairwiseLabelledRows(
        human=human_codes(consensus["verdict"].to_numpy(dtype=object)), outcome=lab_outcome,
        flipped=np.where(has, flipped[where], False).astype(bool),
        one_order=np.where(has, one_order[where], False).astype(bool),
        pair=np.array([index.get(s, 0) for s in names], dtype=np.int64),
        document=document_codes(per_row(groups["document_id"], at), consensus["item_id"]),
        selection=selection, share=share,
    )  # fmt: skip
    in_file_order = (selection == SELECTIONS.index("file")).any()
    trend = order_trend(outcome, decided=3) if in_file_order else None
    return PairwiseEvidence(rows, population, order_trend=trend, rule=rule)
