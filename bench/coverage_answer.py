"""The ``auto`` column of every coverage block: the real estimation path, fed simulated rows.

Each block simulates rows (truth, judge verdict, flips, segments, documents) and how labels were
drawn; :func:`evidence` turns them into the :class:`~judges.calibration.CalibrationEvidence` the
report builds from a database, and :func:`auto` asks
:func:`~judges.calibration.answer_pass_rate` for its headline, so the design resolution, the
estimator choice and every headline rule are what is measured, never a column assigned by hand.

Judge codes here: 1 pass, 0 fail, -1 not judged (unsure), -2 never run.
"""

from __future__ import annotations

import numpy as np

from judges.calibration import (
    SELECTIONS,
    CalibrationEvidence,
    LabelledRows,
    PassRateAnswer,
    RunCounts,
    TargetRun,
    answer_pass_rate,
    order_trend,
)

Interval = tuple[float | None, float | None]


def outcomes(judge: np.ndarray) -> np.ndarray:
    """Evidence outcome codes of simulated judge codes (1 pass, 0 fail, -1 unsure, -2 not run)."""
    j = np.asarray(judge)
    return np.select([j == 1, j == 0, j == -1], [0, 1, 2], default=4).astype(np.int8)


def evidence(
    human: np.ndarray,
    labelled: np.ndarray,
    judge: np.ndarray,
    *,
    selection: str | np.ndarray = "random",
    flipped: np.ndarray | None = None,
    segments: np.ndarray | None = None,
    documents: np.ndarray | None = None,
    share: np.ndarray | None = None,
    file_order: bool = False,
    human_unsure: np.ndarray | None = None,
) -> CalibrationEvidence:
    """Evidence of a simulated calibration run.

    Args:
        human: Truth of every row of the run (1 pass, 0 fail).
        labelled: Indices of the labelled rows.
        judge: Judge code of every row.
        selection: How each labelled row was chosen (one name, or one per labelled row).
        flipped: Whether each row's verdict flipped (every row).
        segments: Segment name of every row.
        documents: Document code of every row.
        share: Active-order selection share of each labelled row.
        file_order: Measure the judge's trend along the rows' order (labels in file order).
        human_unsure: Per labelled row, whether the annotator was unsure (its label is lost).
    """
    n = labelled.size
    out = outcomes(judge)
    flip = np.zeros(judge.size, dtype=bool) if flipped is None else flipped.astype(bool)
    population = RunCounts.from_rows(out, flipped=flip, segment=segments)
    index = {name: i for i, name in enumerate(population.segments)}
    seg = (np.zeros(n, dtype=np.int64) if segments is None
           else np.array([index[str(s)] for s in segments[labelled]], dtype=np.int64))
    h = human[labelled].astype(np.int8)
    if human_unsure is not None:
        h = np.where(human_unsure, -1, h).astype(np.int8)
    names = np.full(n, selection) if isinstance(selection, str) else selection
    rows = LabelledRows(
        human=h, outcome=out[labelled], flipped=flip[labelled], segment=seg,
        document=(np.full(n, -1, dtype=np.int64) if documents is None
                  else documents[labelled].astype(np.int64)),
        selection=np.array([SELECTIONS.index(s) for s in names], dtype=np.int8),
        share=np.full(n, np.nan) if share is None else share.astype(float),
    )
    trend = order_trend(out) if file_order else None
    return CalibrationEvidence(rows, population, order_trend=trend)


def answer(
    ev: CalibrationEvidence,
    target_judge: np.ndarray | None = None,
    *,
    target_segments: np.ndarray | None = None,
    target_flipped: np.ndarray | None = None,
    segments: bool = True,
) -> PassRateAnswer:
    """The real answer: ``target_judge`` ``None`` means the target is the calibration run."""
    if target_judge is None:
        target = TargetRun(ev.population, same_run=True)
    else:
        target = TargetRun(RunCounts.from_rows(outcomes(target_judge), flipped=target_flipped,
                                               segment=target_segments))
    return answer_pass_rate(ev, target, segments=segments)


def claim(a: PassRateAnswer) -> Interval:
    """The headline interval when it makes a claim, else ``(None, None)``."""
    h = a.headline
    if h.refused or h.uninformative or h.low is None or h.high is None:
        return None, None
    return h.low, h.high


def auto(ev: CalibrationEvidence, target_judge: np.ndarray | None = None, **kw: object) -> Interval:
    """:func:`claim` of :func:`answer`."""
    return claim(answer(ev, target_judge, **kw))  # type: ignore[arg-type]
