"""The selective-judging block of ``bench/coverage.py`` (``--block selective``).

Usage::

    python bench/coverage.py --block selective [--selective-reps N] [--seed S] [--workers W]

Does the judge that abstains keep its promise? Each replicate simulates a 2,000-row run: the
truth (pass rate 0.7), a share of *hard* rows, and a judge called 6 times per row (3 repeats x
2 orders) aggregated by majority (ties: unsure). Per row the judge's verdict is right with
probability ``q_easy`` or ``q_hard``; each call then flips that verdict with a noise level that
either **marks** the row's difficulty (0.03 on easy rows, 0.30 on hard ones: flips mark errors)
or is drawn independently of it (flips say nothing). ``m`` rows of the run are labelled at
random (or, in the ``by verdict`` cells, half among judge-pass and half among judge-fail rows).
The confidence score is :func:`judges.calibration.confidence_score` of the calls' agreement,
and the rule :func:`judges.calibration.learn_then_test` with alpha = 0.1, delta = 0.1, as
``calibrate judge select`` takes it: a threshold per judge verdict (the strata of the labels'
design; delta split over them); ``LTT-1`` is one threshold for every row, the pooled test
(``--one-threshold``, random labels only).

Per cell (at least 1,000 replicates, common random numbers across the rules):

* ``P(err<=a)``: share of replicates whose true error among the run's accepted rows is at most
  alpha (a replicate that accepts nothing keeps the promise), with its Monte Carlo SE; the bar
  is 1 - delta = 0.90 (within 2 SE);
* ``share``: mean accepted share of the run;
* the pooled rule ``LTT-1`` and two naive rules beside it: **unanimous** (accept a row when
  all 6 calls agree, the usual confidence threshold) and **plug-in** (the lowest threshold
  whose error on the labelled rows is at most alpha, no finite-sample correction), each with
  its ``P(err<=a)`` and share.

The cascade rows: judge A (the cell's judge) -> judge B (stronger: q_easy 0.98, q_hard 0.85,
independent calls) -> experts, each stage certified on the labelled rows that reach it; the
experts label up to 150 escalated rows at random (beyond the calibration labels); the whole run's
pass rate over the cascade's cells (settled or escalated, within each design stratum;
:func:`judges.calibration.cascade_pass_rate`, the estimate of ``calibrate judge cascade``) and
its nominal-95 % interval's coverage of the run's true pass rate; bar >= 0.94 where it claims.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from coverage_answer import evidence
from coverage_stat import Stat, run_cells, verdict_lines

from judges.calibration import (
    cascade_cells,
    cascade_pass_rate,
    confidence_score,
    evidence_strata,
    learn_then_test,
)

N, THETA, ALPHA, DELTA, CALLS = 2000, 0.7, 0.1, 0.1, 6
EXPERT_BUDGET = 150


@dataclass(frozen=True)
class Cell:
    judge: str  # "good" or "weak"
    hard: float
    flips_mark: bool
    m: int
    design: str = "random"  # or "by verdict"


QUALITY = {"good": (0.97, 0.65), "weak": (0.90, 0.55)}
STRONG = (0.98, 0.85)


def _cells() -> list[Cell]:
    cells = [Cell(j, h, f, m) for j in ("good", "weak") for h in (0.2, 0.5)
             for f in (True, False) for m in (200, 500)]
    cells += [Cell(j, 0.2, True, m, "by verdict") for j in ("good", "weak") for m in (200, 500)]
    return cells


def _judge(rng: np.random.Generator, y: np.ndarray, hard: np.ndarray, quality: tuple[float,
           float], flips_mark: bool) -> tuple[np.ndarray, np.ndarray]:
    """Verdict codes (1 pass, 0 fail, -1 unsure) and the agreement score of 6 calls per row."""
    q = np.where(hard, quality[1], quality[0])
    right = rng.uniform(size=y.size) < q
    row = np.where(right, y, 1 - y)
    noisy = hard if flips_mark else rng.uniform(size=y.size) < hard.mean()
    f = np.where(noisy, 0.30, 0.03)
    calls = np.where(rng.uniform(size=(y.size, CALLS)) < f[:, None], 1 - row[:, None],
                     row[:, None])
    passes = calls.sum(axis=1)
    verdict = np.where(passes * 2 > CALLS, 1, np.where(passes * 2 < CALLS, 0, -1))
    agreeing = np.where(verdict == 1, passes, np.where(verdict == 0, CALLS - passes, 0))
    score = confidence_score(agreeing=agreeing, scored=np.full(y.size, CALLS))
    score[verdict < 0] = np.nan
    return verdict, score


def _labels(rng: np.random.Generator, verdict: np.ndarray, m: int, design: str) -> np.ndarray:
    if design == "random":
        return rng.choice(verdict.size, m, replace=False)
    parts = []
    for v in (1, 0):
        pool = np.flatnonzero(verdict == v)
        parts.append(rng.choice(pool, min(m // 2, pool.size), replace=False))
    return np.concatenate(parts)


def _error(accepted: np.ndarray, verdict: np.ndarray, y: np.ndarray) -> float:
    return float((verdict[accepted] != y[accepted]).mean()) if accepted.any() else 0.0


def _plug_in(score: np.ndarray, wrong: np.ndarray, pop: np.ndarray) -> np.ndarray:
    """The lowest threshold whose error on the labelled rows is at most alpha (no correction)."""
    best = None
    for t in np.unique(pop[np.isfinite(pop)])[::-1]:
        acc = np.isfinite(score) & (score >= t)
        if acc.any() and wrong[acc].mean() <= ALPHA:
            best = t
    return np.isfinite(pop) & (pop >= best) if best is not None else np.zeros(pop.size, bool)


@dataclass
class Rule:
    kept: int = 0
    share: float = 0.0
    reps: int = 0

    def add(self, accepted: np.ndarray, verdict: np.ndarray, y: np.ndarray) -> None:
        self.reps += 1
        self.kept += int(_error(accepted, verdict, y) <= ALPHA)
        self.share += float(accepted.mean())

    def text(self) -> str:
        p = self.kept / self.reps
        return f"{p:.3f} {self.share / self.reps:6.1%}"


def _run_cell(args: tuple[int, Cell, int, int]) -> tuple[Cell, dict[str, Rule], Stat]:
    index, cell, reps, seed = args
    rng = np.random.default_rng([seed, 30, index])
    rules = {name: Rule() for name in ("ltt", "ltt-1", "unanimous", "plug-in")}
    whole = Stat()
    for _ in range(reps):
        y = (rng.uniform(size=N) < THETA).astype(np.int8)
        hard = rng.uniform(size=N) < cell.hard
        verdict, score = _judge(rng, y, hard, QUALITY[cell.judge], cell.flips_mark)
        lab = _labels(rng, verdict, cell.m, cell.design)
        sel = "random" if cell.design == "random" else "by_verdict"
        ev = evidence(y, lab, verdict, selection=sel)
        strata = evidence_strata(ev, same_run=True)
        pop_strata = strata.assign(np.select([verdict == 1, verdict == 0], [0, 1], 2))
        judged = verdict[lab] >= 0
        wrong = verdict[lab] != y[lab]
        rule = learn_then_test(
            score[lab][judged], wrong[judged], population_score=score, alpha=ALPHA,
            delta=DELTA, strata=strata.of_labelled[judged], population_strata=pop_strata,
            strata_names=strata.counts.names)
        acc_a = rule.accepts(score, pop_strata)
        rules["ltt"].add(acc_a, verdict, y)
        if cell.design == "random":
            pooled = learn_then_test(score[lab][judged], wrong[judged], population_score=score,
                                     alpha=ALPHA, delta=DELTA)
            rules["ltt-1"].add(pooled.accepts(score), verdict, y)
        rules["unanimous"].add(np.isfinite(score) & (score >= (CALLS + 1) / (CALLS + 2)),
                               verdict, y)
        rules["plug-in"].add(_plug_in(score[lab][judged], wrong[judged], score), verdict, y)
        # The cascade: judge B on the rows A abstains on, then experts.
        verdict_b, score_b = _judge(rng, y, hard, STRONG, cell.flips_mark)
        reach = ~acc_a
        reach_lab = reach[lab] & (verdict_b[lab] >= 0)
        pop_b = np.where(reach, score_b, np.nan)
        # Judge B's thresholds: per its own verdict (random labels), crossed with the design's
        # strata (labels drawn by A's verdict), as calibrate judge cascade does.
        own = np.select([verdict_b == 1, verdict_b == 0], [0, 1], 2)
        codes = own if cell.design == "random" else pop_strata * 3 + own
        rule_b = learn_then_test(
            score_b[lab][reach_lab], (verdict_b[lab] != y[lab])[reach_lab], population_score=pop_b,
            alpha=ALPHA, delta=DELTA, strata=codes[lab][reach_lab], population_strata=codes)
        acc_b = reach & rule_b.accepts(score_b, codes)
        stage = np.where(acc_a, 0, np.where(acc_b, 1, 2))
        escalated = np.flatnonzero((stage == 2) & ~np.isin(np.arange(N), lab))
        extra = rng.choice(escalated, min(EXPERT_BUDGET, escalated.size), replace=False)
        all_lab = np.concatenate([lab, extra])
        cells = cascade_cells(stage, pop_strata, all_lab, y[all_lab], stage_names=("A", "B"),
                              stratum_names=strata.counts.names,
                              stratum_outcomes=strata.counts.outcomes)
        est = cascade_pass_rate(cells)
        truth = float(y.mean())
        whole.add(*((est.low, est.high) if est.claims else (None, None)), truth)
    return cell, rules, whole


def selective_block(*, reps: int, seed: int, workers: int) -> tuple[list[str], bool]:
    """Run the block; its printed lines and whether a bar failed."""
    results = run_cells(_run_cell, _cells(), reps=reps, seed=seed, workers=workers)
    se = (0.9 * 0.1 / reps) ** 0.5
    lines = [
        f"== selective judging: {N}-row runs, pass rate {THETA}, alpha {ALPHA}, delta {DELTA}, "
        f"{reps} replicates per cell (Monte Carlo SE of a 0.90 share: {se:.3f})",
        "judge good: right on 97 % of easy rows, 65 % of hard; weak: 90 % / 55 %; 6 calls a row",
        "each rule: P(error among accepted <= alpha), mean accepted share; cascade: judge A -> B "
        "(98 % / 85 %) -> experts (up to 150 escalated rows), whole-run 95 % interval",
    ]
    head = (f"{'judge':5} {'hard':>4} {'flips':>5} {'m':>4} {'labels':10} | {'LTT':^12} | "
            f"{'LTT-1':^12} | {'unanimous':^12} | {'plug-in':^12} | {'cascade cov':>11} "
            f"{'width':>6} {'nc':>4}")
    lines += [head, "-" * len(head)]
    failures = []
    for cell, rules, whole in results:
        ltt = rules["ltt"]
        p = ltt.kept / ltt.reps
        flag = "!" if p < 0.9 - 2 * se else " "
        if flag == "!":
            failures.append(f"{cell}: LTT kept alpha in {p:.3f} < 0.90 of runs")
        cov = whole.coverage
        cflag = "!" if cov is not None and cov < 0.94 else " "
        if cflag == "!":
            failures.append(f"{cell}: cascade coverage {cov:.3f} < 0.94")
        lines.append(
            f"{cell.judge:5} {cell.hard:4.1f} {'mark' if cell.flips_mark else 'noise':>5} "
            f"{cell.m:4d} {cell.design:10} | {ltt.text()}{flag}| "
            f"{rules['ltt-1'].text() if rules['ltt-1'].reps else '     -      '} | "
            f"{rules['unanimous'].text()} | "
            f"{rules['plug-in'].text()} | "
            f"{'-' if cov is None else f'{cov:.3f}':>10}{cflag} "
            f"{'-' if whole.mean_width is None else f'{whole.mean_width:.3f}':>6} "
            f"{100 * whole.no_claim:3.0f}%")
    lines += verdict_lines(failures, not_met="SELECTIVE BARS NOT MET:",
                           met="selective bars met (LTT keeps alpha in >= 0.90 of runs within 2 "
                               "MC SE; cascade whole-run coverage >= 0.94)")
    return lines, bool(failures)
