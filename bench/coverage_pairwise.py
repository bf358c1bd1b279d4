"""Coverage block for the corrected pairwise shares (``bench/coverage.py --block pairwise``).

A pairwise judge says a, b or tie; its errors are a 3 x 3 misclassification matrix ``M`` (rows:
the human verdict, columns: the judge's), set close to GPT-4's on the MT-Bench human votes.
Every cell simulates ``reps`` seeded runs at the row level and draws the labels the way one of
the Label page's queues does; the ``auto`` column is the headline of the real path,
:func:`judges.calibration.answer_win_rate`, on :class:`~judges.calibration.PairwiseEvidence`
built from the simulated rows with the selection the queue records (so the design resolution
and every headline rule are what is measured). ``raw`` is the previous release's estimator, the
raw 3 x 3 table of the labelled rows through
:func:`judges.calibration.corrected_win_rate_from_counts`, shown for comparison.

Cells:

* **same run** (1,000 rows; the truth is the run's human a / b / tie shares): ``random`` queue,
  ``stratified`` queue (labels drawn round-robin over the judge's verdicts, the Label page's
  by-verdict order), ``active`` queue (Poisson sampling with probabilities tied to the judge's
  flips: 30 % hard rows where it errs more and flips 20-50 % of the time), and ``one-order``
  (stratified queue; 10 % of the rows judged in one order only, with a position bias toward
  ``a`` on them, under ``all_agree``);
* **separate calibration** (a calibration run of 1,000 rows with shares 0.25 / 0.45 / 0.30,
  labelled by the random or the stratified queue; the target is another run of ``n`` rows with
  other shares; the truth is the target rows' human shares).

For each share: ``cov`` (coverage over the intervals that make a claim), mean ``width`` and the
share of data sets with no claim (refused). Bar: ``auto`` covers >= 0.94 for every share of
every cell where it claims (MC SE of a 0.95 coverage printed).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from coverage_stat import closed, run_cells

from judges.calibration import (
    SELECTIONS,
    PairwiseEvidence,
    PairwiseLabelledRows,
    PairwiseRunCounts,
    PairwiseTarget,
    active_inclusion_probabilities,
    answer_win_rate,
    corrected_win_rate_from_counts,
)

# GPT-4 on MT-Bench (turn-matched subset), rounded: P(judge | human) for human a, b, tie.
JUDGE_M = np.array([[0.70, 0.12, 0.18], [0.06, 0.80, 0.14], [0.20, 0.35, 0.45]])
# Active cells: where the judge is sure it errs little, where it flips it errs a lot.
EASY_M = np.array([[0.90, 0.04, 0.06], [0.02, 0.94, 0.04], [0.10, 0.10, 0.80]])
HARD_M = np.array([[0.45, 0.30, 0.25], [0.20, 0.55, 0.25], [0.30, 0.40, 0.30]])
# One-order rows: a position bias toward the answer shown first.
ONE_ORDER_M = np.array([[0.85, 0.05, 0.10], [0.30, 0.60, 0.10], [0.45, 0.25, 0.30]])
CALIBRATION_PI = (0.25, 0.45, 0.30)
SHARES = ("a", "b", "tie")
METHODS = ("auto", "raw")
N_RUN = 1000
PIS = (("balanced", (0.35, 0.35, 0.30)), ("mtbench", (0.10, 0.65, 0.25)),
       ("extreme", (0.05, 0.90, 0.05)))


@dataclass(frozen=True)
class WinCell:
    """One simulation cell: where the labels come from and how they were drawn."""

    design: str  # random, stratified, active, one-order; separate-random, separate-stratified
    name: str
    pi: tuple[float, float, float]
    m: int
    n: int = N_RUN

    def __str__(self) -> str:
        return f"{self.design} {self.name} pi={self.pi} m={self.m} n={self.n}"


def pairwise_cells() -> list[WinCell]:
    """The grid: same run and separate calibration.

    Same run: three queues x three share settings x two label budgets, and one-order rows;
    separate calibration: two queues x three target settings, and a 100-row target.
    """
    cells = [WinCell(design, name, pi, m) for design in ("random", "stratified", "active")
             for name, pi in PIS for m in (100, 300)]
    cells.append(WinCell("one-order", "mtbench", PIS[1][1], 300))
    cells += [WinCell(f"separate-{q}", name, pi, 300) for q in ("random", "stratified")
              for name, pi in PIS]
    cells.append(WinCell("separate-stratified", "pair", PIS[1][1], 300, 100))
    return cells


def _judge(rng: np.random.Generator, human: np.ndarray, m: np.ndarray) -> np.ndarray:
    """One judge verdict per row from ``m[row's human verdict]`` (``m``: (3, 3) or (n, 3, 3))."""
    probs = m[human] if m.ndim == 2 else m[np.arange(human.size), human]
    return (rng.random(human.size)[:, None] > probs.cumsum(axis=1)).sum(axis=1).astype(np.int8)


def _stratified(rng: np.random.Generator, judge: np.ndarray, m: int) -> np.ndarray:
    """Round-robin over the judge's verdicts (the Label page's stratified order), first ``m``."""
    columns = [rng.permutation(np.flatnonzero(judge == v)) for v in range(3)]
    order = [c[k] for k in range(max(c.size for c in columns)) for c in columns if k < c.size]
    return np.asarray(order[:m], dtype=np.int64)


def evidence(human: np.ndarray, judge: np.ndarray, labelled: np.ndarray, selection: str, *,
             one_order: np.ndarray | None = None, share: np.ndarray | None = None,
             rule: str = "all_agree") -> PairwiseEvidence:
    """The evidence the report builds, from simulated rows (codes 0 a, 1 b, 2 tie)."""
    n = labelled.size
    one = np.zeros(judge.size, dtype=bool) if one_order is None else one_order
    rows = PairwiseLabelledRows(
        human=human[labelled].astype(np.int8), outcome=judge[labelled].astype(np.int8),
        flipped=np.zeros(n, dtype=bool), one_order=one[labelled],
        pair=np.zeros(n, dtype=np.int64), document=np.full(n, -1, dtype=np.int64),
        selection=np.full(n, SELECTIONS.index(selection), dtype=np.int8),
        share=np.full(n, np.nan) if share is None else share,
    )
    return PairwiseEvidence(rows, PairwiseRunCounts.from_rows(judge, one_order=one), rule=rule)


def _raw(human: np.ndarray, judge: np.ndarray, labelled: np.ndarray, target: np.ndarray
         ) -> list[tuple[float | None, float | None]]:
    table = np.zeros((3, 3))
    np.add.at(table, (human[labelled], judge[labelled]), 1)
    r = corrected_win_rate_from_counts(table, np.bincount(target, minlength=3))
    if r.refused:
        return [(None, None)] * 3
    return [(e.low, e.high) for e in (r.a, r.b, r.tie)]


def _claims(ev: PairwiseEvidence, target: PairwiseTarget
            ) -> list[tuple[float | None, float | None]]:
    h = answer_win_rate(ev, target, pairs=False).headline
    if not h.claims:
        return [(None, None)] * 3
    return [(e.low, e.high) for e in (h.a, h.b, h.tie)]


def _rep(rng: np.random.Generator, cell: WinCell
         ) -> tuple[np.ndarray, dict[str, list[tuple[float | None, float | None]]]]:
    """One data set: the truth (a, b, tie) and each method's intervals."""
    pi = np.asarray(cell.pi)
    if cell.design.startswith("separate"):
        human = rng.choice(3, N_RUN, p=CALIBRATION_PI)
        judge = _judge(rng, human, JUDGE_M)
        queue = cell.design.removeprefix("separate-")
        lab = (rng.choice(N_RUN, cell.m, replace=False) if queue == "random"
               else _stratified(rng, judge, cell.m))
        ev = evidence(human, judge, lab, "random" if queue == "random" else "by_verdict")
        t_human = rng.choice(3, cell.n, p=pi)
        t_judge = _judge(rng, t_human, JUDGE_M)
        truth = np.bincount(t_human, minlength=3) / cell.n
        target = PairwiseTarget(PairwiseRunCounts.from_rows(t_judge))
        return truth, {"auto": _claims(ev, target), "raw": _raw(human, judge, lab, t_judge)}
    human = rng.choice(3, cell.n, p=pi)
    one = None
    share = None
    if cell.design == "active":
        hard = rng.random(cell.n) < 0.3
        judge = _judge(rng, human, np.where(hard[:, None, None], HARD_M, EASY_M))
        flips = np.where(hard, rng.uniform(0.2, 0.5, cell.n), rng.uniform(0.0, 0.05, cell.n))
        probability = active_inclusion_probabilities(2 * flips, budget=cell.m)
        lab = np.flatnonzero(rng.random(cell.n) < probability)
        share = probability[lab] / probability.sum()
        selection = "active"
    elif cell.design == "one-order":
        one = rng.random(cell.n) < 0.1
        judge = _judge(rng, human, np.where(one[:, None, None], ONE_ORDER_M, JUDGE_M))
        lab = _stratified(rng, judge, cell.m)
        selection = "by_verdict"
    else:
        judge = _judge(rng, human, JUDGE_M)
        lab = (rng.choice(cell.n, cell.m, replace=False) if cell.design == "random"
               else _stratified(rng, judge, cell.m))
        selection = "random" if cell.design == "random" else "by_verdict"
    ev = evidence(human, judge, lab, selection, one_order=one, share=share)
    truth = np.bincount(human, minlength=3) / cell.n
    return truth, {"auto": _claims(ev, PairwiseTarget(ev.population, same_run=True)),
                   "raw": _raw(human, judge, lab, judge)}


@dataclass
class _Tally:
    claims: int = 0
    covered: int = 0
    width: float = 0.0


def run_pairwise_cell(
    job: tuple[int, WinCell, int, int],
) -> tuple[WinCell, dict[tuple[str, str], _Tally], int]:
    """Simulate one cell; tallies per (method, share) and the number of replicates."""
    index, cell, reps, seed = job
    rng = np.random.default_rng([seed, 1501, index])
    tallies = {(m, s): _Tally() for m in METHODS for s in SHARES}
    for _ in range(reps):
        truth, intervals = _rep(rng, cell)
        for method, bounds in intervals.items():
            for k, (low, high) in enumerate(bounds):
                if low is None or high is None:
                    continue
                t = tallies[(method, SHARES[k])]
                t.claims += 1
                t.covered += int(low - 1e-12 <= truth[k] <= high + 1e-12)
                t.width += high - low
    return cell, tallies, reps


def pairwise_block(*, reps: int, seed: int, workers: int) -> tuple[list[str], list[str]]:
    """Run the block; return the printed lines and the bars not met."""
    t0 = time.perf_counter()
    results = run_cells(run_pairwise_cell, pairwise_cells(), reps=reps, seed=seed, workers=workers)
    lines = [
        f"Corrected pairwise shares (a / b / tie), nominal 95 %: seed {seed}, {reps} replicates "
        "per cell",
        f"judge M (rows human a, b, tie) = {JUDGE_M.tolist()}; separate calibration run shares "
        f"{list(CALIBRATION_PI)}; auto = judges.calibration.answer_win_rate (the report's path), "
        "raw = the raw 3 x 3 table (previous release)",
        f"Monte Carlo SE of a 0.95 coverage: {(0.95 * 0.05 / reps) ** 0.5:.3f}",
    ]
    head = (f"{'design':19} {'shares':8} {'m':>4} {'n':>5} | "
            + " | ".join(f"{m + ' ' + s:^18}" for m in METHODS for s in SHARES))
    lines += ["", head, "-" * len(head)]
    failures: list[str] = []
    for cell, tallies, n_reps in results:
        parts = []
        for method in METHODS:
            for share in SHARES:
                t = tallies[(method, share)]
                if not t.claims:
                    parts.append(f"{'no claim':^18}")
                    continue
                cov = t.covered / t.claims
                flag = "!" if cov < 0.94 else " "
                if cov < 0.94 and method == "auto":
                    failures.append(f"{cell}: {method} {share} coverage {cov:.3f} < 0.94")
                nc = 100 * (n_reps - t.claims) / n_reps
                parts.append(f"{cov:.3f}{flag}{t.width / t.claims:.3f} {nc:3.0f}%")
        lines.append(f"{cell.design:19} {cell.name:8} {cell.m:4d} {cell.n:5d} | "
                     + " | ".join(parts))
    lines.append("each entry: coverage, '!' if < 0.94, mean width, share with no claim; bar on "
                 "auto")
    lines.append(f"pairwise block: {time.perf_counter() - t0:.1f} s")
    return closed(lines, failures, not_met="BARS NOT MET:",
                  met="all bars met (auto coverage >= 0.94 for every share)")
