"""Labels needed for a +/-0.05 interval on the corrected pass rate: active vs random vs by verdict.

Usage::

    python bench/label_budget.py [--reps N] [--seed S] [--workers W]

For each scenario of the simulation grid and each way of choosing rows to label, it simulates
``N`` runs per labelling budget ``m`` on a grid, computes the whole-run corrected pass rate with
the estimator valid for that selection, and reports the smallest budget whose mean interval
half-width is <= 0.05 (log-linear interpolation between grid points), with the coverage of the
95 % interval at the first grid budget that reaches it:

* ``random``      simple random sample of the run -> verdict-stratified (post-stratified);
* ``by-verdict``  equal numbers per judge verdict (the Label page's order) -> verdict-stratified;
* ``active``      each row drawn with probability tied to the judge's flip rate (floor > 0)
                  -> inverse-probability-weighted (Zrnic & Candes 2024).

Scenarios: 5,000-row runs; "flagged" rows are where the judge's verdict flips across repeats
(flip share 0.2-0.5, against 0-0.05 elsewhere; the signal active sampling uses) and where it errs
more often. The first three concentrate most judge errors in the flagged rows; the fourth spreads
them (30 % flagged rows with a 30 % error rate, 3 % elsewhere); the last has no informative
signal at all. Active sampling gains in proportion to how concentrated the errors are, so the
aim is checked on the first three and the others show what it costs when the signal is weak.

Aim: active needs >= 25 % fewer labels than random at coverage >= 0.94 where the judge's errors
concentrate in the rows it flags.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from coverage_stat import verdict_lines

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from judges.calibration import (
    StratumCounts,
    active_inclusion_probabilities,
    active_pass_rate,
    stratified_run_pass_rate_from_counts,
)

N_ROWS = 5000
GRID = (50, 75, 100, 150, 200, 300, 400, 600, 800, 1200, 1600)
SELECTIONS = ("random", "by-verdict", "active")
HALF_WIDTH = 0.05
AIMS_MET = (
    "aims met: active needs >= 25% fewer labels than random where the judge's errors "
    "concentrate in the rows it flags; coverage >= 0.94 at the budget reached"
)


@dataclass(frozen=True)
class Scenario:
    name: str
    theta: float
    hard_share: float
    hard_error: float
    easy_error: float
    informative: bool = True  # the aim applies (errors concentrated in flagged rows)


SCENARIOS = (
    Scenario("theta 0.6, 15% flagged (err 40%/1.5%)", 0.6, 0.15, 0.40, 0.015),
    Scenario("theta 0.9, 15% flagged (err 40%/1.5%)", 0.9, 0.15, 0.40, 0.015),
    Scenario("theta 0.6, 10% flagged (err 45%/2%)", 0.6, 0.10, 0.45, 0.02),
    Scenario("theta 0.6, 30% flagged (err 30%/3%)", 0.6, 0.3, 0.30, 0.03, informative=False),
    Scenario("theta 0.6, no signal (err 12%)", 0.6, 0.0, 0.12, 0.12, informative=False),
)


def _counts(z: np.ndarray, jl: np.ndarray, jp: np.ndarray) -> StratumCounts:
    s_l, s_p = 1 - jl, 1 - jp  # judge pass -> stratum 0, judge fail -> stratum 1
    pop = np.bincount(s_p, minlength=3)
    lab = np.bincount(s_l, minlength=3)
    k = np.bincount(s_l[z == 1], minlength=3)
    return StratumCounts(
        (int(pop[0]), int(pop[1]), int(pop[2])),
        (int(lab[0]), int(lab[1]), int(lab[2])),
        (int(k[0]), int(k[1]), int(k[2])),
        (0, 0, 0),
    )


def _one(rng: np.random.Generator, sc: Scenario, m: int, selection: str) -> tuple[float, bool]:
    """Half-width of the interval and whether it covers the run's true pass rate."""
    n = N_ROWS
    z = (rng.random(n) < sc.theta).astype(np.int8)
    hard = rng.random(n) < sc.hard_share
    wrong = rng.random(n) < np.where(hard, sc.hard_error, sc.easy_error)
    j = np.where(wrong, 1 - z, z).astype(np.int8)
    if sc.informative:
        flips = np.where(hard, rng.uniform(0.2, 0.5, n), rng.uniform(0.0, 0.05, n))
    else:
        flips = rng.uniform(0.0, 0.5, n)  # a signal unrelated to the judge's errors
    if selection == "active":
        pi = active_inclusion_probabilities(2 * flips, budget=m)
        take = rng.random(n) < pi
        r = active_pass_rate(z[take], j[take], pi[take], j)
    else:
        if selection == "random":
            idx = rng.choice(n, m, replace=False)
        else:
            classes = [np.flatnonzero(j == c) for c in (1, 0)]
            idx = np.concatenate(
                [rng.choice(c, min(c.size, m // 2), replace=False) for c in classes]
            )
        r = stratified_run_pass_rate_from_counts(_counts(z[idx], j[idx], j))
    if r.low is None or r.high is None:
        return math.inf, False
    return (r.high - r.low) / 2.0, r.low <= float(z.mean()) <= r.high


def _cell(args: tuple[int, Scenario, str, int, int]) -> tuple[str, str, list[tuple[float, float]]]:
    index, sc, selection, reps, seed = args
    rng = np.random.default_rng([seed, index])
    rows = []
    for m in GRID:
        hw, cov = zip(*(_one(rng, sc, m, selection) for _ in range(reps)), strict=True)
        rows.append((float(np.mean(hw)), float(np.mean(cov))))
    return sc.name, selection, rows


def _needed(rows: list[tuple[float, float]]) -> tuple[float | None, float | None, int | None]:
    """Budget reaching the half-width (log-linear interpolation), coverage at the grid point."""
    for i, (hw, cov) in enumerate(rows):
        if hw <= HALF_WIDTH:
            if i == 0:
                return float(GRID[0]), cov, GRID[0]
            h0, h1 = rows[i - 1][0], hw
            x0, x1 = math.log(GRID[i - 1]), math.log(GRID[i])
            frac = (math.log(h0) - math.log(HALF_WIDTH)) / (math.log(h0) - math.log(h1))
            return math.exp(x0 + frac * (x1 - x0)), cov, GRID[i]
    return None, None, None


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=400, help="replicates per budget")
    parser.add_argument("--seed", type=int, default=20251201)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ns = parser.parse_args()
    t0 = time.perf_counter()
    pairs = [(s, x) for s in SCENARIOS for x in SELECTIONS]
    jobs = [(i, sc, sel, ns.reps, ns.seed) for i, (sc, sel) in enumerate(pairs)]
    with ProcessPoolExecutor(max_workers=ns.workers) as pool:
        results = list(pool.map(_cell, jobs))
    table = {(name, sel): rows for name, sel, rows in results}
    print(f"Labels needed for a +/-{HALF_WIDTH} (95%) interval on the whole-run corrected pass "
          f"rate; {N_ROWS:,}-row runs, {ns.reps} replicates per budget, seed {ns.seed}")
    print(f"budget grid {list(GRID)}; 'needed' interpolated log-linearly; coverage (Monte Carlo "
          f"SE {(0.95 * 0.05 / ns.reps) ** 0.5:.3f}) at the first grid budget that reaches it")
    head = (f"{'scenario':38} | " + " | ".join(f"{s:^19}" for s in SELECTIONS)
            + " | active vs random")  # fmt: skip
    print()
    print(head)
    print(f"{'':38} | " + " | ".join(f"{'needed  cov @ m':^19}" for _ in SELECTIONS) + " |")
    print("-" * len(head))
    failures = []
    for sc in SCENARIOS:
        parts, needed = [], {}
        for sel in SELECTIONS:
            n_needed, cov, at = _needed(table[(sc.name, sel)])
            needed[sel] = n_needed
            if n_needed is None or cov is None:
                parts.append(f"{'> ' + str(GRID[-1]):>19}")
                continue
            parts.append(f"{n_needed:6.0f}  {cov:.3f} @{at:4d}")
            if cov < 0.94:
                failures.append(f"{sc.name} {sel}: coverage {cov:.3f} at m={at}")
        saving = "      -"
        if needed["active"] and needed["random"]:
            s = 1.0 - needed["active"] / needed["random"]
            saving = f"{100 * s:5.0f}% fewer"
            if sc.informative and s < 0.25:
                failures.append(f"{sc.name}: active saves {100 * s:.0f}% < 25%")
        print(f"{sc.name:38} | " + " | ".join(parts) + f" | {saving}")
    print()
    print(f"benchmark wall time: {time.perf_counter() - t0:.0f} s on {ns.workers} workers")
    print("\n".join(verdict_lines(failures, not_met="AIMS NOT MET:", met=AIMS_MET)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
