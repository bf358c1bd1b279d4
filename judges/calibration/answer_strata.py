"""The judge-verdict strata a pass rate is estimated within, for the labels' selections.

Judge pass, judge fail and not judged (with, in the same run, the rows the judge never ran on:
the whole run is the estimand); labels drawn flips first split the flipped rows off, labels
drawn from the escalated queue the escalated rows. :func:`~judges.calibration.answer_pass_rate`,
a selective rule (:mod:`judges.calibration.selective`) and the cascade use the same strata.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .evidence import (
    OUTCOME_FAIL,
    OUTCOME_NOT_RUN,
    OUTCOME_PASS,
    CalibrationEvidence,
)
from .strata import (
    OUTCOME_NOT_JUDGED,
    StratumCounts,
    counts_of_strata,
)
from .vocabulary import STRATA

__all__ = ["EvidenceStrata", "evidence_strata"]


@dataclass(frozen=True)
class EvidenceStrata:
    """The strata of one estimate: counts, each labelled row's stratum, and the rule behind it.

    Attributes:
        counts: Population and labelled counts per stratum.
        of_labelled: Each labelled row's stratum (-1: left out, a row the judge never ran on
            in a separate calibration).
        table: ``(5, 2, 2)`` stratum of a row by (outcome, flipped, escalated); -1 left out.
    """

    counts: StratumCounts
    of_labelled: npt.NDArray[np.int64]
    table: npt.NDArray[np.int64]

    def assign(self, outcome: npt.ArrayLike, flipped: npt.ArrayLike | None = None,
               escalated: npt.ArrayLike | None = None) -> npt.NDArray[np.int64]:
        """The stratum of rows given their outcome codes, flip and escalation flags."""
        o = np.asarray(outcome, dtype=np.int64)
        f = np.zeros(o.shape, dtype=np.int64) if flipped is None else np.asarray(
            flipped, dtype=bool).astype(np.int64)
        e = np.zeros(o.shape, dtype=np.int64) if escalated is None else np.asarray(
            escalated, dtype=bool).astype(np.int64)
        return np.asarray(self.table[o, f, e], dtype=np.int64)


def evidence_strata(evidence: CalibrationEvidence, *, same_run: bool) -> EvidenceStrata:
    """The strata :func:`answer_pass_rate` estimates within, for the evidence's selections.

    Judge pass, judge fail and not judged; labels drawn flips first split the flipped rows off,
    labels drawn from the escalated queue split the escalated rows off. A selective rule
    (:mod:`judges.calibration.selective`) and the cascade use the same strata.
    """
    present = {k for k, v in evidence.labelled.selections().items() if v}
    return _strata(evidence, same_run=same_run, split_flips="flips_first" in present,
                   split_escalated="escalated" in present and evidence.escalated is not None)


def _strata(evidence: CalibrationEvidence, *, same_run: bool, split_flips: bool,
            split_escalated: bool = False) -> EvidenceStrata:
    """Judge-verdict strata of the calibration rows.

    Same run: judge pass, judge fail and not judged (rows the judge never ran on included: the
    whole run is the estimand). Separate calibration: the rows the judge ran on. With
    ``split_flips`` the judge-pass and judge-fail rows whose verdict flipped are strata of their
    own (labels drawn flips first over-sample them); with ``split_escalated`` so are the rows
    of the evidence's escalation (labels drawn from the escalated queue are random only among
    them).
    """
    pop = evidence.population.counts.sum(axis=2).astype(np.int64)  # (outcome, flipped)
    esc = np.zeros_like(pop)
    if split_escalated and evidence.escalated is not None:
        esc = evidence.escalated.aligned(evidence.segments).counts.sum(axis=2).astype(np.int64)
    cells = np.stack([pop - esc, esc], axis=2)  # (outcome, flipped, escalated)
    table = np.full((5, 2, 2), -1, dtype=np.int64)
    names: list[str] = []
    outcomes: list[int] = []
    judged = ((OUTCOME_PASS, STRATA[0], OUTCOME_PASS), (OUTCOME_FAIL, STRATA[1], 1))
    for outcome, name, code in judged:
        flips: tuple[int | None, ...] = (0, 1) if split_flips and pop[outcome, 1] > 0 else (None,)
        for f in flips:
            fs = [0, 1] if f is None else [f]
            label = name if f == 0 or f is None else f"{name}, flipped"
            escs = _escalation_split(cells[outcome][fs], split_escalated)
            for e in escs:
                if e is None:
                    table[outcome, fs, :] = len(names)
                else:
                    table[outcome, fs, e] = len(names)
                names.append(label if not e else f"{label}, escalated")
                outcomes.append(code)
    not_judged = [2, 3] + ([OUTCOME_NOT_RUN] if same_run else [])
    for e in _escalation_split(cells[not_judged].reshape(-1, 2), split_escalated):
        if e is None:
            table[not_judged, :, :] = len(names)
        else:
            table[not_judged, :, e] = len(names)
        names.append(STRATA[2] if not e else f"{STRATA[2]}, escalated")
        outcomes.append(OUTCOME_NOT_JUDGED)
    population = [int(cells[table == s].sum()) for s in range(len(names))]
    lab = evidence.labelled
    stratum = table[lab.outcome.astype(np.int64), lab.flipped.astype(np.int64),
                    np.zeros(lab.n, dtype=np.int64) if lab.escalated is None or not
                    split_escalated else lab.escalated.astype(np.int64)]
    kept = stratum >= 0
    counts = counts_of_strata(lab.human[kept], stratum[kept], population,
                              outcomes=tuple(outcomes), names=tuple(names))  # fmt: skip
    return EvidenceStrata(counts, stratum, table)


def _escalation_split(cells: npt.NDArray[np.int64], split: bool) -> tuple[int | None, ...]:
    """Escalation parts of a stratum: both when split and each holds rows, else the whole."""
    by_part = cells.reshape(-1, 2).sum(axis=0)
    if not split or by_part[1] == 0:
        return (None,)
    return (0, 1) if by_part[0] > 0 else (1,)
