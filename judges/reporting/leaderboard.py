"""Several judges on the same labelled rows, ranked by kappa with McNemar's test vs the best."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from judges.calibration import (
    Estimate,
    LeaderboardRow,
    interval_json,
    leaderboard,
)
from judges.reporting.inputs import (
    JudgeRef,
    find_judge,
    judges_on,
    load_human_labels,
    load_judge_items,
)
from judges.workspace import Workspace
from labels.errors import CalibrateError, NotFoundError
from labels.models import DEFAULT_CRITERION

# -- several judges -------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgeConsistency:
    """How one judge's calls on the labelled rows agree with each other.

    Attributes:
        rule: The aggregation rule that combined them.
        n_judged: Labelled rows with at least one call of this judge.
        n_unsure: Of those, rows the rule left unsure (e.g. all-agree on calls that differ).
        repeat_flip_rate: Share of rows whose repeats disagree (``None`` without repeats).
        swap_flip_rate: Share of rows whose two source orders disagree (``None`` without swap).
    """

    rule: str
    n_judged: int
    n_unsure: int
    repeat_flip_rate: Estimate | None
    swap_flip_rate: Estimate | None

    def note(self, n_usable: int) -> str:
        """Why the judge's kappa rests on few rows, in words (empty when it does not).

        A judge whose calls disagree on most rows is left unsure there by its rule, so its
        kappa is computed on the few rows left: that, not the kappa, is why it ranks low.
        """
        if self.n_judged == 0:
            return "no verdict on a labelled row"
        if not self.n_unsure or self.n_unsure * 2 < self.n_judged:
            return ""
        flips = [
            f"across {across} on {rate.estimate:.0%} of rows ({rate.format()}, n={rate.n})"
            for rate, across in ((self.repeat_flip_rate, "repeats"),
                                 (self.swap_flip_rate, "source orders"))
            if rate is not None and rate.estimate
        ]
        why = ("its verdict flips " + " and ".join(flips)) if flips else "its calls disagree"
        return (f"inconsistent: {why}, so the {self.rule} rule leaves {self.n_unsure} of "
                f"{self.n_judged} judged rows unsure and its rates rest on {n_usable} rows")


@dataclass(frozen=True)
class Leaderboard:
    """Several judges on the same labelled rows, best kappa first.

    Attributes:
        dataset: Dataset with the labels.
        criterion: Label criterion.
        judges: The judges, in leaderboard order.
        rows: :class:`~judges.calibration.LeaderboardRow` per judge.
        n_items: Labelled items compared (a judge without a verdict on one counts it unscored).
        consistency: Per judge (same order), how its calls agree; its :meth:`note` says why a
            judge's rates rest on few rows.
    """

    dataset: str
    criterion: str
    judges: tuple[JudgeRef, ...]
    rows: tuple[LeaderboardRow, ...]
    n_items: int
    consistency: tuple[JudgeConsistency, ...] = ()

    def _consistency(self) -> tuple[JudgeConsistency | None, ...]:
        return self.consistency or (None,) * len(self.rows)

    def frame(self) -> pd.DataFrame:
        """One display row per judge."""
        records = []
        for ref, row, c in zip(self.judges, self.rows, self._consistency(), strict=True):
            p = row.mcnemar_p_vs_best
            # Text cells in the one vocabulary; "—" where there is no number (rank 1 has no
            # McNemar p against itself), never a bare None/NaN on a page.
            records.append({
                "rank": row.rank,
                "judge": row.judge,
                "note": "" if c is None else c.note(row.n),
                "config_id": ref.config_id,
                "rows used": f"{row.n} of {self.n_items}",
                "not judged": row.n_judge_unscored,
                # Words where an interval collapsed ("all 14 agree"), never [1.000, 1.000].
                "kappa": row.kappa.describe(agreement=True),
                "sensitivity": row.sensitivity.describe(),
                "fpr": row.fpr.describe(),
                "accuracy": row.accuracy.describe(),
                "mcnemar_p_vs_best": "—" if p is None else f"{float(p):.4g}",
                "repeat_flip_rate": "—" if c is None or c.repeat_flip_rate is None
                else c.repeat_flip_rate.describe(),
                "swap_flip_rate": "—" if c is None or c.swap_flip_rate is None
                else c.swap_flip_rate.describe(),
            })
        return pd.DataFrame(records)

    def to_json(self) -> list[dict[str, Any]]:
        """JSON-safe rows."""
        return [
            {
                "rank": row.rank,
                "judge": ref.to_json(),
                "note": "" if c is None else c.note(row.n),
                "n": row.n,
                "not_judged": row.n_judge_unscored,
                "unscored": row.n_judge_unscored,
                "kappa": interval_json(row.kappa),
                "sensitivity": interval_json(row.sensitivity),
                "specificity": interval_json(row.specificity),
                "fpr": interval_json(row.fpr),
                "accuracy": interval_json(row.accuracy),
                "mcnemar_p_vs_best": row.mcnemar_p_vs_best,
                "unsure": None if c is None else c.n_unsure,
                "repeat_flip_rate": interval_json(None if c is None else c.repeat_flip_rate),
                "swap_flip_rate": interval_json(None if c is None else c.swap_flip_rate),
            }
            for ref, row, c in zip(self.judges, self.rows, self._consistency(), strict=True)
        ]


def judge_leaderboard(
    workspace: Workspace,
    dataset: str,
    judges: Sequence[str | JudgeRef] | None = None,
    *,
    criterion: str | None = None,
    rule: str | None = None,
    confidence: float = 0.95,
) -> Leaderboard:
    """Rank judges on the labelled rows of ``dataset`` by kappa, McNemar p vs the best.

    Args:
        workspace: The open database (labels and judge runs).
        dataset: Dataset with labels and the judges' verdicts.
        judges: Judge names / config ids (default: every judge run on ``dataset``).
        criterion: Label criterion (default: the first judge's criterion).
        rule: Aggregation rule of repeated / swapped calls (default: each judge's own).
        confidence: Level of every interval.

    Returns:
        A :class:`Leaderboard`.
    """
    refs = [
        j if isinstance(j, JudgeRef) else find_judge(workspace, j, dataset=dataset)
        for j in (judges if judges is not None else judges_on(workspace, dataset))
    ]
    if not refs:
        raise NotFoundError(f"no judge has verdicts on dataset {dataset!r}")
    names = [r.name if [x.name for x in refs].count(r.name) == 1 else f"{r.name} r{r.revision}"
             for r in refs]
    crit = criterion or refs[0].criterion or DEFAULT_CRITERION
    human = load_human_labels(workspace.labels, dataset, crit)
    ids = human.items["item_id"]
    columns = {}
    consistency: dict[str, JudgeConsistency] = {}
    for name, ref in zip(names, refs, strict=True):
        judged = load_judge_items(workspace, dataset, ref, rule=rule, confidence=confidence,
                                  texts_for=())  # verdicts and flips only
        verdicts = ids.map(judged.verdict_map())
        columns[name] = verdicts.fillna("unscored").to_numpy(dtype=object)
        c = judged.consistency
        consistency[name] = JudgeConsistency(
            rule=judged.rule, n_judged=int(verdicts.notna().sum()),
            n_unsure=int(verdicts.eq("unsure").sum()),
            repeat_flip_rate=None if c is None or not c.flip_rate_repeat.n
            else c.flip_rate_repeat,
            swap_flip_rate=None if c is None or not c.flip_rate_order.n else c.flip_rate_order,
        )
    rows = leaderboard(human.items["verdict"].to_numpy(dtype=object), columns,
                       confidence=confidence)
    by_name = dict(zip(names, refs, strict=True))
    return Leaderboard(dataset, crit, tuple(by_name[r.judge] for r in rows), rows, len(ids),
                       tuple(consistency[r.judge] for r in rows))


def default_judge(workspace: Workspace, dataset: str) -> JudgeRef | None:
    """The judge a calibration view should open on: the most usable labelled rows.

    Usable rows have a human pass/fail and the judge's pass/fail on ``dataset``. Ties go to the
    newest judge (:func:`judges_on` lists the newest first). A scripted stand-in
    (:attr:`JudgeRef.stand_in`) comes only after every real judge, whatever its rows.
    ``None`` when no judge has verdicts on ``dataset``.
    """
    refs = judges_on(workspace, dataset)
    if not refs:
        return None
    usable: dict[str, int] = {}
    for criterion in dict.fromkeys(r.criterion or DEFAULT_CRITERION for r in refs):
        group = [r for r in refs if (r.criterion or DEFAULT_CRITERION) == criterion]
        try:
            board = judge_leaderboard(workspace, dataset, group, criterion=criterion)
        except CalibrateError:
            continue  # e.g. no labels for this criterion: these judges have no usable rows
        usable.update({ref.config_id: row.n for ref, row in zip(board.judges, board.rows,
                                                                   strict=True)})
    # max keeps the first of ties
    return max(refs, key=lambda r: (not r.stand_in, usable.get(r.config_id, 0)))


def default_target(workspace: Workspace, dataset: str, judge: JudgeRef) -> str | None:
    """Another pointwise dataset the same judge config has verdicts on, or ``None``.

    Its pass rate is the one worth correcting: the labelled dataset is only the calibration set.
    """
    for other in workspace.labels.datasets():
        if other.kind != "pointwise" or other.name == dataset:
            continue
        if any(ref.config_id == judge.config_id for ref in judges_on(workspace, other.name)):
            return other.name
    return None
