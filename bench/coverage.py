"""Coverage benchmark of the pass-rate intervals (a script, not a test).

Usage::

    python bench/coverage.py [--reps N] [--judgy-reps J] [--judgy-iterations B] [--seed S]
                             [--block all|pass-rate|designs|transfer|paired|pairwise|
                                      workflows|selective]
                             [--design-reps D] [--transfer-reps T] [--paired-reps R]
                             [--pairwise-reps P] [--selective-reps S]

``all`` (the default) prints the whole table: the pass-rate grid below, then the labelling-design
blocks (``designs``, see ``bench/coverage_designs.py``: verdict-stratified calibration with and
without label shift, same run with 10 %/20 % judge-unsure rows, labels drawn as whole documents
with a document effect, active sampling, a forced ``--design`` override, kappa at small n), the
segment-mix transfer block (``transfer``, see ``bench/coverage_transfer.py``: the plain Lee
correction against the segment-aware one when the judge's accuracy differs by segment and the
target's segment mix differs from the labelled set's) and the paired-difference block
(``paired``, see ``bench/coverage_paired.py``), the corrected pairwise shares block (a / b /
tie through the real pairwise path under the random, stratified and active queues and a separate
calibration run; ``pairwise``, see ``bench/coverage_pairwise.py``) and the selective-judging
block (``selective``, see ``bench/coverage_selective.py``: the error among accepted verdicts of
Learn then Test against naive thresholds, and the cascade's whole-run interval).
Each block prints its Monte Carlo SE and its bars; ``--block NAME`` runs one block.

For every cell it simulates ``N`` seeded data sets (the same data sets for every method:
common random numbers) and reports, for the nominal-95 % interval of each method:

* ``cov``   empirical coverage of the true pass rate, over the intervals that make a claim
            (refused or "uninformative" results make no claim);
* ``width`` mean width of those intervals;
* ``nc``    share of data sets with no claim (refused or flagged uninformative).

Methods: ``naive`` (Wilson on the judge pass rate), ``lee`` (Lee et al. 2025 with guards),
``ppi++`` (tuned lambda), ``judgy`` (the PyPI package, if installed; slow, so fewer replicates
and fewer bootstrap iterations, as printed) and ``auto`` (the headline of
:func:`judges.calibration.answer_pass_rate` on evidence built from the simulated rows, the path
every surface uses; ``bench/coverage_answer.py``).

Grid: true pass rate {0.3, 0.6, 0.9} x labelled rows {50, 200}, n = 1000 judge-only rows
(same-run cells: m + 1000 rows simulated, m of them labelled, and the truth is that run's own
pass rate, the app's estimand),
sensitivity 0.85 / specificity 0.75; a label-shift block (labelled rows from another run with
pass rate 0.7); a degenerate judge (0.55 / 0.50). Finally the time of one full report on
1,000,000 target verdicts + 10,000 labels.

Bars: coverage >= 0.94 wherever a method is claimed valid; ``auto``'s mean width <= 1.05x the
narrowest method covering >= 0.93 in the cell; degenerate judge -> no confident wrong interval;
report <= 2 s.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The project root; this folder (the sibling coverage_* modules) is on sys.path as the script's.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coverage_answer import auto, evidence
from coverage_designs import designs_block
from coverage_paired import paired_block
from coverage_pairwise import pairwise_block
from coverage_selective import selective_block
from coverage_stat import Stat, verdict_lines
from coverage_transfer import transfer_block
from coverage_workflows import workflows_block

from judges.calibration import (
    PassRateEstimate,
    RunCounts,
    TargetRun,
    answer_pass_rate,
    calibration_counts,
    counts_to_arrays,
    estimate_pass_rate,
    simulate_counts,
    simulate_verdicts,
)

SENS, SPEC = 0.85, 0.75
N_TARGET = 1000
THETAS = (0.3, 0.6, 0.9)
LABELLED = (50, 200)
METHODS = ("naive", "lee", "ppi++", "judgy", "auto")
BARS_MET = (
    "all bars met (lee and auto coverage >= 0.94 where claimed; auto width <= 1.05x; "
    "degenerate judge: no confident wrong interval; report <= 2 s)"
)


@dataclass(frozen=True)
class Cell:
    block: str
    theta: float
    m: int
    sens: float
    spec: float
    calibration_theta: float | None
    design: str
    valid: tuple[str, ...]  # methods this project claims valid in this cell
    reference_valid: tuple[str, ...] = ()  # valid by their own literature (asymptotically)


def _claim(r: PassRateEstimate) -> tuple[float | None, float | None]:
    return (r.low, r.high) if r.claims else (None, None)


def _cells() -> list[Cell]:
    cells = []
    for t in THETAS:
        for m in LABELLED:
            cells.append(Cell("same run", t, m, SENS, SPEC, None, "same_run_random",
                              ("lee", "auto"), ("ppi++",)))
    for t in THETAS:
        for m in LABELLED:
            cells.append(Cell("label shift", t, m, SENS, SPEC, 0.7, "separate_calibration",
                              ("lee", "auto")))
    for t in THETAS:
        for m in LABELLED:
            cells.append(Cell("degenerate", t, m, 0.55, 0.50, None, "separate_calibration",
                              (), ("ppi++",)))
    return cells


def _run_cell(args: tuple[int, Cell, int, int, int, int]) -> tuple[Cell, dict[str, Stat], Stat]:
    index, cell, reps, judgy_reps, judgy_iterations, seed = args
    rng = np.random.default_rng([seed, index])
    stats = {m: Stat() for m in METHODS}
    same_run_auto = Stat()  # degenerate block: what auto does if the labels are same-run
    judgy: Callable[..., tuple[float, float, float]] | None = None
    if judgy_reps > 0:
        try:
            from judgy import estimate_success_rate as judgy  # type: ignore[no-redef]
        except ImportError:
            judgy = None
    np.random.seed((seed * 1000 + index) % 2**32)  # judgy uses numpy's global RNG
    for rep in range(reps):
        truth = cell.theta
        if cell.design == "same_run_random":
            # The labelled rows are rows of the run, and what the app estimates is that run's
            # pass rate (with a finite-population correction): simulate its rows and take
            # their own pass rate as the truth for every method.
            z, jr = simulate_verdicts(rng, n=N_TARGET + cell.m, theta=cell.theta,
                                      sensitivity=cell.sens, specificity=cell.spec)
            h, j, t = z[:cell.m], jr[:cell.m], jr[cell.m:]
            c = calibration_counts(h, j, t)
            truth = float(z.mean())
            ev = evidence(z, np.arange(cell.m), jr, selection="random")
            stats["auto"].add(*auto(ev), truth)
        else:  # a separate calibration set, every row of it labelled
            c = simulate_counts(
                rng, theta=cell.theta, sensitivity=cell.sens, specificity=cell.spec,
                n_target=N_TARGET, n_labelled=cell.m, calibration_theta=cell.calibration_theta,
            )
            h, j, t = counts_to_arrays(c)
            stats["auto"].add(*auto(evidence(h, np.arange(h.size), j, selection="all"), t),
                              truth)
        for method in ("naive", "lee", "ppi++"):
            stats[method].add(*_claim(estimate_pass_rate(c, method=method)), truth)
        if cell.block == "degenerate":  # the same judge with labels of the run itself
            z, jr = simulate_verdicts(rng, n=N_TARGET + cell.m, theta=cell.theta,
                                      sensitivity=cell.sens, specificity=cell.spec)
            ev = evidence(z, np.arange(cell.m), jr, selection="random")
            same_run_auto.add(*auto(ev), float(z.mean()))
        if judgy is not None and rep < judgy_reps:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _, lo, hi = judgy(h, j, t, bootstrap_iterations=judgy_iterations)
                stats["judgy"].add(lo, hi, truth)
            except (ValueError, RuntimeError):  # judgy refuses J <= 0 or one class
                stats["judgy"].add(None, None, truth)
    return cell, stats, same_run_auto


def _mc_note(s: Stat) -> str:
    """Monte Carlo standard error of a coverage, and whether 0.95 is within 2 SE of it."""
    if s.coverage is None or s.claims == 0:
        return "no claims"
    se = (0.95 * 0.05 / s.claims) ** 0.5
    within = s.coverage >= 0.95 - 2 * se
    return (f"Monte Carlo SE {se:.3f}; "
            + ("within 2 SE of 0.95" if within else "significantly below 0.95"))


def _fmt(s: Stat, flag: str = "") -> str:
    if s.reps == 0:
        return f"{'n/a':>21}"
    cov = "  -  " if s.coverage is None else f"{s.coverage:.3f}"
    wid = "  -  " if s.mean_width is None else f"{s.mean_width:.3f}"
    return f"{cov}{flag:1} {wid} {100 * s.no_claim:3.0f}%"


def _report_time() -> float:
    """Seconds of one answer on 1,000,000 target rows and 10,000 labels (segments, documents)."""
    rng = np.random.default_rng(0)
    z, jl = simulate_verdicts(rng, n=1_000_000, theta=0.6, sensitivity=SENS, specificity=SPEC)
    _, jt = simulate_verdicts(rng, n=1_000_000, theta=0.6, sensitivity=SENS, specificity=SPEC)
    seg = rng.choice(np.array(["en", "de", "fr", "es"]), size=1_000_000)
    docs = rng.integers(0, 300_000, size=1_000_000)
    lab = rng.choice(1_000_000, 10_000, replace=False)
    ev = evidence(z, lab, jl, selection="random", segments=seg, documents=docs)
    target = TargetRun(RunCounts.from_rows(np.where(jt == 1, 0, 1).astype(np.int8),
                                           segment=rng.choice(seg, size=jt.size)))
    answer_pass_rate(ev, target)  # warm-up: one-off imports are not timed
    t0 = time.perf_counter()
    answer_pass_rate(ev, target)
    return time.perf_counter() - t0


# The blocks beside the pass-rate one: the option naming its replicates, their default, what
# the option's help says they are of, and the block's function.
_BLOCKS: dict[str, tuple[str, int, str, Callable[..., tuple[list[str], list[str]]]]] = {
    "designs": ("design", 1000, "the labelling-design blocks (>= 1000)", designs_block),
    "transfer": ("transfer", 1000, "the segment-mix transfer block", transfer_block),
    "paired": ("paired", 2000, "the paired-difference block", paired_block),
    "pairwise": ("pairwise", 1000, "the pairwise win-rate block", pairwise_block),
    "workflows": ("workflow", 1000, "the workflow block (>= 1000)", workflows_block),
    "selective": ("selective", 1000, "the selective-judging block (>= 1000)", selective_block),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500, help="replicates per cell (>= 500)")
    parser.add_argument("--judgy-reps", type=int, default=300,
                        help="replicates per cell for judgy (slow); 0 to skip")
    parser.add_argument("--judgy-iterations", type=int, default=2000,
                        help="judgy bootstrap_iterations (package default 20000)")
    parser.add_argument("--seed", type=int, default=20251121)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--block", default="all", choices=("all", "pass-rate", *_BLOCKS),
                        help="which blocks to run (default: all of them)")
    for option, default, what, _ in _BLOCKS.values():
        parser.add_argument(f"--{option}-reps", type=int, default=default,
                            help=f"replicates per cell of {what}")
    ns = parser.parse_args()
    others = {
        name: functools.partial(run, reps=getattr(ns, f"{option}_reps"), seed=ns.seed,
                                workers=ns.workers)
        for name, (option, _, _, run) in _BLOCKS.items()
    }
    if ns.block in others:
        lines, failed = others[ns.block]()
        print("\n".join(lines))
        return 1 if failed and ns.block in ("pairwise", "workflows", "selective") else 0
    t_start = time.perf_counter()
    try:
        import judgy  # noqa: F401

        have_judgy = ns.judgy_reps > 0
    except ImportError:
        have_judgy = False
    judgy_reps = min(ns.judgy_reps, ns.reps) if have_judgy else 0

    cells = _cells()
    jobs = [(i, c, ns.reps, judgy_reps, ns.judgy_iterations, ns.seed)
            for i, c in enumerate(cells)]
    with ProcessPoolExecutor(max_workers=ns.workers) as pool:
        results = list(pool.map(_run_cell, jobs))

    print(f"Coverage of nominal-95% intervals: n={N_TARGET} judge-only rows, seed {ns.seed}, "
          f"{ns.reps} replicates per cell (common random numbers across methods)")
    if have_judgy:
        print(f"judgy: {judgy_reps} replicates per cell, bootstrap_iterations="
              f"{ns.judgy_iterations} (package default 20000; ~1 s per call at the default)")
    else:
        print("judgy: not installed or skipped")
    print("each method: coverage (of claimed intervals), mean width, share with no claim "
          "(refused/uninformative)")
    print("'!' = claimed valid by this project here but coverage < 0.94; '~' = valid by its own "
          "(asymptotic) theory here but coverage < 0.94")
    print("ratio = auto's mean width / the narrowest method covering >= 0.93 in the cell")
    print(f"Monte Carlo SE of a 0.95 coverage: {(0.95 * 0.05 / ns.reps) ** 0.5:.3f} at "
          f"{ns.reps} replicates"
          + (f", {(0.95 * 0.05 / judgy_reps) ** 0.5:.3f} at judgy's {judgy_reps}"
             if judgy_reps else ""))
    head = (f"{'block':12} {'theta':>5} {'m':>4} | " + " | ".join(f"{m:^21}" for m in METHODS)
            + " | auto =     | ratio")
    failures: list[str] = []
    notes: list[str] = []
    block = None
    for cell, stats, same_run_auto in results:
        if cell.block != block:
            block = cell.block
            sens_spec = f"sensitivity {cell.sens} / specificity {cell.spec}"
            shift = (f", labelled rows from another run at pass rate {cell.calibration_theta}"
                     if cell.calibration_theta else ", labelled rows a random sample of the run")
            print()
            print(f"== {block}: {sens_spec}{shift}; auto design = {cell.design}")
            print(head)
            print("-" * len(head))
        parts = []
        for m in METHODS:
            s = stats[m]
            low_cov = s.coverage is not None and s.coverage < 0.94
            flag = ""
            if low_cov and m in cell.valid:
                flag = "!"
                failures.append(f"{cell.block} theta={cell.theta} m={cell.m}: {m} coverage "
                                f"{s.coverage:.3f} < 0.94 ({_mc_note(s)})")
            elif low_cov and m in cell.reference_valid:
                flag = "~"
                notes.append(f"{cell.block} theta={cell.theta} m={cell.m}: {m} coverage "
                             f"{s.coverage:.3f} < 0.94 ({_mc_note(s)}; not used by auto)")
            parts.append(_fmt(s, flag))
        auto_method = ("same run" if cell.design == "same_run_random" else "separate")
        covering = [stats[m].mean_width for m in METHODS
                    if stats[m].coverage is not None and stats[m].coverage >= 0.93
                    and stats[m].mean_width is not None]
        ratio = "    -"
        if stats["auto"].mean_width is not None and covering and cell.block != "degenerate":
            r = stats["auto"].mean_width / min(covering)
            ratio = f"{r:5.2f}"
            if r > 1.05:
                failures.append(f"{cell.block} theta={cell.theta} m={cell.m}: auto width "
                                f"{r:.2f}x the narrowest covering method")
        print(f"{cell.block:12} {cell.theta:5.1f} {cell.m:4d} | " + " | ".join(parts)
              + f" | {auto_method:10} | {ratio}")
        if cell.block == "degenerate":
            for name, s in (("lee", stats["lee"]), ("auto", stats["auto"])):
                if s.wrong > 0.01:
                    failures.append(f"degenerate theta={cell.theta} m={cell.m}: {name} "
                                    f"confidently wrong in {100 * s.wrong:.1f}% of data sets")
            if same_run_auto.coverage is not None and same_run_auto.coverage < 0.94:
                failures.append(f"degenerate theta={cell.theta} m={cell.m}: auto (same-run) "
                                f"coverage {same_run_auto.coverage:.3f}")
    print()
    print("degenerate judge, per cell: share of data sets with a confident wrong interval "
          "(claimed, misses the truth) and what auto does if the labels are a same-run sample")
    for cell, stats, same_run_auto in results:
        if cell.block != "degenerate":
            continue
        print(f"  theta={cell.theta} m={cell.m:3d}: wrong lee {100 * stats['lee'].wrong:4.1f}%"
              f"  auto(separate) {100 * stats['auto'].wrong:4.1f}%"
              f"  naive {100 * stats['naive'].wrong:5.1f}%  ppi++ "
              f"{100 * stats['ppi++'].wrong:4.1f}%  | auto(same-run: stratified) "
              f"{_fmt(same_run_auto)}")
    elapsed_report = _report_time()
    print()
    print(f"one answer (answer_pass_rate: transfer check over 4 segments, per-segment answers, "
          f"document design effect) on 1,000,000 target rows + 10,000 labels of a 1,000,000-row "
          f"calibration run: {elapsed_report:.2f} s (after a warm-up call)")
    if elapsed_report > 2.0:
        failures.append(f"report took {elapsed_report:.2f} s > 2 s")
    print(f"benchmark wall time: {time.perf_counter() - t_start:.0f} s on {ns.workers} workers")
    print()
    if notes:
        print("reference methods below 0.94 where their theory says valid:")
        for n in notes:
            print(f"  - {n}")
    print("\n".join(verdict_lines(failures, not_met="BARS NOT MET:", met=BARS_MET)))
    if ns.block == "all":
        for run in others.values():
            print()
            lines, _ = run()
            print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
