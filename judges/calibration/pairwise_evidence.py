"""What a corrected win rate rests on, as plain arrays and counts: the pairwise evidence.

The pairwise twin of :mod:`judges.calibration.evidence`. Every surface that shows the corrected
shares of a pairwise (A vs B) judge — the report, the Calibration page, a pairwise judge card
scored in CI — answers from the same two inputs:

* :class:`PairwiseEvidence` — the labelled rows of the calibration dataset (the human consensus
  per row, the judge's outcome on it, whether its verdict flipped, whether it was judged in one
  presentation order only, model pair, document, how the row was chosen) and the judge's
  outcomes on *every* row of that dataset, as counts;
* :class:`PairwiseRunCounts` — the judge's outcomes on the rows whose shares are wanted.

Both hold no text and no ids, so a card can carry the evidence (:meth:`PairwiseEvidence.to_json`)
and reproduce the report's shares exactly on new verdicts
(:func:`~judges.calibration.answer_win_rate`).

Judge outcomes (:data:`PAIRWISE_OUTCOMES`): ``judge a``, ``judge b``, ``judge tie`` (a verdict
that changed with the order is a tie under ``all_agree``, the MT-Bench rule), ``not judged``
(unsure or unscored) and ``not run``. A row is **one order** when it was judged in one
presentation order only while other rows of its run were judged in both
(:func:`one_order_flags`): under ``all_agree`` its verdict never had to survive the swap, so the
answer does not count it as a decided verdict (see :mod:`judges.calibration.pairwise_answer`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ._results import CalibrationInputError
from ._verdicts import Codes, Flags, Indices, PerRow
from .evidence import (
    NO_SEGMENT,
    OrderTrend,
    _OutcomeCounts,
    evidence_json,
    group_codes,
    grouped_rows,
)
from .vocabulary import SELECTIONS

__all__ = [
    "NO_PAIR",
    "PAIRWISE_EVIDENCE_VERSION",
    "PAIRWISE_OUTCOMES",
    "PW_A",
    "PW_B",
    "PW_NOT_JUDGED",
    "PW_NOT_RUN",
    "PW_TIE",
    "PairwiseEvidence",
    "PairwiseLabelledRows",
    "PairwiseRunCounts",
    "human_codes",
    "one_order_flags",
    "pairwise_outcomes",
]

PAIRWISE_EVIDENCE_VERSION: Final = 1
"""Version of :meth:`PairwiseEvidence.to_json` (a pairwise card records it)."""

PW_A, PW_B, PW_TIE, PW_NOT_JUDGED, PW_NOT_RUN = 0, 1, 2, 3, 4
PAIRWISE_OUTCOMES: Final[tuple[str, ...]] = ("judge a", "judge b", "judge tie", "not judged",
                                             "not run")
NO_PAIR: Final = NO_SEGMENT
"""The model pair of rows that name none."""

_VERDICT_CODES = {"a": PW_A, "b": PW_B, "tie": PW_TIE, "unsure": PW_NOT_JUDGED,
                  "unscored": PW_NOT_JUDGED}
_HUMAN_CODES = {"a": 0, "b": 1, "tie": 2}


def pairwise_outcomes(verdicts: PerRow) -> npt.NDArray[np.int8]:
    """Outcome codes of per-row pairwise verdicts (``None``/``NaN``: the judge never ran).

    Examples:
        >>> pairwise_outcomes(["a", "b", "tie", "unsure", "unscored", None]).tolist()
        [0, 1, 2, 3, 3, 4]
    """
    values = pd.Series(np.asarray(verdicts, dtype=object), dtype=object)
    missing = values.isna().to_numpy()
    words = values.where(~missing, "").astype(str)
    codes = words.map(_VERDICT_CODES)
    unknown = codes.isna().to_numpy() & ~missing
    if unknown.any():
        bad = sorted({str(v) for v in words[unknown]})[:5]
        raise CalibrationInputError(f"unknown pairwise verdicts {bad} (a, b, tie, unsure, "
                                    "unscored)")
    return np.asarray(codes.fillna(PW_NOT_RUN).to_numpy(dtype=np.int8), dtype=np.int8)


def human_codes(consensus: PerRow) -> npt.NDArray[np.int8]:
    """Human consensus codes: 0 a, 1 b, 2 tie, -1 unsure (no decided vote).

    Examples:
        >>> human_codes(["a", "b", "tie", "unsure"]).tolist()
        [0, 1, 2, -1]
    """
    values = pd.Series(np.asarray(consensus, dtype=object), dtype=object)
    return np.asarray(values.map(_HUMAN_CODES).fillna(-1).to_numpy(dtype=np.int8),
                      dtype=np.int8)


def one_order_flags(n_scored: npt.ArrayLike, both_orders: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """Rows judged in one presentation order only, in a run where other rows have both.

    A run whose rows were all judged in one order (no swap at all) has no such rows: its
    verdicts are all alike, and the report says position consistency was not measured.

    Args:
        n_scored: Scored calls per row (0: no verdict).
        both_orders: Per row: some repeat has both orders scored.

    Examples:
        >>> one_order_flags([2, 1, 0], [True, False, False]).tolist()
        [False, True, False]
        >>> one_order_flags([1, 1], [False, False]).tolist()
        [False, False]
    """
    scored = np.asarray(n_scored, dtype=np.int64) > 0
    both = np.asarray(both_orders, dtype=bool)
    if not both.any():
        return np.zeros(scored.shape, dtype=bool)
    return np.asarray(scored & ~both, dtype=bool)


# --------------------------------------------------------------------------- run counts


def _flags(values: npt.ArrayLike | None, n: int) -> npt.NDArray[np.int64]:
    if values is None:
        return np.zeros(n, dtype=np.int64)
    return np.asarray(pd.Series(np.asarray(values, dtype=object)).fillna(False).astype(bool),
                      dtype=np.int64)


@dataclass(frozen=True)
class PairwiseRunCounts(_OutcomeCounts):
    """The judge's outcomes on the rows of one run, per (outcome, flipped, one order, pair).

    Attributes:
        counts: ``(5, 2, 2, G)`` rows per outcome (:data:`PAIRWISE_OUTCOMES`), whether the
            row's verdict flipped across repeats/orders (0/1), whether it was judged in one
            order only (0/1), and model pair (index into ``pairs``).
        pairs: Model-pair names (``(none)`` for rows without one).
    """

    counts: npt.NDArray[np.int64]
    pairs: tuple[str, ...]

    def __post_init__(self) -> None:
        """Validate the shape."""
        self._check((len(PAIRWISE_OUTCOMES), 2, 2, len(self.pairs)))

    @classmethod
    def from_rows(
        cls, outcome: npt.ArrayLike,
        *, flipped: npt.ArrayLike | None = None, one_order: npt.ArrayLike | None = None,
        pair: PerRow | None = None,
    ) -> PairwiseRunCounts:
        """Count per-row outcomes (:func:`pairwise_outcomes`), flip and one-order flags, pairs."""
        o = np.asarray(outcome, dtype=np.int64)
        n = o.shape[0]
        f, one = _flags(flipped, n), _flags(one_order, n)
        names, codes = group_codes(pair, n, missing=NO_PAIR, what="pairs")
        g = len(names)
        flat = np.bincount(((o * 2 + f) * 2 + one) * g + codes,
                           minlength=len(PAIRWISE_OUTCOMES) * 4 * g)
        return cls(flat.reshape(len(PAIRWISE_OUTCOMES), 2, 2, g).astype(np.int64), names)

    def one_order(self) -> npt.NDArray[np.int64]:
        """Rows judged in one order only, per outcome."""
        return np.asarray(self.counts[:, :, 1, :].sum(axis=(1, 2)), dtype=np.int64)

    def decided(self, rule: str) -> npt.NDArray[np.int64]:
        """Rows with a decided verdict a / b / tie under ``rule``.

        Under ``all_agree`` a verdict counts only if it survived both orders, so the rows judged
        in one order only are not decided; under ``majority`` their single verdict counts.
        """
        o = self.by_outcome()[:3]
        if rule == "all_agree":
            o = o - self.one_order()[:3]
        return np.asarray(o, dtype=np.int64)

    def restrict(self, pair: str) -> PairwiseRunCounts:
        """The rows of one model pair."""
        keep = np.array([p == pair for p in self.pairs], dtype=bool)
        return PairwiseRunCounts(self.counts[..., keep], tuple(p for p in self.pairs if p == pair))

    def vocabulary(self, rule: str) -> dict[str, int]:
        """``rows``, ``decided``, ``one_order``, ``not_judged``, ``not_run`` (they add up)."""
        o = self.by_outcome()
        decided = int(self.decided(rule).sum())
        one = int(self.one_order()[:3].sum()) if rule == "all_agree" else 0
        return {"rows": int(o.sum()), "decided": decided, "one_order": one,
                "not_judged": int(o[PW_NOT_JUDGED]), "not_run": int(o[PW_NOT_RUN])}

    def to_json(self) -> dict[str, Any]:
        """``{pairs, cells: [[outcome, flipped, one_order, pair, rows], ...]}`` (non-zero)."""
        idx = np.nonzero(self.counts)
        return {
            "pairs": list(self.pairs),
            "cells": [[int(a), int(b), int(c), int(d), int(self.counts[a, b, c, d])]
                      for a, b, c, d in zip(*idx, strict=True)],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairwiseRunCounts:
        """Inverse of :meth:`to_json`."""
        pairs = tuple(str(s) for s in data["pairs"])
        out = np.zeros((len(PAIRWISE_OUTCOMES), 2, 2, len(pairs)), dtype=np.int64)
        for a, b, c, d, n in data["cells"]:
            out[int(a), int(b), int(c), int(d)] = int(n)
        return cls(out, pairs)


# --------------------------------------------------------------------------- labelled rows


@dataclass(frozen=True)
class PairwiseLabelledRows:
    """The labelled rows of a pairwise calibration dataset, one entry per row.

    Attributes:
        human: Human consensus code (0 a, 1 b, 2 tie, -1 unsure: no decided vote).
        outcome: The judge's outcome on the row (:data:`PAIRWISE_OUTCOMES`).
        flipped: Whether its verdict flipped across repeats/orders.
        one_order: Whether it was judged in one order only (:func:`one_order_flags`).
        pair: Model-pair index (into the evidence's ``pairs``).
        document: Document code (rows of one source document share it); -1 when none.
        selection: How the row was chosen (index into :data:`~judges.calibration.SELECTIONS`).
        share: The row's share of the active order's selection weight (``NaN`` otherwise).
    """

    human: Codes
    outcome: Codes
    flipped: Flags
    one_order: Flags
    pair: Indices
    document: Indices
    selection: Codes
    share: npt.NDArray[np.float64]

    def __post_init__(self) -> None:
        """Check that every array has one entry per row."""
        n = self.human.shape[0]
        for name in _COLUMNS[1:]:
            if getattr(self, name).shape != (n,):
                raise CalibrationInputError(f"labelled {name} must have {n} entries")

    @property
    def n(self) -> int:
        """Labelled rows."""
        return int(self.human.shape[0])

    def take(self, mask: npt.NDArray[np.bool_]) -> PairwiseLabelledRows:
        """The rows where ``mask`` holds."""
        return PairwiseLabelledRows(*(getattr(self, name)[mask] for name in _COLUMNS))

    def selections(self) -> dict[str, int]:
        """Labelled rows per recorded selection."""
        counts = np.bincount(self.selection.astype(np.int64), minlength=len(SELECTIONS))
        return {name: int(c) for name, c in zip(SELECTIONS, counts, strict=True) if c}


_COLUMNS = ("human", "outcome", "flipped", "one_order", "pair", "document", "selection", "share")
_DTYPES: dict[str, Any] = {"human": np.int8, "outcome": np.int8, "flipped": bool,
                           "one_order": bool, "pair": np.int64, "document": np.int64,
                           "selection": np.int8, "share": np.float64}


@dataclass(frozen=True)
class PairwiseEvidence:
    """Everything corrected win and tie shares need to know about the calibration dataset.

    The pairwise :class:`~judges.calibration.CalibrationEvidence`: the same attributes, of
    pairwise rows and counts. Its ``rule`` (``all_agree`` or ``majority``) also decides whether
    a one-order verdict counts.
    """

    labelled: PairwiseLabelledRows
    population: PairwiseRunCounts
    order_trend: OrderTrend | None = None
    fingerprint: str | None = None
    rule: str = "all_agree"

    @property
    def pairs(self) -> tuple[str, ...]:
        """Model-pair names the labelled rows' ``pair`` indexes."""
        return self.population.pairs

    def restrict(self, pair: str) -> PairwiseEvidence:
        """The evidence of one model pair's rows."""
        index = self.pairs.index(pair)
        rows = self.labelled.take(self.labelled.pair == index)
        rows = replace(rows, pair=np.zeros(rows.n, dtype=np.int64))
        return PairwiseEvidence(rows, self.population.restrict(pair), self.order_trend, None,
                                self.rule)

    def to_json(self) -> dict[str, Any]:
        """A compact JSON form (identical labelled rows grouped with a count)."""
        lab = self.labelled
        frame = pd.DataFrame({name: getattr(lab, name).astype(float if name == "share" else int)
                              for name in _COLUMNS})
        rows = grouped_rows(frame)
        return {"kind": "pairwise", **evidence_json(
            PAIRWISE_EVIDENCE_VERSION, self.rule, self.population.to_json(), _COLUMNS, rows,
            self.order_trend, self.fingerprint)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PairwiseEvidence:
        """Inverse of :meth:`to_json`.

        Raises:
            CalibrationInputError: not pairwise evidence, an unknown version or selection.
        """
        if data.get("kind") != "pairwise" or data.get("version") != PAIRWISE_EVIDENCE_VERSION:
            raise CalibrationInputError(
                f"pairwise evidence version {data.get('version')!r} is not supported (this "
                f"calibrate reads kind 'pairwise', version {PAIRWISE_EVIDENCE_VERSION})")
        names = list(data["selections"])
        index = [SELECTIONS.index(n) if n in SELECTIONS else -1 for n in names]
        if -1 in index:
            raise CalibrationInputError(f"unknown selections in evidence: {names}")
        table = data["labelled"]["rows"]
        counts = np.array([r[8] for r in table], dtype=np.int64)

        def column(i: int, name: str) -> Any:
            values = [r[i] if r[i] is not None else np.nan for r in table]
            if name == "selection":
                values = [index[int(v)] for v in values]
            return np.repeat(np.array(values, dtype=float), counts).astype(_DTYPES[name])

        rows = PairwiseLabelledRows(*(column(i, name) for i, name in enumerate(_COLUMNS)))
        trend = data.get("order_trend")
        return cls(
            labelled=rows, population=PairwiseRunCounts.from_json(data["population"]),
            order_trend=None if trend is None else OrderTrend(**trend),
            fingerprint=data.get("fingerprint"), rule=str(data.get("rule", "all_agree")),
        )  # fmt: skip
