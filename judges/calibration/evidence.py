"""What a pass-rate estimate rests on, as plain arrays and counts: the calibration evidence.

Every surface that shows a corrected pass rate (the report, the Calibration page, a judge card
scored in CI, a comparison of two versions) answers from the same two inputs:

* :class:`CalibrationEvidence` — the labelled rows of the calibration dataset (human verdict,
  the judge's outcome on the row, whether its verdict flipped, segment, document, how the row
  was chosen) and the judge's outcomes on *every* row of that dataset, as counts;
* :class:`RunCounts` — the judge's outcomes on the rows whose pass rate is wanted.

Both hold no text and no ids, so a judge card can carry the evidence (:meth:`to_json`) and
reproduce the report's number exactly on new verdicts (:func:`~judges.calibration.answer`).

Judge outcomes (:data:`OUTCOMES`): ``judge pass``, ``judge fail``, ``unsure`` (abstained,
flipped or tied under the aggregation rule), ``unscored`` (called, no usable verdict) and
``not run`` (never called on the row).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.stats import norm

from ._results import CalibrationInputError, _ToDict
from ._verdicts import Codes, Flags, Indices, PerRow
from .vocabulary import NOT_RUN, SELECTIONS, UNSCORED, UNSURE

__all__ = [
    "ESCALATED_EVIDENCE_VERSION",
    "EVIDENCE_VERSION",
    "NO_SEGMENT",
    "OUTCOMES",
    "OUTCOME_FAIL",
    "OUTCOME_NOT_RUN",
    "OUTCOME_PASS",
    "OUTCOME_UNSCORED",
    "OUTCOME_UNSURE",
    "CalibrationEvidence",
    "LabelledRows",
    "OrderTrend",
    "RunCounts",
    "judge_outcomes",
    "order_trend",
]

EVIDENCE_VERSION: Final = 1
"""Version of :meth:`CalibrationEvidence.to_json` (a card records it)."""
ESCALATED_EVIDENCE_VERSION: Final = 2
"""The version of evidence that records an escalation (the ``escalated`` column and counts);
evidence without one is still written as version 1, which older readers understand."""

OUTCOME_PASS, OUTCOME_FAIL, OUTCOME_UNSURE, OUTCOME_UNSCORED, OUTCOME_NOT_RUN = 0, 1, 2, 3, 4
OUTCOMES: Final[tuple[str, ...]] = ("judge pass", "judge fail", UNSURE, UNSCORED, NOT_RUN)
NO_SEGMENT: Final = "(none)"
"""The segment of rows that carry none."""

_WORDS = {"pass": OUTCOME_PASS, "fail": OUTCOME_FAIL, "unsure": OUTCOME_UNSURE,
          "unscored": OUTCOME_UNSCORED}


def judge_outcomes(verdicts: PerRow) -> npt.NDArray[np.int8]:
    """Outcome codes of per-row judge verdicts (``None``/``NaN``: the judge never ran).

    Args:
        verdicts: One entry per row: ``"pass"``, ``"fail"``, ``"unsure"``, ``"unscored"``, or
            missing where the judge has no call on the row.

    Returns:
        ``int8`` codes (index into :data:`OUTCOMES`).

    Raises:
        CalibrationInputError: a verdict that is none of these.

    Examples:
        >>> judge_outcomes(["pass", "fail", "unsure", "unscored", None]).tolist()
        [0, 1, 2, 3, 4]
    """
    values = pd.Series(np.asarray(verdicts, dtype=object), dtype=object)
    missing = values.isna().to_numpy()
    words = values.where(~missing, "").astype(str)
    out = np.full(len(values), OUTCOME_NOT_RUN, dtype=np.int8)
    unknown = ~missing
    for word, code in _WORDS.items():
        hit = words.eq(word).to_numpy()
        out[hit] = code
        unknown &= ~hit
    if unknown.any():
        bad = sorted({str(v) for v in words[unknown]})[:5]
        raise CalibrationInputError(f"unknown judge verdicts {bad} (pass, fail, unsure, unscored)")
    return out


# --------------------------------------------------------------------------- run counts


class _OutcomeCounts:
    """What both run counts share: rows per outcome (the first axis), then per flags and group."""

    counts: npt.NDArray[np.int64]

    def _check(self, shape: tuple[int, ...]) -> None:
        c = np.asarray(self.counts)
        if c.shape != shape:
            raise CalibrationInputError(f"counts must be {shape}, got {c.shape}")
        if c.size and c.min() < 0:
            raise CalibrationInputError("counts must be non-negative")

    @property
    def n_rows(self) -> int:
        """Every row of the run."""
        return int(self.counts.sum())

    def by_outcome(self) -> npt.NDArray[np.int64]:
        """Rows per outcome (in the order of the outcome codes)."""
        return np.asarray(self.counts.reshape(len(self.counts), -1).sum(axis=1), dtype=np.int64)


@dataclass(frozen=True)
class RunCounts(_OutcomeCounts):
    """The judge's outcomes on the rows of one run, per (outcome, flipped, segment).

    Attributes:
        counts: ``(5, 2, G)`` rows per outcome (:data:`OUTCOMES`), whether the row's verdict
            flipped across repeats/orders (0/1), and segment (index into ``segments``).
        segments: Segment names (``(none)`` for rows without one).
    """

    counts: npt.NDArray[np.int64]
    segments: tuple[str, ...]

    def __post_init__(self) -> None:
        """Validate the shape."""
        self._check((len(OUTCOMES), 2, len(self.segments)))

    @classmethod
    def from_rows(
        cls, outcome: npt.ArrayLike,
        *, flipped: npt.ArrayLike | None = None, segment: PerRow | None = None,
    ) -> RunCounts:
        """Count per-row outcomes (from :func:`judge_outcomes`), flip flags and segments."""
        o = np.asarray(outcome, dtype=np.int64)
        f = np.zeros(o.shape, dtype=np.int64) if flipped is None else (
            np.asarray(pd.Series(flipped).fillna(False).astype(bool), dtype=np.int64))
        names, codes = _segment_codes(segment, o.shape[0])
        g = len(names)
        flat = np.bincount((o * 2 + f) * g + codes, minlength=len(OUTCOMES) * 2 * g)
        return cls(flat.reshape(len(OUTCOMES), 2, g).astype(np.int64), names)

    @property
    def has_segments(self) -> bool:
        """Whether any row carries a segment."""
        return any(s != NO_SEGMENT for s, n in zip(self.segments, self.counts.sum(axis=(0, 1)),
                                                   strict=True) if n)  # fmt: skip

    def aligned(self, segments: Sequence[str]) -> RunCounts:
        """The same counts over ``segments`` (a superset of this run's segments, any order)."""
        index = {name: i for i, name in enumerate(segments)}
        missing = [s for s, n in zip(self.segments, self.counts.sum(axis=(0, 1)), strict=True)
                   if n and s not in index]  # fmt: skip
        if missing:
            raise CalibrationInputError(f"segments {missing} are not in {list(segments)}")
        out = np.zeros((len(OUTCOMES), 2, len(segments)), dtype=np.int64)
        for i, name in enumerate(self.segments):
            if name in index:
                out[:, :, index[name]] += self.counts[:, :, i]
        return RunCounts(out, tuple(segments))

    def restrict(self, segment: str) -> RunCounts:
        """The rows of one segment."""
        keep = np.array([s == segment for s in self.segments], dtype=bool)
        return RunCounts(self.counts[:, :, keep], tuple(s for s in self.segments if s == segment))

    def vocabulary(self) -> dict[str, int]:
        """``rows``, ``judged``, ``not_judged``, ``unscored``, ``unsure``, ``not_run``."""
        o = self.by_outcome()
        return {
            "rows": int(o.sum()),
            "judged": int(o[OUTCOME_PASS] + o[OUTCOME_FAIL]),
            "not_judged": int(o[OUTCOME_UNSURE] + o[OUTCOME_UNSCORED] + o[OUTCOME_NOT_RUN]),
            "unscored": int(o[OUTCOME_UNSCORED]),
            "unsure": int(o[OUTCOME_UNSURE]),
            "not_run": int(o[OUTCOME_NOT_RUN]),
        }

    def rows(self) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64], npt.NDArray[Any]]:
        """One entry per row: outcome code, flip flag, segment name (for row-level tests)."""
        o, f, g = np.nonzero(self.counts)
        n = self.counts[o, f, g]
        names = np.asarray(self.segments, dtype=object)
        return (np.repeat(o, n).astype(np.int8), np.repeat(f, n).astype(np.int64),
                np.repeat(names[g], n))  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """``{segments, cells: [[outcome, flipped, segment, rows], ...]}`` (non-zero cells)."""
        o, f, g = np.nonzero(self.counts)
        return {
            "segments": list(self.segments),
            "cells": [[int(a), int(b), int(c), int(self.counts[a, b, c])]
                      for a, b, c in zip(o, f, g, strict=True)],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunCounts:
        """Inverse of :meth:`to_json`."""
        segments = tuple(str(s) for s in data["segments"])
        out = np.zeros((len(OUTCOMES), 2, len(segments)), dtype=np.int64)
        for a, b, c, n in data["cells"]:
            out[int(a), int(b), int(c)] = int(n)
        return cls(out, segments)


def _segment_codes(
    segment: PerRow | None, n: int
) -> tuple[tuple[str, ...], npt.NDArray[np.int64]]:
    return group_codes(segment, n, missing=NO_SEGMENT, what="segments")


def group_codes(
    values: PerRow | None, n: int, *, missing: str, what: str
) -> tuple[tuple[str, ...], npt.NDArray[np.int64]]:
    """Sorted group names and each row's code (a missing value is the group ``missing``).

    Args:
        values: One group per row (segments, model pairs), or ``None``: every row in ``missing``.
        n: The number of rows.
        missing: The name of the group of rows without a value.
        what: The groups' name in the error for a wrong length.
    """
    if values is None:
        return (missing,), np.zeros(n, dtype=np.int64)
    series = pd.Series(np.asarray(values, dtype=object), dtype=object)
    if len(series) != n:
        raise CalibrationInputError(f"{what} must have one entry per row ({n})")
    text = series.where(series.notna(), missing).astype(str)
    names, codes = np.unique(text.to_numpy(dtype=str), return_inverse=True)
    if not len(names):
        return (missing,), np.zeros(0, dtype=np.int64)
    return tuple(str(x) for x in names), codes.astype(np.int64)


def grouped_rows(frame: pd.DataFrame) -> list[list[Any]]:
    """Identical labelled rows grouped with a count, for an evidence's JSON form.

    Every column is an integer code except ``share`` (the active order's selection share,
    ``NaN`` when not drawn by it, written as ``null``); each row ends with its count. Rows come
    sorted by the columns, in their order, so the JSON of equal evidence is equal.
    """
    columns = list(frame.columns)
    at = columns.index("share")
    grouped = (frame.fillna({"share": -1.0})
               .groupby(columns, sort=True).size().reset_index(name="rows"))
    rows: list[list[Any]] = []
    for values in grouped.to_numpy(dtype=float).tolist():
        share = values[at]
        rows.append([*(int(v) for v in values[:at]), None if share < 0 else float(share),
                     *(int(v) for v in values[at + 1:])])
    return rows


# --------------------------------------------------------------------------- file order


@dataclass(frozen=True)
class OrderTrend(_ToDict):
    """Whether the judge's verdicts trend along the file's row order (a sorted file shows it).

    Attributes:
        p_value: Two-sided p-value of the trend of the judge's pass share along the file (the
            correlation of row position with the verdict, Cochran-Armitage), Bonferroni-combined
            with the same test for the not-judged share.
        statistic: The larger absolute z statistic.
        n: Rows tested.
    """

    p_value: float
    statistic: float
    n: int


def order_trend(outcome_in_file_order: npt.ArrayLike, *, decided: int = 2) -> OrderTrend | None:
    """Test whether the judge's outcomes trend along the file (a file sorted by outcome).

    Labels drawn in file order are the first rows of the file. They are a random sample of
    their judge-verdict stratum only if the file is in no order related to the rows' truth;
    a file sorted by something the judge sees (score, date of a fix, category) shows it as a
    trend of the judge's verdicts along the file.

    Args:
        outcome_in_file_order: Outcome codes (:func:`judge_outcomes`) of every row, in file order.
        decided: How many leading codes are decided verdicts (2: pass, fail; a pairwise judge's
            outcomes have 3: a, b, tie). The share of each decided verdict among the decided
            rows (one test for two verdicts: they are complements) and the not-judged share are
            tested; code 4 is "not run" and left out.

    Returns:
        An :class:`OrderTrend`, or ``None`` with fewer than 10 judged rows.

    Examples:
        >>> order_trend([0] * 50 + [1] * 50).p_value < 1e-6
        True
    """
    o = np.asarray(outcome_in_file_order, dtype=np.int8)
    ran = o != OUTCOME_NOT_RUN
    position = np.flatnonzero(ran).astype(float)
    o = o[ran]
    tests = []
    judged = o < decided
    shares = [(judged, o == c) for c in range(decided if decided > 2 else 1)]
    for mask, y in (*shares, (np.ones(o.shape, dtype=bool), ~judged)):
        x, v = position[mask], y[mask].astype(float)
        if x.size < 10 or v.std() == 0 or x.std() == 0:
            continue
        r = float(np.corrcoef(x, v)[0, 1])
        tests.append(r * np.sqrt(x.size - 1))
    if not tests:
        return None
    z = max(abs(t) for t in tests)
    p = min(1.0, len(tests) * 2.0 * float(norm.sf(z)))
    return OrderTrend(p_value=p, statistic=float(z), n=int(o.size))


# --------------------------------------------------------------------------- labelled rows


@dataclass(frozen=True)
class LabelledRows:
    """The labelled rows of the calibration dataset, one entry per row (no text, no ids).

    Attributes:
        human: Consensus human verdict code (1 pass, 0 fail, -1 unsure).
        outcome: The judge's outcome on the row (:data:`OUTCOMES`).
        flipped: Whether its verdict flipped across repeats/orders.
        segment: Segment index (into the evidence's ``segments``).
        document: Document code (rows of one source document share it); -1 when the rows
            carry no document that two of them share.
        selection: How the row was chosen (index into
            :data:`~judges.calibration.SELECTIONS`).
        share: The row's share of the active order's selection weight (``NaN`` otherwise).
        escalated: Whether the row is one the evidence's escalation holds (an acceptance rule
            abstained on it), whatever order drew it; ``None`` without an escalation.
    """

    human: Codes
    outcome: Codes
    flipped: Flags
    segment: Indices
    document: Indices
    selection: Codes
    share: npt.NDArray[np.float64]
    escalated: Flags | None = None

    def __post_init__(self) -> None:
        """Check that every array has one entry per row."""
        n = self.human.shape[0]
        for name in ("outcome", "flipped", "segment", "document", "selection", "share"):
            if getattr(self, name).shape != (n,):
                raise CalibrationInputError(f"labelled {name} must have {n} entries")
        if self.escalated is not None and self.escalated.shape != (n,):
            raise CalibrationInputError(f"labelled escalated must have {n} entries")

    @property
    def n(self) -> int:
        """Labelled rows."""
        return int(self.human.shape[0])

    def take(self, mask: npt.NDArray[np.bool_]) -> LabelledRows:
        """The rows where ``mask`` holds."""
        return LabelledRows(self.human[mask], self.outcome[mask], self.flipped[mask],
                            self.segment[mask], self.document[mask], self.selection[mask],
                            self.share[mask],
                            None if self.escalated is None else self.escalated[mask])  # fmt: skip

    def selections(self) -> dict[str, int]:
        """Labelled rows per recorded selection."""
        counts = np.bincount(self.selection.astype(np.int64), minlength=len(SELECTIONS))
        return {name: int(c) for name, c in zip(SELECTIONS, counts, strict=True) if c}


_COLUMNS = ("human", "outcome", "flipped", "segment", "document", "selection", "share")


def evidence_json(version: int, rule: str, population: dict[str, Any], columns: Sequence[str],
                  rows: list[list[Any]], trend: OrderTrend | None,
                  fingerprint: str | None) -> dict[str, Any]:
    """The JSON fields the pass/fail and the pairwise evidence share, in their order."""
    return {"version": version, "rule": rule, "population": population,
            "selections": list(SELECTIONS),
            "labelled": {"columns": [*columns, "rows"], "rows": rows},
            "order_trend": None if trend is None else trend.to_dict(),
            "fingerprint": fingerprint}


@dataclass(frozen=True)
class CalibrationEvidence:
    """Everything a corrected pass rate needs to know about the calibration dataset.

    Attributes:
        labelled: The labelled rows.
        population: The judge's outcomes on every row of the calibration dataset.
        order_trend: The trend of the judge's verdicts along the file, for labels drawn in
            file order (``None`` when not measured).
        fingerprint: A hash of the calibration run's per-row verdicts: a verdicts file with the
            same fingerprint *is* that run (then the same-run estimate applies).
        rule: The aggregation rule the outcomes were computed under.
        escalated: The judge's outcomes on the rows of the escalation the labels drawn from
            the escalated queue came from (a subset of ``population``); ``None`` without one.
            With it, the escalated rows are strata of their own.
    """

    labelled: LabelledRows
    population: RunCounts
    order_trend: OrderTrend | None = None
    fingerprint: str | None = None
    rule: str = "all_agree"
    escalated: RunCounts | None = None

    def __post_init__(self) -> None:
        """An escalation is recorded for the population and the labelled rows alike."""
        if (self.escalated is None) != (self.labelled.escalated is None):
            raise CalibrationInputError(
                "an escalation needs both the escalated rows' counts and the labelled rows' "
                "escalated flags")
        if self.escalated is not None:
            esc = self.escalated.aligned(self.population.segments).counts
            if np.any(esc > self.population.counts):
                raise CalibrationInputError("escalated rows must be rows of the population")

    @property
    def segments(self) -> tuple[str, ...]:
        """Segment names the labelled rows' ``segment`` indexes."""
        return self.population.segments

    def restrict(self, segment: str) -> CalibrationEvidence:
        """The evidence of one segment's rows."""
        index = self.segments.index(segment)
        rows = self.labelled.take(self.labelled.segment == index)
        rows = replace(rows, segment=np.zeros(rows.n, dtype=np.int64))
        escalated = None if self.escalated is None else (
            self.escalated.aligned(self.segments).restrict(segment))
        return CalibrationEvidence(rows, self.population.restrict(segment), self.order_trend,
                                   None, self.rule, escalated)  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """A compact JSON form (identical labelled rows grouped with a count)."""
        lab = self.labelled
        columns = list(_COLUMNS) + (["escalated"] if lab.escalated is not None else [])
        frame = pd.DataFrame({
            "human": lab.human.astype(int), "outcome": lab.outcome.astype(int),
            "flipped": lab.flipped.astype(int), "segment": lab.segment.astype(int),
            "document": lab.document.astype(int), "selection": lab.selection.astype(int),
            "share": lab.share,
            **({} if lab.escalated is None else {"escalated": lab.escalated.astype(int)}),
        })
        rows = grouped_rows(frame[columns])
        out = evidence_json(EVIDENCE_VERSION, self.rule, self.population.to_json(), columns, rows,
                            self.order_trend, self.fingerprint)
        if self.escalated is not None:
            out.update(version=ESCALATED_EVIDENCE_VERSION, escalated=self.escalated.to_json())
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CalibrationEvidence:
        """Inverse of :meth:`to_json`.

        Raises:
            CalibrationInputError: an unknown version or a malformed table.
        """
        version = data.get("version")
        if version not in (EVIDENCE_VERSION, ESCALATED_EVIDENCE_VERSION):
            raise CalibrationInputError(
                f"evidence version {version!r} is not supported (this calibrate reads versions "
                f"{EVIDENCE_VERSION} and {ESCALATED_EVIDENCE_VERSION})"
            )
        names = list(data["selections"])
        index = [SELECTIONS.index(n) if n in SELECTIONS else -1 for n in names]
        if -1 in index:
            raise CalibrationInputError(f"unknown selections in evidence: {names}")
        columns = list(data["labelled"].get("columns") or [*_COLUMNS, "rows"])
        at = {name: i for i, name in enumerate(columns)}
        table = data["labelled"]["rows"]
        counts = np.array([r[at["rows"]] for r in table], dtype=np.int64)

        def column(name: str, dtype: Any) -> Any:
            i = at[name]
            values = np.array([r[i] if r[i] is not None else np.nan for r in table], dtype=dtype)
            return np.repeat(values, counts)

        selection = np.array([index[int(r[at["selection"]])] for r in table], dtype=np.int8)
        escalated = data.get("escalated")
        rows = LabelledRows(
            human=column("human", np.int8), outcome=column("outcome", np.int8),
            flipped=column("flipped", np.int8).astype(bool),
            segment=column("segment", np.int64), document=column("document", np.int64),
            selection=np.repeat(selection, counts), share=column("share", np.float64),
            escalated=None if escalated is None else column("escalated", np.int8).astype(bool),
        )  # fmt: skip
        trend = data.get("order_trend")
        return cls(
            labelled=rows, population=RunCounts.from_json(data["population"]),
            order_trend=None if trend is None else OrderTrend(**trend),
            fingerprint=data.get("fingerprint"), rule=str(data.get("rule", "all_agree")),
            escalated=None if escalated is None else RunCounts.from_json(escalated),
        )  # fmt: skip
